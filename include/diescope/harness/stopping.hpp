// When to stop taking samples (nvbench's rule): once there are at least `min_samples`, the kept
// samples add up to at least `min_time_s` of measured time, and their relative noise (standard
// deviation over mean) is at or below `max_noise`. Whatever the noise, sampling stops at
// `timeout_s` of wall time (flushes, warm-up and dropped samples included) or at `max_samples`.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace diescope::harness {

struct StoppingCriteria {
  std::size_t min_samples = 10;
  double min_time_s = 0.5;
  double max_noise = 0.005;  // 0.5 %
  double timeout_s = 15.0;
  std::size_t max_samples = 100000;  // bounds memory for very short samples
};

enum class StopReason {
  converged,    // all three conditions met
  timeout,      // wall time ran out first
  max_samples,  // the sample cap was reached first
  failed,       // the backend kept failing (see the diagnostics)
  skipped,      // the benchmark asked to skip this parameter point
};
std::string_view to_string(StopReason reason);

class StoppingRule {
 public:
  explicit StoppingRule(StoppingCriteria criteria) : criteria_(criteria) {}

  // Adds one kept sample's measured duration; returns why to stop, if it is time to.
  std::optional<StopReason> add_sample(double sample_seconds, double wall_elapsed_s);
  // For windows that produced no kept sample (dropped or failed): only the timeout applies.
  std::optional<StopReason> check_timeout(double wall_elapsed_s) const;

  std::size_t count() const { return count_; }
  double accumulated_seconds() const { return total_; }
  double relative_noise() const;  // NaN below two samples
  const StoppingCriteria& criteria() const { return criteria_; }

 private:
  StoppingCriteria criteria_;
  std::size_t count_ = 0;
  double total_ = 0;
  double mean_ = 0;  // Welford's running mean and sum of squared deviations
  double m2_ = 0;
};

}  // namespace diescope::harness
