// Summary statistics over one benchmark's samples. Percentiles interpolate linearly between the
// two nearest ranks (rank = p * (n - 1) on the sorted values), the same rule as numpy's default,
// so a hand computation in a test or a spreadsheet gives the same number.
#pragma once

#include <cstddef>
#include <limits>
#include <span>

namespace diescope::harness {

struct Summary {
  static constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  std::size_t count = 0;
  double mean = kNaN;
  double median = kNaN;
  double p95 = kNaN;
  double min = kNaN;
  double max = kNaN;
  double stddev = kNaN;  // sample standard deviation (n - 1); NaN below two values

  // Standard deviation over mean: the "noise" the stopping rule compares with its target.
  double relative_noise() const;
};

// NaN values are left out (a sample that could not produce a value); an empty input gives count 0
// and NaN for every statistic.
Summary summarize(std::span<const double> values);

// `sorted` must be ascending and free of NaN; p in [0, 1]. NaN when empty.
double percentile_of_sorted(std::span<const double> sorted, double p);

}  // namespace diescope::harness
