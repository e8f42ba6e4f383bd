// Linux perf_event counters around each sample: hardware counters (cycles, instructions, branches,
// branch misses, cache references and misses) and software ones (task clock, context switches,
// page faults), user space only so it works at perf_event_paranoid 2. The counters are opened as one
// group so they cover the same instructions; when the group cannot be opened (a counter the CPU or
// the VM lacks) or cannot be scheduled, each counter is opened on its own; when none opens (no PMU,
// seccomp, paranoid 3) the backend still times the sample and says why in a diagnostic. Context
// switches are counted on their own, kernel side included (they happen there), which needs
// perf_event_paranoid <= 1 or CAP_PERFMON.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "diescope/harness/backend.hpp"

namespace diescope::harness {

enum class PerfCounter {
  cycles,
  instructions,
  branches,
  branch_misses,
  cache_references,
  cache_misses,
  task_clock,  // nanoseconds on the CPU
  context_switches,
  page_faults,
};
inline constexpr std::size_t kPerfCounterCount = 9;
std::string_view to_string(PerfCounter counter);

struct PerfReading {
  std::uint64_t value = 0;
  std::uint64_t time_enabled = 0;  // ns the counter was enabled
  std::uint64_t time_running = 0;  // ns it was actually counting (less when multiplexed)
};

// The system calls the backend needs, behind an interface so tests can stand in for the kernel.
class PerfEventApi {
 public:
  virtual ~PerfEventApi() = default;
  // A file descriptor, or -errno. group_fd -1 opens a group leader (or a lone counter).
  virtual int open(PerfCounter counter, int group_fd, bool as_group) = 0;
  virtual void close(int fd) = 0;
  virtual void reset_and_enable(int fd, bool whole_group) = 0;
  virtual void disable(int fd, bool whole_group) = 0;
  // Group leader (whole_group): one reading per member in open order. Lone counter: out.size() == 1.
  // False on error.
  virtual bool read(int fd, bool whole_group, std::span<PerfReading> out) = 0;
};

// The real perf_event_open(2).
std::unique_ptr<PerfEventApi> make_linux_perf_event_api();

enum class PerfMode { group, individual, unavailable };

class LinuxPerfBackend final : public MeasurementBackend {
 public:
  explicit LinuxPerfBackend(std::unique_ptr<PerfEventApi> api = make_linux_perf_event_api());
  ~LinuxPerfBackend() override;
  LinuxPerfBackend(const LinuxPerfBackend&) = delete;
  LinuxPerfBackend& operator=(const LinuxPerfBackend&) = delete;

  void begin() override;
  void end() override;
  // Pushes, in section "host_pmu", per-iteration counts (cycles, instructions), ratios (ipc,
  // branch_miss_pct, cache_miss_pct) and per-sample counts (task_clock_ms, context_switches,
  // page_faults) for the counters that opened.
  void collect(const SampleWindow& window, SampleMeasurement& out) override;
  std::string_view label() const override { return "linux-perf"; }
  std::vector<Diagnostic> diagnostics() const override;
  // The counters follow the calling thread: the window's time covers the workers, its counts do not.
  std::string concurrent_gap() const override {
    return "the host counters count the calling thread only: the workers' cycles and instructions are not in "
           "the host_pmu metrics (the time covers them)";
  }

  PerfMode mode() const { return mode_; }
  bool has(PerfCounter counter) const;

 private:
  bool open_group();
  bool open_individually(const std::function<bool(PerfCounter)>& wanted);  // true if any opened
  void close_all();

  std::unique_ptr<PerfEventApi> api_;
  PerfMode mode_ = PerfMode::unavailable;
  std::array<int, kPerfCounterCount> fds_;  // -1: not open
  std::vector<PerfCounter> group_members_;  // open order within the group
  std::vector<PerfCounter> solo_;           // counters opened on their own
  std::vector<Diagnostic> setup_diagnostics_;
  double least_running_fraction_ = 1.0;  // lowest time_running / time_enabled seen (multiplexing)
};

}  // namespace diescope::harness
