// Other profilers on the host, from /proc (docs/agent.md#beside-other-profilers).
#include "diescope/collect/profiler_watch.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <fcntl.h>
#include <string_view>
#include <unistd.h>

namespace diescope::collect {
namespace {

// Process names (as /proc/PID/comm gives them, at most 15 characters) of tools that take the counters.
constexpr std::array<std::string_view, 4> kProfilerNames = {"ncu", "nv-nsight-cu-cl", "nsys",
                                                            "nsys-launcher"};
constexpr std::string_view kProfilerPrefix = "dcgmproftester";  // dcgmproftester12, dcgmproftester13, ...
constexpr std::string_view kInjection = "CUDA_INJECTION64_PATH=";
// kthreadd, the parent of every kernel thread (and one itself).
constexpr pid_t kKernelThreadsParent = 2;
// A comm file holds at most 15 characters and a newline, more where some are escaped.
constexpr std::size_t kCommLimit = 128;

// Reads at most `limit` bytes from `fd` at offset 0 into `text` (empty when it cannot be read); false
// on a read error (a kept /proc/PID/comm of a process that has ended). A read shorter than asked
// ends it: /proc fills each read as far as it can (docs/method.md#what-the-probes-cost).
bool read_fd(int fd, std::size_t limit, std::string& text) {
  text.clear();
  std::array<char, 4096> chunk{};
  while (text.size() < limit) {
    const std::size_t want = std::min(chunk.size(), limit - text.size());
    const ssize_t got = ::pread(fd, chunk.data(), want, static_cast<off_t>(text.size()));
    if (got < 0) return false;
    text.append(chunk.data(), static_cast<std::size_t>(got));
    if (static_cast<std::size_t>(got) < want) break;
  }
  return true;
}

// Reads at most `limit` bytes of `dir_fd`'s `path` into `text` (empty when it cannot be read): one
// open and read calls, no stream, and only the bytes read are touched. False when it cannot be opened.
bool read_small(int dir_fd, const char* path, std::size_t limit, std::string& text) {
  text.clear();
  const int fd = ::openat(dir_fd, path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool read = read_fd(fd, limit, text);
  ::close(fd);
  return read;
}

struct Stat {
  std::string comm;  // the name /proc/PID/comm gives, at most 15 characters
  pid_t parent = 0;
  unsigned long long start_ticks = 0;
};

// The name (field 2), parent pid (field 4) and start time (field 22) from /proc/PID/stat ("pid
// (comm) state ppid ..."; comm may hold spaces and parentheses, so it ends at the last ')').
Stat stat_of(const std::string& stat) {
  Stat out;
  const auto open = stat.find('(');
  const auto close = stat.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open || close + 4 > stat.size())
    return out;
  out.comm = stat.substr(open + 1, close - open - 1);
  const char* at = stat.c_str() + close + 2;  // field 3, the state
  char* end = nullptr;
  for (int field = 3; field <= 22 && *at != '\0'; ++field) {
    while (*at == ' ') ++at;
    if (field == 4) out.parent = static_cast<pid_t>(std::strtol(at, &end, 10));
    if (field == 22) out.start_ticks = std::strtoull(at, &end, 10);
    while (*at != ' ' && *at != '\0') ++at;
  }
  return out;
}

bool has_injection(const std::string& env) {
  std::size_t at = 0;
  while (at < env.size()) {
    const std::size_t end = std::min(env.find('\0', at), env.size());
    if (std::string_view(env).substr(at, end - at).starts_with(kInjection) && end - at > kInjection.size())
      return true;
    at = end + 1;
  }
  return false;
}

// "PID/file", relative to the kept /proc directory (short enough to need no allocation).
std::string under(const char* pid_name, std::string_view file) {
  std::string path(pid_name);
  path += '/';
  path += file;
  return path;
}

bool profiler_name(std::string_view comm) {
  return std::find(kProfilerNames.begin(), kProfilerNames.end(), comm) != kProfilerNames.end() ||
         comm.starts_with(kProfilerPrefix);
}

}  // namespace

ProfilerWatch::ProfilerWatch(std::filesystem::path proc_root, pid_t self)
    : root_(std::move(proc_root)), self_(self != 0 ? self : ::getpid()) {
  buffer_.reserve(16 * 1024);
}

ProfilerWatch::~ProfilerWatch() {
  for (auto& [pid, k] : known_) forget(k);
  if (dir_ != nullptr) ::closedir(dir_);
}

void ProfilerWatch::forget(Known& k) {
  if (k.comm_fd >= 0) {
    ::close(k.comm_fd);
    k.comm_fd = -1;
    --kept_;
  }
}

bool ProfilerWatch::read_stat(const char* pid_name, Known& k) {
  ++reads_.stat;
  if (!read_small(::dirfd(dir_), under(pid_name, "stat").c_str(), 1024, buffer_) || buffer_.empty())
    return false;
  Stat stat = stat_of(buffer_);
  k.name = std::move(stat.comm);
  if (stat.parent == self_) {
    k.kind = Kind::own_child;
  } else if (stat.parent == kKernelThreadsParent || std::string_view(pid_name) == "2") {
    k.kind = Kind::kernel_thread;
  } else {
    k.kind = Kind::process;
  }
  k.start_ticks = stat.start_ticks;
  return true;
}

bool ProfilerWatch::read_comm(const char* pid_name, Known& k, std::string& comm) {
  ++reads_.comm;
  if (k.comm_fd >= 0) return read_fd(k.comm_fd, kCommLimit, comm);
  const std::string path = under(pid_name, "comm");
  if (kept_ >= kKeptNames) return read_small(::dirfd(dir_), path.c_str(), kCommLimit, comm);
  k.comm_fd = ::openat(::dirfd(dir_), path.c_str(), O_RDONLY | O_CLOEXEC);
  if (k.comm_fd < 0) return false;
  ++kept_;
  return read_fd(k.comm_fd, kCommLimit, comm);
}

std::vector<SeenProfiler> ProfilerWatch::scan() {
  std::vector<SeenProfiler> seen;
  if (dir_ == nullptr) {
    dir_ = ::opendir(root_.c_str());
    if (dir_ == nullptr) return seen;
  } else {
    ::rewinddir(dir_);
  }
  const unsigned scan = ++scans_;
  std::string comm;
  comm.reserve(kCommLimit);
  while (const dirent* entry = ::readdir(dir_)) {
    const char* name = entry->d_name;
    if (name[0] == '\0' || !std::all_of(name, name + std::char_traits<char>::length(name),
                                        [](char c) { return c >= '0' && c <= '9'; }))
      continue;
    const auto pid = static_cast<pid_t>(std::strtol(name, nullptr, 10));
    if (pid == self_) continue;
    const auto inode = static_cast<std::uint64_t>(entry->d_ino);
    auto [it, fresh] = known_.try_emplace(pid);
    Known& k = it->second;
    const bool same = !fresh && k.inode == inode;
    if (same && k.kind != Kind::process) {  // a kernel thread or the agent's child: nothing to read
      k.scan = scan;
      continue;
    }
    if (same) {
      // The name, from the comm file: another text means the process has exec'd or renamed itself,
      // and its stat is read again for the name it gives.
      if (!read_comm(name, k, comm)) continue;  // ended since the directory was read
      if (comm != k.comm) {
        k.comm = comm;
        if (!read_stat(name, k)) continue;
      }
    } else {
      // Met for the first time (or a new process under a pid met before): its comm first, so that an
      // exec between the two reads shows as a change at the next scan, then its stat.
      const unsigned long long before_ticks = fresh ? 0 : k.start_ticks;
      const Injection before = fresh ? Injection::unread : k.injection;
      forget(k);
      k = Known{};
      k.inode = inode;
      const bool comm_read = read_comm(name, k, comm);
      if (!read_stat(name, k)) {
        forget(k);
        known_.erase(it);
        continue;
      }
      if (k.kind != Kind::process) forget(k);  // its name is never needed again
      k.comm = comm_read ? comm : std::string();
      // The same process under another inode (its directory's entry was dropped and made again):
      // what its environment said still holds.
      if (!fresh && k.start_ticks == before_ticks) k.injection = before;
    }
    k.scan = scan;
    if (k.kind != Kind::process) continue;
    if (profiler_name(k.name)) {
      seen.push_back(SeenProfiler{pid, k.name});
      continue;
    }
    // The environment a process started with: read once per (pid, start time).
    if (k.injection == Injection::unread) {
      ++reads_.environ;
      read_small(::dirfd(dir_), under(name, "environ").c_str(), 256 * 1024, buffer_);
      k.injection = has_injection(buffer_) ? Injection::injected : Injection::clean;
    }
    if (k.injection == Injection::injected)
      seen.push_back(SeenProfiler{pid, k.name + " with CUDA_INJECTION64_PATH"});
  }
  // Processes not met by this scan have ended.
  for (auto it = known_.begin(); it != known_.end();) {
    if (it->second.scan == scan) {
      ++it;
    } else {
      forget(it->second);
      it = known_.erase(it);
    }
  }
  std::sort(seen.begin(), seen.end(),
            [](const SeenProfiler& a, const SeenProfiler& b) { return a.pid < b.pid; });
  return seen;
}

std::string profilers_text(const std::vector<SeenProfiler>& seen) {
  std::string out;
  for (const auto& p : seen)
    out += (out.empty() ? "" : ", ") + p.name + " (pid " + std::to_string(p.pid) + ")";
  return out;
}

}  // namespace diescope::collect
