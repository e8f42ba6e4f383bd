// Seeing another profiler on the host (docs/agent.md#beside-other-profilers): the agent reads chip
// samples from NVML GPM while one runs, so that it never holds the performance counters another
// profiler needs, and returns to PM sampling once none has been seen for a while.
#pragma once

#include <filesystem>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <sys/types.h>
#include <vector>

namespace diescope::collect {

struct SeenProfiler {
  pid_t pid = 0;
  std::string name;  // the process's name, or "CUDA_INJECTION64_PATH" for a process a tool injects into
};

// Scans a /proc tree for processes that take the GPU's performance counters: Nsight Compute (ncu,
// nv-nsight-cu-cli), Nsight Systems (nsys), DCGM's profiling tester (dcgmproftester*), and any
// process a CUDA tool injects itself into (CUDA_INJECTION64_PATH in its environment, where the
// agent may read it). The agent's own process and its children are never counted.
//
// A scan runs every 200 ms over every process on the host, so it reads little: each process's
// stat (its name, parent and start time), and its environment only the first time a (pid, start time) pair is
// met. The environment /proc shows is the one the process was started with, so it is read once per process.
// Kernel threads (children of kthreadd, pid 2), most of a host's processes, are read only at every
// kFullReadEvery-th scan (docs/agent.md#beside-other-profilers).
class ProfilerWatch {
 public:
  // Every this many scans, the first included, every process's stat is read, kernel threads too.
  static constexpr unsigned kFullReadEvery = 10;

  explicit ProfilerWatch(std::filesystem::path proc_root = "/proc", pid_t self = 0);
  std::vector<SeenProfiler> scan();

 private:
  struct Injection {
    unsigned long long start_ticks = 0;  // /proc/PID/stat field 22: tells a reused pid apart
    bool injected = false;
  };
  std::filesystem::path root_;
  pid_t self_;
  std::unordered_map<pid_t, Injection> injection_;  // the processes seen by the last scan
  std::unordered_set<pid_t> kernel_threads_;        // the kernel threads seen by the last scan
  unsigned scans_ = 0;
  std::string buffer_;  // reused by every read of a scan
};

// "ncu (pid 4242), nsys (pid 77)".
std::string profilers_text(const std::vector<SeenProfiler>& seen);

}  // namespace diescope::collect
