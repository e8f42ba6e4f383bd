// Seeing another profiler on the host (docs/agent.md#beside-other-profilers): the agent reads chip
// samples from NVML GPM while one runs, so that it never holds the performance counters another
// profiler needs, and returns to PM sampling once none has been seen for a while.
#pragma once

#include <cstddef>
#include <cstdint>
#include <dirent.h>
#include <filesystem>
#include <string>
#include <sys/types.h>
#include <unordered_map>
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
// A scan runs every 200 ms over every process on the host, so it reads little
// (docs/agent.md#beside-other-profilers). The /proc directory stays open and is read again from its
// start. A process is known by its pid and the inode number /proc gives its directory, which is new
// for every new process: a process met before is not read again, except for its name, read from
// its comm file kept open (it changes when the process execs). A process met for the first time
// has its stat read (name, parent, start time) and, unless it is a kernel thread or the agent's
// child, its environment, once per (pid, start time). Kernel threads and the agent's children are
// not read again at all.
class ProfilerWatch {
 public:
  // comm files kept open at most, within the descriptors the agent keeps for its own files
  // (docs/agent.md#beside-other-profilers); a process beyond them has its comm opened at each scan.
  static constexpr std::size_t kKeptNames = 64;

  explicit ProfilerWatch(std::filesystem::path proc_root = "/proc", pid_t self = 0);
  ~ProfilerWatch();
  ProfilerWatch(const ProfilerWatch&) = delete;
  ProfilerWatch& operator=(const ProfilerWatch&) = delete;
  std::vector<SeenProfiler> scan();

  // What the scans have read so far, file by file (the tests count them).
  struct Reads {
    std::uint64_t stat = 0;     // /proc/PID/stat
    std::uint64_t environ = 0;  // /proc/PID/environ
    std::uint64_t comm = 0;     // /proc/PID/comm, kept open or not
  };
  const Reads& reads() const { return reads_; }

 private:
  enum class Kind : std::uint8_t { kernel_thread, own_child, process };
  enum class Injection : std::uint8_t { unread, injected, clean };
  struct Known {
    std::uint64_t inode = 0;             // of /proc/PID: a new process gets a new one
    unsigned long long start_ticks = 0;  // /proc/PID/stat field 22: tells a reused pid apart
    Kind kind = Kind::process;
    Injection injection = Injection::unread;
    int comm_fd = -1;   // /proc/PID/comm kept open (processes only), or -1
    std::string comm;   // the comm file's text at the last read, newline included
    std::string name;   // the name /proc/PID/stat gives
    unsigned scan = 0;  // the last scan that met it
  };
  // Reads /proc/PID/stat into `k` (a process met for the first time, or whose comm changed);
  // false when it cannot be read (the process has ended).
  bool read_stat(const char* pid_name, Known& k);
  bool read_comm(const char* pid_name, Known& k, std::string& comm);
  void forget(Known& k);

  std::filesystem::path root_;
  pid_t self_;
  DIR* dir_ = nullptr;  // root_, kept open
  std::unordered_map<pid_t, Known> known_;
  std::size_t kept_ = 0;  // comm files open
  unsigned scans_ = 0;
  std::string buffer_;  // reused by every read of a scan
  Reads reads_;
};

// "ncu (pid 4242), nsys (pid 77)".
std::string profilers_text(const std::vector<SeenProfiler>& seen);

}  // namespace diescope::collect
