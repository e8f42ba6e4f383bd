#include "diescope/harness/stopping.hpp"

#include <cmath>
#include <limits>

namespace diescope::harness {

std::string_view to_string(StopReason reason) {
  switch (reason) {
    case StopReason::converged:
      return "converged";
    case StopReason::timeout:
      return "timeout";
    case StopReason::max_samples:
      return "max-samples";
    case StopReason::failed:
      return "failed";
    case StopReason::skipped:
      return "skipped";
  }
  return "unknown";
}

double StoppingRule::relative_noise() const {
  if (count_ < 2 || mean_ == 0) return std::numeric_limits<double>::quiet_NaN();
  return std::sqrt(m2_ / static_cast<double>(count_ - 1)) / std::abs(mean_);
}

std::optional<StopReason> StoppingRule::add_sample(double sample_seconds, double wall_elapsed_s) {
  ++count_;
  total_ += sample_seconds;
  const double delta = sample_seconds - mean_;
  mean_ += delta / static_cast<double>(count_);
  m2_ += delta * (sample_seconds - mean_);

  const double noise = relative_noise();
  // With one sample the noise is unknown; min_samples of 0 or 1 therefore still needs a second
  // sample unless the noise target is unreachable anyway.
  if (count_ >= criteria_.min_samples && total_ >= criteria_.min_time_s && !std::isnan(noise) &&
      noise <= criteria_.max_noise) {
    return StopReason::converged;
  }
  if (auto timeout = check_timeout(wall_elapsed_s)) return timeout;
  if (criteria_.max_samples > 0 && count_ >= criteria_.max_samples) return StopReason::max_samples;
  return std::nullopt;
}

std::optional<StopReason> StoppingRule::check_timeout(double wall_elapsed_s) const {
  if (wall_elapsed_s >= criteria_.timeout_s) return StopReason::timeout;
  return std::nullopt;
}

}  // namespace diescope::harness
