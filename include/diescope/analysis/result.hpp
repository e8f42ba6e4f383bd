// What the analysis of one recording concludes. Plain data: renderers (report/) print it, nothing
// here prints. A figure that could not be computed is NaN (or nullopt) beside a reason; never 0.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "diescope/recording/records.hpp"

namespace diescope {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A time-weighted summary of one column (unit, diagnostic or engine) over a span.
struct ColumnSummary {
  std::string key;
  double mean_pct = kNaN;          // time-weighted over the time the column was available
  double available_s = 0;          // time the column had a value
  double availability_pct = kNaN;  // available_s as a share of the usable chip-sampled time
  double max_sample_pct = kNaN;    // highest single sample, as read (not clamped)
};

// The headline in whole tenths of a point, computed from rounded inputs so the parts add up:
// stranded = idle + active, gap = active (docs/method.md#the-headline-gap-stranded-idle-active).
struct Headline {
  std::optional<int> gpu_util_tenths;
  std::optional<int> die_util_tenths;
  std::optional<int> gap_tenths;       // GPU-Util - DIE-Util; negative gaps are kept
  std::optional<int> stranded_tenths;  // 100 - DIE-Util
  std::optional<int> idle_tenths;      // 100 - GPU-Util (nothing running)
  std::optional<int> active_tenths;    // stranded while a kernel ran
  bool gap_within_noise_floor = false; // |gap| <= floor: counted as 0, idle takes all of stranded
  std::string gap_reason;              // why the gap is missing, when it is
  std::string split_reason;            // why idle/active are missing, when they are
};

struct ClockStats {
  double min_mhz = kNaN;
  double max_mhz = kNaN;
  double mean_mhz = kNaN;  // time-weighted
  int readings = 0;
};

// The figures of one span: the whole run, or the steady window.
struct SpanResults {
  TimeNs start_ns = 0;
  TimeNs end_ns = 0;
  double span_s = 0;

  // Chip samples.
  std::int64_t samples_read = 0;
  std::int64_t samples_used = 0;
  std::int64_t dropped_first = 0;   // first sample after each counters start
  std::int64_t dropped_broken = 0;  // NaN unit or diagnostic, empty span, missing end
  double chip_covered_s = 0;        // usable chip samples' time inside the span
  double chip_coverage_pct = kNaN;  // of the span, or of the scheduled counter time under duty
  double chip_scheduled_s = kNaN;   // time the counters were scheduled to run (duty runs)
  bool partial = false;             // chip coverage below the gate
  std::string partial_wording;      // "partial (counters covered N% of the run)" or empty

  // DIE-Util and its parts.
  double die_util_pct = kNaN;  // time-weighted busiest unit, mean clamped to 0..100
  std::string die_util_reason;
  std::vector<ColumnSummary> units;  // chip units then engines, in table order
  std::vector<ColumnSummary> diagnostics;
  std::optional<std::string> limiting_unit;
  std::string limiting_reason;  // why there is none

  // GPU-Util over the same time as the chip samples.
  double gpu_util_pct = kNaN;
  double gpu_util_coverage_pct = kNaN;  // share of chip-sampled time that GPU-Util covers
  std::string gpu_util_reason;
  std::string gpu_util_source;  // "samples", "polled", "samples+polled"
  // GPU-Util over the whole span, shown beside a partial result when NVML covered >= 90% of it.
  double gpu_util_whole_span_pct = kNaN;
  double gpu_util_whole_span_coverage_pct = kNaN;

  Headline headline;

  // Counted rates per second from raw totals, e.g. {"dram_bytes": 3.9e12}.
  std::map<std::string, double> rates_per_s;

  // Hardware state over the span.
  ClockStats sm_clock;
  ClockStats mem_clock;
  std::optional<std::vector<std::string>> throttle_reasons;  // nullopt: NVML could not say
  double power_limit_min_w = kNaN;
  double power_limit_max_w = kNaN;
};

struct WindowResults {
  bool found = false;
  std::string how;     // "markers", or why no window was found
  SpanResults results;
};

struct Hygiene {
  std::optional<int> compute_holders_max;   // nullopt: the process list could not be read
  std::optional<int> graphics_holders_max;
  int exited_holders = 0;
  std::vector<ClockJump> clock_jumps;
  std::vector<std::string> notes;
};

struct Analysis {
  int method = 0;
  RecordingMeta meta;
  SpanResults run;
  WindowResults window;
  Hygiene hygiene;
  std::vector<Note> notes;  // from the recording (sampler stopped, GPU-Util fallback, ...)
  bool truncated_input = false;
};

}  // namespace diescope
