// The headline: GPU-Util, DIE-Util, gap and stranded capacity in whole tenths (docs/method.md,
// "Headline").
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "diescope/analysis/analyze.hpp"

namespace diescope {

namespace {
int tenths(double pct) { return static_cast<int>(std::lround(pct * 10.0)); }
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
    h.gap_reason = "DIE-Util is not available: " + in.die_util_reason;
  } else if (!have_gpu) {
    h.gap_reason = "GPU-Util is not available: " + in.gpu_util_reason;
  } else if (!(in.gpu_util_coverage_pct >= kMinGpuUtilCoveragePct)) {
    char buf[160];
    std::snprintf(buf, sizeof buf,
                  "GPU-Util covered %.1f%% of the chip-sampled time, under the %.0f%% needed to "
                  "compare it with DIE-Util",
                  in.gpu_util_coverage_pct, kMinGpuUtilCoveragePct);
    h.gap_reason = buf;
  }
  if (!h.gap_reason.empty()) {
    h.split_reason = h.gap_reason;
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
    h.split_reason = "GPU-Util reads below DIE-Util by more than its noise floor";
    if (!in.uncounted_limiting_unit.empty()) {
      h.split_reason += " because the busiest unit, " + in.uncounted_limiting_unit +
                        ", is one GPU-Util does not count";
    } else {
      h.split_reason += " (the busiest unit may be one GPU-Util does not count, such as a video engine)";
    }
    h.split_reason += "; idle and active can't be separated";
  }
  return h;
}

}  // namespace diescope
