#include "diescope/harness/clock.hpp"

namespace diescope::harness {

bool is_throttled(double clock_mhz, double reference_mhz, const ThrottlePolicy& policy) {
  return reference_mhz > 0 && clock_mhz < policy.threshold * reference_mhz;
}

}  // namespace diescope::harness
