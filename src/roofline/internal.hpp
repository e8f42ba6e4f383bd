// What the roofline part's files share (one definition each, so the part also compiles as one file:
// docs/building.md#compile-time).
#pragma once

#include <limits>

namespace diescope::roofline::detail {

// A figure that is not available is NaN, never 0.
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace diescope::roofline::detail
