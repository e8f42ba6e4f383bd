// libdiescope-nvtx.so (docs/agent.md#nvtx-in-captures): NVTX's loader calls InitializeInjectionNvtx2
// when a program that names this library in NVTX_INJECTION64_PATH makes its first NVTX call. The
// library then takes NVTX's range functions (push, pop, start, end, and their domain forms) and writes
// each call's time, thread and name into the process's ring, <dir>/<pid>.ring (the layout:
// include/diescope/agent/nvtx_ring.hpp). A call costs two atomic operations, one clock read and a copy
// of at most 31 bytes; nothing else: no CUPTI, no counters, no lock, no allocation after the first.
// Nothing here may throw or print into someone else's process: a ring that cannot be made leaves the
// calls doing nothing.
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <cwchar>

#include <nvtx3/nvToolsExt.h>

#include "diescope/agent/nvtx_ring.hpp"

namespace {

namespace ring = diescope::agent::nvtx_ring;

// The ring of this process: null until the first event, and again in a forked child until its first.
std::atomic<ring::Header*> g_ring{nullptr};
std::atomic<int> g_opening{0};  // 1 while one thread makes the ring
std::atomic<bool> g_failed{false};
std::atomic<std::uint64_t> g_next_id{1};
char g_path[4096] = {};

thread_local std::uint32_t t_tid = 0;
thread_local int t_depth = 0;

std::uint32_t this_tid() {
  if (t_tid == 0) t_tid = static_cast<std::uint32_t>(::syscall(SYS_gettid));
  return t_tid;
}

void unlink_ring() {
  if (g_path[0] != '\0') ::unlink(g_path);
}

ring::Header* make_ring() {
  const char* dir = std::getenv(ring::kDirVariable);
  if (dir == nullptr || dir[0] == '\0') dir = ring::kDefaultDir;
  // The folder is shared by every user's programs, as /tmp is: sticky, writable by all.
  if (::mkdir(dir, 01777) == 0) ::chmod(dir, 01777);
  const int pid = static_cast<int>(::getpid());
  char path[sizeof g_path];
  if (std::snprintf(path, sizeof path, "%s/%d.ring", dir, pid) >= static_cast<int>(sizeof path))
    return nullptr;
  const int fd = ::open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return nullptr;
  const std::size_t bytes = ring::file_bytes(ring::kSlots);
  void* map = MAP_FAILED;
  if (::ftruncate(fd, static_cast<off_t>(bytes)) == 0)
    map = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) {
    ::unlink(path);
    return nullptr;
  }
  auto* h = static_cast<ring::Header*>(map);
  h->version = ring::kVersion;
  h->slot_bytes = sizeof(ring::Slot);
  h->capacity = ring::kSlots;
  h->pid = pid;
  h->clock_id = CLOCK_REALTIME;
  // The magic last: a reader that sees it sees the rest.
  std::atomic_thread_fence(std::memory_order_release);
  std::memcpy(h->magic, ring::kMagic, sizeof h->magic);
  std::memcpy(g_path, path, sizeof path);
  return h;
}

ring::Header* the_ring() {
  ring::Header* h = g_ring.load(std::memory_order_acquire);
  if (h != nullptr || g_failed.load(std::memory_order_relaxed)) return h;
  int expected = 0;
  if (!g_opening.compare_exchange_strong(expected, 1, std::memory_order_acq_rel))
    return nullptr;  // another thread
  h = make_ring();
  if (h == nullptr) g_failed.store(true, std::memory_order_relaxed);
  g_ring.store(h, std::memory_order_release);
  g_opening.store(0, std::memory_order_release);
  return h;
}

void put(ring::EventKind kind, int depth, std::uint64_t id, const char* name) {
  ring::Header* h = the_ring();
  if (h == nullptr) return;
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  const std::uint64_t index = __atomic_fetch_add(&h->written, 1, __ATOMIC_RELAXED);
  auto* slots = reinterpret_cast<ring::Slot*>(h + 1);
  ring::Slot& s = slots[index % h->capacity];
  __atomic_store_n(&s.seq, 0, __ATOMIC_RELAXED);  // torn while it is rewritten
  std::atomic_thread_fence(std::memory_order_release);
  s.ts_ns = static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
  s.id = id;
  s.tid = this_tid();
  s.kind = static_cast<std::uint16_t>(kind);
  s.depth = static_cast<std::uint16_t>(depth < 0 ? 0 : depth);
  std::size_t n = 0;
  if (name != nullptr)
    for (; n + 1 < ring::kNameBytes && name[n] != '\0'; ++n) s.name[n] = name[n];
  s.name[n] = '\0';
  __atomic_store_n(&s.seq, index + 1, __ATOMIC_RELEASE);
}

// A wide message's ASCII letters (others become '?'), for the ring's short name.
struct Narrow {
  char text[ring::kNameBytes] = {};
  explicit Narrow(const wchar_t* w) {
    std::size_t n = 0;
    if (w != nullptr)
      for (; n + 1 < sizeof text && w[n] != 0; ++n)
        text[n] = (w[n] > 0 && w[n] < 128) ? static_cast<char>(w[n]) : '?';
    text[n] = '\0';
  }
};

const char* message_of(const nvtxEventAttributes_t* a, Narrow& narrow) {
  if (a == nullptr) return "";
  switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
      return a->message.ascii != nullptr ? a->message.ascii : "";
    case NVTX_MESSAGE_TYPE_UNICODE:
      narrow = Narrow(a->message.unicode);
      return narrow.text;
    case NVTX_MESSAGE_TYPE_REGISTERED:
      // Our RegisterStringA/W below hand out the string itself as the handle.
      return a->message.registered != nullptr ? reinterpret_cast<const char*>(a->message.registered) : "";
    default:
      return "";
  }
}

int push(const char* name) {
  const int depth = ++t_depth;
  put(ring::EventKind::push, depth, 0, name);
  return depth - 1;  // NVTX: the zero-based level of the range pushed
}

int pop() {
  if (t_depth <= 0) return -1;
  const int depth = t_depth--;
  put(ring::EventKind::pop, depth, 0, nullptr);
  return depth - 1;
}

nvtxRangeId_t start(const char* name) {
  const std::uint64_t id = g_next_id.fetch_add(1, std::memory_order_relaxed);
  put(ring::EventKind::start, 0, id, name);
  return id;
}

void end(nvtxRangeId_t id) {
  put(ring::EventKind::end, 0, id, nullptr);
}

int NVTX_API range_push_a(const char* message) {
  return push(message);
}
int NVTX_API range_push_w(const wchar_t* message) {
  return push(Narrow(message).text);
}
int NVTX_API range_push_ex(const nvtxEventAttributes_t* a) {
  Narrow n(nullptr);
  return push(message_of(a, n));
}
int NVTX_API range_pop() {
  return pop();
}
nvtxRangeId_t NVTX_API range_start_a(const char* message) {
  return start(message);
}
nvtxRangeId_t NVTX_API range_start_w(const wchar_t* message) {
  return start(Narrow(message).text);
}
nvtxRangeId_t NVTX_API range_start_ex(const nvtxEventAttributes_t* a) {
  Narrow n(nullptr);
  return start(message_of(a, n));
}
void NVTX_API range_end(nvtxRangeId_t id) {
  end(id);
}
int NVTX_API domain_push_ex(nvtxDomainHandle_t /*domain*/, const nvtxEventAttributes_t* a) {
  return range_push_ex(a);
}
int NVTX_API domain_pop(nvtxDomainHandle_t /*domain*/) {
  return pop();
}
nvtxRangeId_t NVTX_API domain_start_ex(nvtxDomainHandle_t /*domain*/, const nvtxEventAttributes_t* a) {
  return range_start_ex(a);
}
void NVTX_API domain_end(nvtxDomainHandle_t /*domain*/, nvtxRangeId_t id) {
  end(id);
}
// Registered strings: the handle is a copy of the string, kept for the process's life (NVTX has no
// call to release one).
nvtxStringHandle_t NVTX_API register_string_a(nvtxDomainHandle_t /*domain*/, const char* s) {
  return reinterpret_cast<nvtxStringHandle_t>(::strndup(s != nullptr ? s : "", ring::kNameBytes - 1));
}
nvtxStringHandle_t NVTX_API register_string_w(nvtxDomainHandle_t /*domain*/, const wchar_t* s) {
  return reinterpret_cast<nvtxStringHandle_t>(::strdup(Narrow(s).text));
}
// A domain handle that is not null, so programs that check it go on (the ring does not keep domains).
nvtxDomainHandle_t NVTX_API domain_create_a(const char* /*name*/) {
  static char domain = 0;
  return reinterpret_cast<nvtxDomainHandle_t>(&domain);
}
nvtxDomainHandle_t NVTX_API domain_create_w(const wchar_t* /*name*/) {
  return domain_create_a(nullptr);
}

// A forked child writes its own ring, made at its first event; the parent's stays the parent's.
void after_fork_in_child() {
  g_ring.store(nullptr, std::memory_order_relaxed);
  g_opening.store(0, std::memory_order_relaxed);
  g_failed.store(false, std::memory_order_relaxed);
  g_path[0] = '\0';
  t_depth = 0;
  t_tid = 0;
}

template <typename F>
void set(NvtxFunctionTable table, unsigned size, unsigned id, F* f) {
  if (table != nullptr && id < size && table[id] != nullptr)
    *table[id] = reinterpret_cast<NvtxFunctionPointer>(f);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get) {
  if (get == nullptr) return 0;
  const auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(get(NVTX_ETID_CALLBACKS));
  if (callbacks == nullptr || callbacks->GetModuleFunctionTable == nullptr) return 0;
  NvtxFunctionTable core = nullptr;
  unsigned core_size = 0;
  if (callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &core, &core_size) == 0 || core == nullptr)
    return 0;
  set(core, core_size, NVTX_CBID_CORE_RangePushA, &range_push_a);
  set(core, core_size, NVTX_CBID_CORE_RangePushW, &range_push_w);
  set(core, core_size, NVTX_CBID_CORE_RangePushEx, &range_push_ex);
  set(core, core_size, NVTX_CBID_CORE_RangePop, &range_pop);
  set(core, core_size, NVTX_CBID_CORE_RangeStartA, &range_start_a);
  set(core, core_size, NVTX_CBID_CORE_RangeStartW, &range_start_w);
  set(core, core_size, NVTX_CBID_CORE_RangeStartEx, &range_start_ex);
  set(core, core_size, NVTX_CBID_CORE_RangeEnd, &range_end);
  NvtxFunctionTable core2 = nullptr;
  unsigned core2_size = 0;
  if (callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &core2, &core2_size) != 0 && core2 != nullptr) {
    set(core2, core2_size, NVTX_CBID_CORE2_DomainRangePushEx, &domain_push_ex);
    set(core2, core2_size, NVTX_CBID_CORE2_DomainRangePop, &domain_pop);
    set(core2, core2_size, NVTX_CBID_CORE2_DomainRangeStartEx, &domain_start_ex);
    set(core2, core2_size, NVTX_CBID_CORE2_DomainRangeEnd, &domain_end);
    set(core2, core2_size, NVTX_CBID_CORE2_DomainRegisterStringA, &register_string_a);
    set(core2, core2_size, NVTX_CBID_CORE2_DomainRegisterStringW, &register_string_w);
    set(core2, core2_size, NVTX_CBID_CORE2_DomainCreateA, &domain_create_a);
    set(core2, core2_size, NVTX_CBID_CORE2_DomainCreateW, &domain_create_w);
  }
  ::pthread_atfork(nullptr, nullptr, &after_fork_in_child);
  // The ring goes with the process: the agent keeps its mapping open while a capture reads it, so a
  // process that ends mid-capture is read to its end.
  std::atexit(&unlink_ring);
  return 1;
}
