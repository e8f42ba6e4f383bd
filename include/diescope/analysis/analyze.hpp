// The method's analysis (docs/method.md): from a recording to the figures a report prints.
// It never talks to a GPU; it reads a RecordSource in one streaming pass per record kind, in
// memory that does not grow with the recording's length.
#pragma once

#include <span>
#include <string>

#include "diescope/analysis/result.hpp"
#include "diescope/recording/source.hpp"

namespace diescope {

// The method's thresholds (docs/method.md names each). Chosen, not measured (seed 000).
// A unit must have a value for at least this share of the usable chip time to be the limiting unit.
inline constexpr double kMinLimitingAvailabilityPct = 90.0;
// A unit whose time-weighted mean is under this share of its peak is idle: never the limiting unit.
inline constexpr double kMinBusyPct = 1.0;
// GPU-Util must cover this share of the chip-sampled time for the gap and the split to be computed.
inline constexpr double kMinGpuUtilCoveragePct = 90.0;
// Usable chip samples must cover this share of the span (or of the scheduled counter time) or the
// result is partial.
inline constexpr double kMinChipCoveragePct = 90.0;
// A partial result shows GPU-Util over the whole span when NVML covered at least this share of it.
inline constexpr double kMinWholeSpanGpuUtilCoveragePct = 90.0;
// An NVML GPU-Util sample is booked to at most this long before its timestamp (NVML's longest
// documented averaging period).
inline constexpr TimeNs kMaxNvmlPeriodNs = kNsPerSecond;

struct AnalysisOptions {
  bool use_window = true;  // summarise the steady window between markers when there is one
};

// Throws InputError when a stream breaks the RecordSource promises (time order, column counts).
Analysis analyze(const RecordSource& source, const AnalysisOptions& options = {});

// DIE-Util of one sample: the busiest available unit, as read (not clamped). NaN when no unit is
// available. `engines` holds the engine values matched to this sample (may be empty). Non-finite
// values are unavailable.
double die_util_of_sample(std::span<const double> units, std::span<const double> engines);

// What the headline is computed from; analyze() fills it from a span's results.
struct HeadlineInputs {
  double gpu_util_pct = kNaN;
  double gpu_util_coverage_pct = kNaN;  // share of the chip-sampled time GPU-Util covers
  double die_util_pct = kNaN;           // already clamped to 0..100
  double gpu_util_resolution_pct = 1;   // meta.gpu_util_resolution_pct
  std::string gpu_util_reason;          // why GPU-Util is NaN, when it is
  std::string die_util_reason;          // why DIE-Util is NaN, when it is
  // Label of the limiting unit when it is one GPU-Util does not count (a video engine), else empty:
  // names the likely cause of a negative gap.
  std::string uncounted_limiting_unit;
};

// The headline in whole tenths, from rounded inputs so that stranded = idle + active exactly, with
// the noise floor (half of GPU-Util's resolution) applied to the gap.
Headline make_headline(const HeadlineInputs& in);

}  // namespace diescope
