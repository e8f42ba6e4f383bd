// What /proc says about one process holding a GPU (docs/attribution.md#who-holds-a-gpu): its command,
// start time, owner, cgroup and the few environment variables that name a Slurm job or a pod.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "diescope/attribution/cgroup.hpp"

namespace diescope::attribution {

struct ProcessFacts {
  enum class Read {
    ok,
    gone,    // the process ended between NVML's listing and this read (or is another namespace's pid)
    denied,  // /proc/PID exists but could not be read
  };
  unsigned pid = 0;
  Read read = Read::gone;
  std::string command;            // /proc/PID/comm
  std::uint64_t start_ticks = 0;  // field 22 of /proc/PID/stat: tells a reused pid from the old one
  long uid = -1;                  // real uid from /proc/PID/status
  CgroupFacts cgroup;
  bool environ_read = false;       // environ is readable only by the process's owner and root
  std::string slurm_job_id;        // SLURM_JOB_ID
  std::string slurm_step_id;       // SLURM_STEP_ID
  std::string slurm_job_user;      // SLURM_JOB_USER
  std::string hostname;            // HOSTNAME: a Kubernetes container's is its pod's name
  bool in_kubernetes = false;      // KUBERNETES_SERVICE_HOST is set
  std::vector<std::string> notes;  // what could not be read, and why
};

// Reads /proc/PID under `proc_root` ("/proc", or a fixture tree). Never throws: what cannot be read is
// noted.
ProcessFacts read_process(const std::filesystem::path& proc_root, unsigned pid);
// /proc/PID/comm without its newline; empty when unreadable.
std::string read_command(const std::filesystem::path& proc_root, unsigned pid);
// The command name of diescope's counter sampler, whichever diescope started it.
inline constexpr const char* kSamplerCommand = "diescope-cupti";
// The parent's pid (field 4 of stat); 0 when unreadable.
unsigned read_parent_pid(const std::filesystem::path& proc_root, unsigned pid);
// Just the start time (field 22 of stat), to check a cached pid cheaply; 0 when unreadable.
std::uint64_t read_start_ticks(const std::filesystem::path& proc_root, unsigned pid);

}  // namespace diescope::attribution
