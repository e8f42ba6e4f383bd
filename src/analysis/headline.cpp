// The headline: GPU-Util, DIE-Util, gap and stranded capacity in whole tenths (docs/method.md,
// "Headline").
#include <algorithm>
#include <cmath>

#include "diescope/analysis/analyze.hpp"

namespace diescope::analysis {

namespace {
int tenths(double pct) {
  return static_cast<int>(std::lround(pct * 10.0));
}
}  // namespace

Headline make_headline(const HeadlineInputs& in) {
  Headline h;
  const bool have_die = std::isfinite(in.die_util_pct);
  const bool have_gpu = std::isfinite(in.gpu_util_pct);
  if (have_die) {
    h.die_util_tenths = tenths(std::clamp(in.die_util_pct, 0.0, 100.0));
    h.stranded_tenths = 1000 - *h.die_util_tenths;
  }
  if (have_gpu) h.gpu_util_tenths = tenths(in.gpu_util_pct);

  if (!have_die) {
    h.gap_missing = GapMissing::no_die_util;
  } else if (!have_gpu) {
    h.gap_missing = GapMissing::no_gpu_util;
  } else if (!(in.gpu_util_coverage_pct >= kMinGpuUtilCoveragePct)) {
    h.gap_missing = GapMissing::gpu_util_coverage_low;
  }
  if (h.gap_missing != GapMissing::none) {
    h.split_missing = SplitMissing::no_gap;
    return h;
  }

  const int gap = *h.gpu_util_tenths - *h.die_util_tenths;
  // NVML's GPU-Util is quantised: a gap within half of its resolution can't be told from zero.
  const double floor_tenths = in.gpu_util_resolution_pct * 10.0 / 2.0;
  if (std::abs(static_cast<double>(gap)) <= floor_tenths + 1e-9) {
    h.gap_tenths = 0;
    h.gap_within_noise_floor = true;
    h.active_tenths = 0;
    h.idle_tenths = *h.stranded_tenths;
  } else if (gap > 0) {
    h.gap_tenths = gap;
    h.active_tenths = gap;
    h.idle_tenths = 1000 - *h.gpu_util_tenths;
  } else {
    // A real negative gap: the busiest unit is busy while GPU-Util does not see it, so time with
    // nothing running and time with capacity left over can't be told apart.
    h.gap_tenths = gap;
    h.split_missing = SplitMissing::negative_gap;
    h.uncounted_limiting_unit = in.uncounted_limiting_unit;
  }
  return h;
}

}  // namespace diescope::analysis
