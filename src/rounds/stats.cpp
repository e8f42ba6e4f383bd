#include "diescope/rounds/stats.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace diescope::rounds {

namespace {

// t(0.975, df) for df = 1..30, the usual table values to 6 decimals.
constexpr std::array<double, 30> kT975 = {
    12.706205, 4.302653, 3.182446, 2.776445, 2.570582, 2.446912, 2.364624, 2.306004, 2.262157, 2.228139,
    2.200985,  2.178813, 2.160369, 2.144787, 2.131450, 2.119905, 2.109816, 2.100922, 2.093024, 2.085963,
    2.079614,  2.073873, 2.068658, 2.063899, 2.059539, 2.055529, 2.051831, 2.048407, 2.045230, 2.042272,
};

}  // namespace

double t_quantile_975(int df) {
  if (df < 1) return analysis::kNaN;
  if (df <= static_cast<int>(kT975.size())) return kT975[static_cast<std::size_t>(df - 1)];
  // Cornish-Fisher expansion of Student's t quantile around the normal one (Abramowitz & Stegun
  // 26.7.5), four terms; at df = 30 it already agrees with the table to 1e-6.
  const double z = kNormalQuantile975;
  const double z2 = z * z;
  const double z3 = z2 * z, z5 = z3 * z2, z7 = z5 * z2, z9 = z7 * z2;
  const double g1 = (z3 + z) / 4;
  const double g2 = (5 * z5 + 16 * z3 + 3 * z) / 96;
  const double g3 = (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / 384;
  const double g4 = (79 * z9 + 776 * z7 + 1482 * z5 - 1920 * z3 - 945 * z) / 92160;
  const double v = df;
  return z + g1 / v + g2 / (v * v) + g3 / (v * v * v) + g4 / (v * v * v * v);
}

Summary summarise(std::span<const double> values) {
  Summary s;
  s.n = static_cast<int>(values.size());
  if (s.n == 0) {
    s.reason = "no kept round has a value";
    return s;
  }
  double sum = 0;
  s.min = values.front();
  s.max = values.front();
  for (double v : values) {
    sum += v;
    s.min = std::min(s.min, v);
    s.max = std::max(s.max, v);
  }
  s.mean = sum / s.n;
  if (s.n == 1) {
    s.reason = "one kept round has a value: no spread";
    return s;
  }
  // Two passes: deviations from the mean, so large equal offsets do not cancel digits.
  double squares = 0;
  for (double v : values) squares += (v - s.mean) * (v - s.mean);
  s.sd = std::sqrt(squares / (s.n - 1));
  s.t = t_quantile_975(s.n - 1);
  s.half_width = s.t * s.sd / std::sqrt(static_cast<double>(s.n));
  s.low = s.mean - s.half_width;
  s.high = s.mean + s.half_width;
  return s;
}

}  // namespace diescope::rounds
