// The host probes of `diescope run` (docs/method.md#host-probes): CPU from /proc/stat, memory from
// /proc/meminfo, block devices from /proc/diskstats, and the measured command's process tree
// (followed as it forks) from /proc/PID. Each read yields the records to append to a recording:
// new stream declarations (with their metric descriptors), new tasks, and one host sample.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "diescope/recording/records.hpp"

namespace diescope::collect {

// ---- parsers of one /proc file each (pure: text in, numbers out) ----------------------------------

// One "cpu" or "cpuN" line of /proc/stat, in jiffies.
struct CpuJiffies {
  int cpu = -1;  // -1: the "cpu" line (all CPUs)
  std::uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  std::uint64_t total() const { return user + nice + system + idle + iowait + irq + softirq + steal; }
  std::uint64_t busy() const { return user + nice + system + irq + softirq + steal; }
};
// The "cpu" line first, then the "cpuN" lines in file order. Lines it cannot read are skipped.
std::vector<CpuJiffies> parse_proc_stat(std::string_view text);

// /proc/meminfo, in bytes; NaN for a field the file lacks.
struct MemInfo {
  double total = 0, available = 0, cached = 0, buffers = 0;
};
MemInfo parse_meminfo(std::string_view text);

// One line of /proc/diskstats.
struct DiskStat {
  std::string name;
  std::uint64_t sectors_read = 0, sectors_written = 0, in_flight = 0, io_ms = 0;
};
std::vector<DiskStat> parse_diskstats(std::string_view text);

// /proc/PID/stat: the fields the probes use. nullopt when the text is not a stat line.
struct PidStat {
  std::string comm;
  char state = '?';
  std::int64_t ppid = 0;
  std::int64_t threads = 0;
  std::int64_t rss_pages = 0;
  std::uint64_t cpu_ticks = 0;     // utime + stime, in clock ticks (sysconf(_SC_CLK_TCK))
  std::uint64_t kernel_ticks = 0;  // stime
  // delayacct_blkio_ticks (field 42): time waiting for block I/O, in clock ticks; nullopt where the
  // line has no field 42 (docs/method.md#host-probes).
  std::optional<std::uint64_t> blkio_ticks;
};
std::optional<PidStat> parse_pid_stat(std::string_view text);

// The first field of /proc/PID/task/TID/schedstat: on-CPU nanoseconds. nullopt when unreadable.
std::optional<std::uint64_t> parse_schedstat(std::string_view text);

// /proc/PID/io: syscall read and write bytes, and the bytes fetched from storage (read_bytes: page-cache
// hits are not counted; nullopt where the file has no such line). nullopt when rchar or wchar is missing.
struct PidIo {
  std::uint64_t rchar = 0, wchar = 0;
  std::optional<std::uint64_t> read_bytes;
};
std::optional<PidIo> parse_pid_io(std::string_view text);

// ---- the probes ------------------------------------------------------------------------------------

struct HostProbeOptions {
  std::filesystem::path proc = "/proc";
  std::filesystem::path sys_block = "/sys/block";  // whole block devices; missing: every device but loop/ram
  long page_bytes = 0;                             // 0: sysconf(_SC_PAGESIZE)
};

// What one read adds to a recording, in the order to write it: declarations and tasks first.
struct HostBatch {
  std::vector<recording::HostStream> streams;
  std::vector<recording::HostTask> tasks;
  std::vector<recording::Note> notes;
  recording::OwnedHostSample sample;  // values ascending by id; empty when nothing was read
};

class HostProbes {
 public:
  explicit HostProbes(HostProbeOptions options = {});
  ~HostProbes();
  HostProbes(const HostProbes&) = delete;
  HostProbes& operator=(const HostProbes&) = delete;

  // Reads every probe. `now_ns` stamps the records (CLOCK_REALTIME), `mono_ns` measures the time
  // elapsed since the previous read (CLOCK_MONOTONIC). `root_pid` is the measured command (0: no
  // process tree). Never throws for what /proc does not give: those values are NaN or left out.
  HostBatch read(recording::TimeNs now_ns, recording::TimeNs mono_ns, std::int64_t root_pid);

  // For tests: read another /proc tree (a fixture) from now on.
  void set_proc_root(std::filesystem::path proc);

  long reads() const { return reads_; }

 private:
  struct State;
  std::unique_ptr<State> state_;
  long reads_ = 0;
};

// ---- processes on the GPU (docs/recording-format.md#gpu-holders) ----------------------------------

// Who a process on NVIDIA's process lists is: its role, walking /proc/PID/stat's parents (the
// command's tree when the walk meets `command_pid`, diescope's own when it meets `self_pid` first,
// other otherwise, and other when /proc/PID cannot be read, as for a pid of another pid namespace),
// and its name (stat's comm; empty when unreadable). `command_pid` 0: no command runs.
struct HolderIdentity {
  recording::HolderRole role = recording::HolderRole::other;
  std::string name;
};
HolderIdentity identify_gpu_holder(std::int64_t pid, std::int64_t command_pid, std::int64_t self_pid,
                                   const std::filesystem::path& proc = "/proc");

// Follows the set of pids on the process lists from one read to the next and gives the holder
// records of each change: a record for each pid new on the lists (with its role and name), a `gone`
// record for each pid no longer on them.
class GpuHolderTracker {
 public:
  explicit GpuHolderTracker(std::filesystem::path proc = "/proc") : proc_(std::move(proc)) {}
  std::vector<recording::GpuHolder> update(recording::TimeNs now_ns, const std::vector<unsigned>& pids,
                                           std::int64_t command_pid, std::int64_t self_pid);

 private:
  std::filesystem::path proc_;
  std::set<std::int64_t> current_;
};

}  // namespace diescope::collect
