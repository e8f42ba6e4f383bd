// The agent's side of the NVTX rings (docs/agent.md#nvtx-in-captures): a ring mapped read-only, its
// events since the previous read paired into ranges, and whether a process belongs to a job's tree.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include "diescope/agent/nvtx_ring.hpp"

namespace diescope::agent {

namespace fs = std::filesystem;

fs::path nvtx_ring_dir() {
  const char* dir = std::getenv(nvtx_ring::kDirVariable);
  return dir != nullptr && dir[0] != '\0' ? fs::path(dir) : fs::path(nvtx_ring::kDefaultDir);
}

namespace {

// The parent of `pid` from `proc`/PID/stat; -1 when it cannot be read.
std::int64_t parent_of(const fs::path& proc, std::int64_t pid) {
  std::ifstream in(proc / std::to_string(pid) / "stat");
  std::string line;
  if (!std::getline(in, line)) return -1;
  // The name (field 2) is in parentheses and may hold spaces: the fields after the last ')'.
  const std::size_t close = line.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream rest(line.substr(close + 1));
  std::string state;
  std::int64_t ppid = -1;
  rest >> state >> ppid;
  return rest ? ppid : -1;
}

}  // namespace

bool in_process_tree(const fs::path& proc, std::int64_t pid, std::int64_t root) {
  if (pid <= 0 || root <= 0) return false;
  // A chain longer than this is a loop in a fake /proc, not a real tree.
  for (int hops = 0; hops < 1024 && pid > 1; ++hops) {
    if (pid == root) return true;
    pid = parent_of(proc, pid);
  }
  return pid == root;
}

std::optional<RingReader> RingReader::open(const fs::path& path, std::string& why) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    why = "cannot open " + path.string() + ": " + std::strerror(errno);
    return std::nullopt;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_size < static_cast<off_t>(sizeof(nvtx_ring::Header))) {
    ::close(fd);
    why = path.string() + " is too short for an NVTX ring";
    return std::nullopt;
  }
  const auto bytes = static_cast<std::size_t>(st.st_size);
  void* map = ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) {
    why = "cannot map " + path.string() + ": " + std::strerror(errno);
    return std::nullopt;
  }
  const auto* h = static_cast<const nvtx_ring::Header*>(map);
  std::atomic_thread_fence(std::memory_order_acquire);
  if (std::memcmp(h->magic, nvtx_ring::kMagic, sizeof h->magic) != 0 || h->version != nvtx_ring::kVersion ||
      h->slot_bytes != sizeof(nvtx_ring::Slot) || h->capacity == 0 ||
      bytes < nvtx_ring::file_bytes(h->capacity)) {
    ::munmap(map, bytes);
    why =
        path.string() + " is not an NVTX ring of this version (" + std::to_string(nvtx_ring::kVersion) + ")";
    return std::nullopt;
  }
  RingReader r;
  r.map_ = map;
  r.bytes_ = bytes;
  r.pid_ = h->pid;
  r.capacity_ = h->capacity;
  return r;
}

RingReader::RingReader(RingReader&& o) noexcept {
  *this = std::move(o);
}

RingReader& RingReader::operator=(RingReader&& o) noexcept {
  if (this != &o) {
    if (map_ != nullptr) ::munmap(map_, bytes_);
    map_ = std::exchange(o.map_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
    pid_ = o.pid_;
    capacity_ = o.capacity_;
    next_ = o.next_;
    lost_ = o.lost_;
    unmatched_ = o.unmatched_;
    stacks_ = std::move(o.stacks_);
    started_ = std::move(o.started_);
  }
  return *this;
}

RingReader::~RingReader() {
  if (map_ != nullptr) ::munmap(map_, bytes_);
}

std::size_t RingReader::read(std::int64_t since_ns, std::vector<NvtxRange>& out) {
  if (map_ == nullptr) return 0;
  const auto* h = static_cast<const nvtx_ring::Header*>(map_);
  const auto* slots = reinterpret_cast<const nvtx_ring::Slot*>(h + 1);
  const std::uint64_t written = __atomic_load_n(&h->written, __ATOMIC_ACQUIRE);
  if (written > next_ + capacity_) {  // overwritten before they were read
    lost_ += written - capacity_ - next_;
    next_ = written - capacity_;
  }
  std::size_t taken = 0;
  for (; next_ < written; ++next_) {
    const nvtx_ring::Slot& slot = slots[next_ % capacity_];
    const std::uint64_t before = __atomic_load_n(&slot.seq, __ATOMIC_ACQUIRE);
    if (before > next_ + 1) {  // already rewritten by a later event
      ++lost_;
      continue;
    }
    if (before != next_ + 1) break;  // claimed and not yet whole: the next read takes it
    nvtx_ring::Slot copy;
    std::memcpy(&copy, &slot, sizeof copy);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (__atomic_load_n(&slot.seq, __ATOMIC_RELAXED) != before) {
      ++lost_;  // rewritten while it was copied
      continue;
    }
    copy.name[nvtx_ring::kNameBytes - 1] = '\0';
    take(copy, since_ns, out);
    ++taken;
  }
  return taken;
}

void RingReader::take(const nvtx_ring::Slot& s, std::int64_t since_ns, std::vector<NvtxRange>& out) {
  auto emit = [&](const Open& o, std::int64_t end_ns) {
    if (end_ns < since_ns) return;
    out.push_back(NvtxRange{pid_, o.tid, o.depth, o.name, o.start_ns, end_ns, false});
  };
  switch (static_cast<nvtx_ring::EventKind>(s.kind)) {
    case nvtx_ring::EventKind::push: {
      // The depth says where it sits: pushes whose pops were lost are dropped from the stack.
      auto& stack = stacks_[s.tid];
      const std::size_t depth = std::max<std::size_t>(s.depth, 1);
      if (stack.size() >= depth) stack.resize(depth - 1);
      stack.push_back(Open{s.name, s.ts_ns, static_cast<int>(depth), s.tid});
      break;
    }
    case nvtx_ring::EventKind::pop: {
      auto& stack = stacks_[s.tid];
      const std::size_t depth = s.depth;
      if (depth == 0 || stack.size() < depth) {
        ++unmatched_;  // its push was lost or came before the ring
        break;
      }
      stack.resize(depth);  // deeper pushes whose pops were lost are dropped
      emit(stack.back(), s.ts_ns);
      stack.pop_back();
      break;
    }
    case nvtx_ring::EventKind::start:
      started_[s.id] = Open{s.name, s.ts_ns, 0, s.tid};
      break;
    case nvtx_ring::EventKind::end: {
      const auto it = started_.find(s.id);
      if (it == started_.end()) {
        ++unmatched_;
        break;
      }
      emit(it->second, s.ts_ns);
      started_.erase(it);
      break;
    }
    default:
      ++lost_;  // not an event of this version
  }
}

void RingReader::close_open(std::int64_t at_ns, std::int64_t since_ns, std::vector<NvtxRange>& out) const {
  if (at_ns < since_ns) return;
  for (const auto& [tid, stack] : stacks_)
    for (const Open& o : stack)
      out.push_back(NvtxRange{pid_, o.tid, o.depth, o.name, o.start_ns, at_ns, true});
  for (const auto& [id, o] : started_)
    out.push_back(NvtxRange{pid_, o.tid, 0, o.name, o.start_ns, at_ns, true});
}

}  // namespace diescope::agent
