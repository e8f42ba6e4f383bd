// Clock-throttle detection (nvbench's rule): the SM clock is read after every sample; a sample taken
// while the clock was below `threshold` times the reference clock is dropped from the statistics,
// and the runner waits `recovery_delay` before the next one. The clock of each kept sample is
// recorded as the metric sm_clock_mhz. Reading clocks needs NVML; this interface keeps the harness
// free of it: an NVML adapter plugs in here, tests use scripted monitors.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace diescope::harness {

class ClockMonitor {
 public:
  virtual ~ClockMonitor() = default;
  // Current SM clock in MHz; nullopt when it cannot be read now.
  virtual std::optional<double> sm_clock_mhz() = 0;
  // The clock a healthy device runs at (its default application clock, else its maximum);
  // nullopt when unknown, which turns throttle detection off.
  virtual std::optional<double> reference_sm_clock_mhz() = 0;
  virtual std::string describe() const = 0;
};

using ClockMonitorFactory = std::function<std::unique_ptr<ClockMonitor>()>;

struct ThrottlePolicy {
  double threshold = 0.75;  // fraction of the reference clock
  std::chrono::duration<double> recovery_delay = std::chrono::milliseconds(50);
};

// True when `clock_mhz` is below threshold x reference.
bool is_throttled(double clock_mhz, double reference_mhz, const ThrottlePolicy& policy);

}  // namespace diescope::harness
