// Seeing another profiler on the host (docs/agent.md#beside-other-profilers): the agent reads chip
// samples from NVML GPM while one runs, so that it never holds the performance counters another
// profiler needs, and returns to PM sampling once none has been seen for a while.
#pragma once

#include <filesystem>
#include <string>
#include <sys/types.h>
#include <vector>

namespace diescope::agent {

struct SeenProfiler {
  pid_t pid = 0;
  std::string name;  // the process's name, or "CUDA_INJECTION64_PATH" for a process a tool injects into
};

// Scans a /proc tree for processes that take the GPU's performance counters: Nsight Compute (ncu,
// nv-nsight-cu-cli), Nsight Systems (nsys), DCGM's profiling tester (dcgmproftester*), and any
// process a CUDA tool injects itself into (CUDA_INJECTION64_PATH in its environment, where the
// agent may read it). The agent's own process and its children are never counted.
class ProfilerWatch {
 public:
  explicit ProfilerWatch(std::filesystem::path proc_root = "/proc", pid_t self = 0);
  std::vector<SeenProfiler> scan() const;

 private:
  std::filesystem::path root_;
  pid_t self_;
};

// "ncu (pid 4242), nsys (pid 77)".
std::string profilers_text(const std::vector<SeenProfiler>& seen);

}  // namespace diescope::agent
