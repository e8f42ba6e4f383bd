// The method's calibrate verdicts (docs/calibration.md#verdicts), as pure functions
// over measured steps. A step is one workload of known size run at one load (all SMs or fewer)
// while the unit's counter is sampled; the device side measures it (calibrate/device_protocol.hpp),
// this file judges it.
//
// Two kinds of check:
//  - expected reading: the work counted, the pipe's peak per SM per cycle, the SMs, the clock the
//    kernels measured and the time give what the counter should read; each step must read it within
//    a tolerance (FP32, FP64, Tensor).
//  - proportional: the peak the reading implies (work rate / reading) must agree across loads, and
//    where there is a byte counter its total must match the bytes launched (DRAM, L2, Load/store).
// Either kind may also require the reading at full load to reach a ceiling.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "diescope/recording/records.hpp"

namespace diescope::calibrate {

// ---- The method's thresholds (docs/calibration.md#the-methods-checks). Changing one changes the
// method version. ----
inline constexpr double kRelativeTolerance = 0.01;    // 1% of the expected reading
inline constexpr double kMinTolerancePoints = 0.1;    // and at least 0.1 point
inline constexpr double kMinCoverage = 0.99;          // work covers >= 99% of the window
inline constexpr double kImpliedPeakSpread = 0.03;    // implied peaks within 3%
inline constexpr double kBytesRatioTolerance = 0.05;  // counted bytes within 5%
inline constexpr double kSmPipeCeilingPct = 90;       // FP32 at full load
inline constexpr double kMemoryCeilingPct = 80;       // DRAM at full load
// diescope's own: a clock is steady over a set of steps when its lowest and highest readings are
// within 0.5% (NVML gives whole MHz; memory clocks move in steps of hundreds of MHz when they move).
inline constexpr double kSteadyClockSpread = 0.005;
// A proportional check needs at least this many distinct loads, and so does an expected-reading
// check: the method runs every unit on all SMs and on fewer (docs/calibration.md#verdicts).
inline constexpr int kMinLoads = 2;

enum class Verdict { pass, fail, inconclusive, no_check };
std::string_view verdict_name(Verdict verdict);  // "pass", "fail", "inconclusive", "no_check"
std::optional<Verdict> verdict_from_name(std::string_view name);

// Judged steps decide the verdict; reported steps (FP32's integer multiply-add alone and mixed with
// FFMA) are evaluated the same way and shown, never judged.
enum class StepRole { judged, reported };
std::string_view step_role_name(StepRole role);

enum class CheckKind { expected_reading, proportional };
enum class SteadyClock { none, sm, memory };

struct UnitRule {
  std::string unit;  // the unit's key in the unit tables: "fp32", "dram", ...
  std::string work;  // what a step's work counts, e.g. "FMA-pipe warp instructions"
  CheckKind kind = CheckKind::expected_reading;
  // expected_reading: pass when |reading - expected| <= max(relative x expected, min points).
  double relative_tolerance = 0;
  double min_tolerance_points = 0;
  // proportional: (highest implied peak / lowest) - 1 <= spread.
  double implied_peak_spread = 0;
  bool per_sm_cycle = false;                     // implied peak per SM per cycle (SM-clocked counters)
  SteadyClock steady_clock = SteadyClock::none;  // the clock that must hold still across the steps
  std::optional<double> bytes_ratio_tolerance;   // |counted / launched - 1| <= this; nullopt: no byte counter
  std::optional<double> ceiling_min_pct;  // the full-load reading must reach this; nullopt: recorded only
  std::string why;                        // why these tolerances (docs/calibration.md argues each)
};

// FP32 and DRAM as the method defines them, then diescope's checks for Tensor, FP64, Load/store and L2.
const std::vector<UnitRule>& unit_rules();
const UnitRule* unit_rule(std::string_view unit);

struct Interval {
  recording::TimeNs start_ns = 0;
  recording::TimeNs end_ns = 0;
};

// What the device side measured for one step. NaN marks what could not be read.
struct MeasuredStep {
  std::string unit;  // the unit checked
  std::string name;  // e.g. "ffma 66/132 SMs"
  StepRole role = StepRole::judged;
  int loaded_sms = 0;                    // SMs the work ran on
  int sm_count = 0;                      // the device's SMs: the counter's .avg runs over all of them
  double work = 0;                       // counted work over all of work_intervals (the rule's `work`)
  double peak_per_sm_per_cycle = 0;      // expected_reading: the pipe's peak in the same measure
  std::vector<Interval> work_intervals;  // the work's own timestamps (GPU timer, on the host timeline)
  Interval counter_window;               // the span the counter reading covers
  double reading_pct = 0;                // the unit's counter over the window, percent of peak
  double counted_bytes = 0;              // the byte counter's total over the window (NaN: none)
  double sm_clock_mhz = 0;               // the clock the kernels measured (clock64 over globaltimer)
  double mem_clock_min_mhz = 0;          // NVML memory clock over the window, lowest and highest
  double mem_clock_max_mhz = 0;
};

// Nanoseconds of `window` inside the union of `work` (overlapping intervals counted once).
double covered_ns(const std::vector<Interval>& work, Interval window);
// Length of the union of `work`.
double union_ns(const std::vector<Interval>& work);
// Share of the counter window the work's own timestamps cover, 0..1 (NaN for an empty window).
double coverage(const MeasuredStep& step);
// The work done inside the window, taking the work's rate as even over its own time.
double work_in_window(const MeasuredStep& step);
// What the counter should read: work in the window / (SMs x peak per SM per cycle x clock x window
// seconds) x 100. NaN when an input is missing.
double expected_reading_pct(const MeasuredStep& step);
// max(relative x expected, min points).
double tolerance_points(const UnitRule& rule, double expected_pct);
// Work rate in the window / (reading / 100); per SM per cycle when the rule says so. NaN when the
// reading is not positive.
double implied_peak(const UnitRule& rule, const MeasuredStep& step);

struct StepCheck {
  std::string name;
  StepRole role = StepRole::judged;
  int loaded_sms = 0;
  double coverage = 0;
  bool counted = false;     // usable: covered, read, and its inputs known
  std::string not_counted;  // why not, when not
  double reading_pct = 0;
  // expected_reading
  double expected_pct = 0;
  double tolerance_pts = 0;
  std::optional<bool> within;  // set for counted steps of an expected-reading check
  // proportional
  double implied_peak = 0;
  double bytes_ratio = 0;  // counted / launched in the window (NaN without a byte counter)
  double sm_clock_mhz = 0;
  double mem_clock_min_mhz = 0, mem_clock_max_mhz = 0;
};

struct UnitCheck {
  std::string unit;
  Verdict verdict = Verdict::inconclusive;
  std::string reason;      // why, in one line (every failing test, joined)
  double ceiling_pct = 0;  // the highest counted full-load reading (NaN with ceiling_reason)
  std::string ceiling_reason;
  double implied_peak_spread = 0;  // proportional: highest / lowest - 1 (NaN when not computed)
  std::vector<StepCheck> steps;
};

StepCheck check_step(const UnitRule& rule, const MeasuredStep& step);
// Judges the unit from the steps whose `unit` is the rule's (others are ignored).
UnitCheck check_unit(const UnitRule& rule, const std::vector<MeasuredStep>& steps);

}  // namespace diescope::calibrate
