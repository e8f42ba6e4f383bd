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

// Reads at most `limit` bytes of a /proc file into `text` (empty when it cannot be read): one open
// and read calls, no stream, and only the bytes read are touched.
void read_small(const std::filesystem::path& path, std::size_t limit, std::string& text) {
  text.clear();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  std::array<char, 4096> chunk{};
  while (text.size() < limit) {
    const ssize_t got = ::read(fd, chunk.data(), std::min(chunk.size(), limit - text.size()));
    if (got <= 0) break;
    text.append(chunk.data(), static_cast<std::size_t>(got));
  }
  ::close(fd);
}

struct Stat {
  std::string comm;  // the name /proc/PID/comm gives, at most 15 characters
  pid_t parent = 0;
  unsigned long long start_ticks = 0;
};

// The name (field 2), parent pid (field 4) and start time (field 22) from /proc/PID/stat ("pid
// (comm) state ppid ..."; comm may hold spaces and parentheses, so it ends at the last ')'). One
// file per process: reading comm apart would double the scan's reads.
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

}  // namespace

ProfilerWatch::ProfilerWatch(std::filesystem::path proc_root, pid_t self)
    : root_(std::move(proc_root)), self_(self != 0 ? self : ::getpid()) {
  buffer_.reserve(16 * 1024);
}

std::vector<SeenProfiler> ProfilerWatch::scan() {
  std::vector<SeenProfiler> seen;
  std::unordered_map<pid_t, Injection> now;  // replaces injection_: pids gone since are dropped
  std::unordered_set<pid_t> kernel_threads;  // replaces kernel_threads_ the same way
  const bool full_read = scans_++ % kFullReadEvery == 0;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(root_, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; }))
      continue;
    const auto pid = static_cast<pid_t>(std::strtol(name.c_str(), nullptr, 10));
    if (pid == self_) continue;
    // A kernel thread never execs, so a pid the last scan found one is still one, unless it ended
    // and the pid was reused in between: every kFullReadEvery-th scan reads them all again.
    if (!full_read && kernel_threads_.contains(pid)) {
      kernel_threads.insert(pid);
      continue;
    }
    read_small(it->path() / "stat", 1024, buffer_);
    const Stat stat = stat_of(buffer_);
    if (stat.parent == self_) continue;
    if (pid == kKernelThreadsParent || stat.parent == kKernelThreadsParent) {
      kernel_threads.insert(pid);
      continue;
    }
    const std::string& comm = stat.comm;
    if (std::find(kProfilerNames.begin(), kProfilerNames.end(), comm) != kProfilerNames.end() ||
        std::string_view(comm).starts_with(kProfilerPrefix)) {
      seen.push_back(SeenProfiler{pid, comm});
      continue;
    }
    Injection injection{stat.start_ticks, false};
    const auto known = injection_.find(pid);
    if (known != injection_.end() && known->second.start_ticks == stat.start_ticks) {
      injection = known->second;
    } else {
      read_small(it->path() / "environ", 256 * 1024, buffer_);
      injection.injected = has_injection(buffer_);
    }
    now.emplace(pid, injection);
    if (injection.injected) seen.push_back(SeenProfiler{pid, comm + " with CUDA_INJECTION64_PATH"});
  }
  injection_ = std::move(now);
  kernel_threads_ = std::move(kernel_threads);
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
