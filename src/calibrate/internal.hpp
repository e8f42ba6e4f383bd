// Helpers the calibrate part's files share (one definition each, so the part also compiles as one
// file: docs/building.md#compile-time).
#pragma once

#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace diescope::calibrate::detail {

// A figure that is not available is NaN, never 0.
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

inline bool positive_finite(double x) {
  return std::isfinite(x) && x > 0;
}

inline std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : std::string(sep)) + p;
  return out;
}

}  // namespace diescope::calibrate::detail
