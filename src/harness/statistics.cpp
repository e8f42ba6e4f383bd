#include "diescope/harness/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace diescope::harness {

double Summary::relative_noise() const {
  if (count < 2 || !(mean != 0)) return kNaN;
  return stddev / std::abs(mean);
}

double percentile_of_sorted(std::span<const double> sorted, double p) {
  if (sorted.empty()) return Summary::kNaN;
  const double rank = std::clamp(p, 0.0, 1.0) * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(rank));
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  const double fraction = rank - static_cast<double>(below);
  return sorted[below] + fraction * (sorted[above] - sorted[below]);
}

Summary summarize(std::span<const double> values) {
  std::vector<double> sorted;
  sorted.reserve(values.size());
  for (double v : values) {
    if (!std::isnan(v)) sorted.push_back(v);
  }
  Summary s;
  if (sorted.empty()) return s;
  std::sort(sorted.begin(), sorted.end());
  s.count = sorted.size();
  const double n = static_cast<double>(s.count);
  double sum = 0;
  for (double v : sorted) sum += v;
  s.mean = sum / n;
  if (s.count >= 2) {
    double squares = 0;
    for (double v : sorted) squares += (v - s.mean) * (v - s.mean);
    s.stddev = std::sqrt(squares / (n - 1));
  }
  s.median = percentile_of_sorted(sorted, 0.5);
  s.p95 = percentile_of_sorted(sorted, 0.95);
  s.min = sorted.front();
  s.max = sorted.back();
  return s;
}

}  // namespace diescope::harness
