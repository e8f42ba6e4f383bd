// Other profilers on the host, from /proc (docs/agent.md#beside-other-profilers).
#include "diescope/agent/profiler_watch.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string_view>
#include <unistd.h>

namespace diescope::agent {
namespace {

// Process names (as /proc/PID/comm gives them, at most 15 characters) of tools that take the counters.
constexpr std::array<std::string_view, 4> kProfilerNames = {"ncu", "nv-nsight-cu-cl", "nsys",
                                                            "nsys-launcher"};
constexpr std::string_view kProfilerPrefix = "dcgmproftester";  // dcgmproftester12, dcgmproftester13, ...
constexpr std::string_view kInjection = "CUDA_INJECTION64_PATH=";

std::string read_small(const std::filesystem::path& path, std::size_t limit) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::string text;
  text.resize(limit);
  in.read(text.data(), static_cast<std::streamsize>(limit));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

// The parent pid from /proc/PID/stat ("pid (comm) state ppid ..."; comm may hold spaces).
pid_t parent_of(const std::filesystem::path& dir) {
  const std::string stat = read_small(dir / "stat", 512);
  const auto close = stat.rfind(')');
  if (close == std::string::npos || close + 4 > stat.size()) return 0;
  return static_cast<pid_t>(std::strtol(stat.c_str() + close + 4, nullptr, 10));
}

bool has_injection(const std::filesystem::path& dir) {
  const std::string env = read_small(dir / "environ", 256 * 1024);
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
    : root_(std::move(proc_root)), self_(self != 0 ? self : ::getpid()) {}

std::vector<SeenProfiler> ProfilerWatch::scan() const {
  std::vector<SeenProfiler> seen;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(root_, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; }))
      continue;
    const auto pid = static_cast<pid_t>(std::strtol(name.c_str(), nullptr, 10));
    if (pid == self_ || parent_of(it->path()) == self_) continue;
    std::string comm = read_small(it->path() / "comm", 64);
    while (!comm.empty() && (comm.back() == '\n' || comm.back() == '\0')) comm.pop_back();
    if (std::find(kProfilerNames.begin(), kProfilerNames.end(), comm) != kProfilerNames.end() ||
        std::string_view(comm).starts_with(kProfilerPrefix)) {
      seen.push_back(SeenProfiler{pid, comm});
    } else if (has_injection(it->path())) {
      seen.push_back(SeenProfiler{pid, comm + " with CUDA_INJECTION64_PATH"});
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

}  // namespace diescope::agent
