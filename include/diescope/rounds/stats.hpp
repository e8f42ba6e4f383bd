// Statistics across a bench's kept rounds: mean, sample standard deviation, range and the 95%
// Student-t interval of the mean. Rounds are few (5 by default), so the interval uses Student's t
// with n-1 degrees of freedom, not the normal 1.96.
#pragma once

#include <span>
#include <string>

#include "diescope/analysis/result.hpp"  // kNaN

namespace diescope::rounds {

inline constexpr double kIntervalLevel = 0.95;

// The 0.975 quantile of Student's t with `df` degrees of freedom: the multiplier of the standard
// error for a two-sided 95% interval. df 1..30 from a table (6 decimals); above 30 the
// Cornish-Fisher expansion in 1/df (within 1e-6 of the exact value there), which tends to the
// normal quantile 1.959964 as df grows. NaN for df < 1.
double t_quantile_975(int df);

// The normal distribution's 0.975 quantile, the limit of t_quantile_975 as df grows.
inline constexpr double kNormalQuantile975 = 1.959963984540054;

struct Summary {
  int n = 0;
  double mean = analysis::kNaN;
  double sd = analysis::kNaN;  // sample standard deviation (n-1 in the denominator)
  double min = analysis::kNaN;
  double max = analysis::kNaN;
  double t = analysis::kNaN;           // t_quantile_975(n-1)
  double half_width = analysis::kNaN;  // t * sd / sqrt(n)
  double low = analysis::kNaN;         // mean - half_width
  double high = analysis::kNaN;        // mean + half_width
  std::string reason;                  // why sd and the interval (or everything) are NaN, when they are
};

// Summarises finite values (the caller leaves out rounds without a value). n = 0: all NaN;
// n = 1: mean, min and max only.
Summary summarise(std::span<const double> values);

}  // namespace diescope::rounds
