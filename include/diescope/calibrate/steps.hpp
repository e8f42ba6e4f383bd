// How a calibration is laid out and judged: a plan of steps and sweeps, what the device side
// answered for it (DeviceAnswers), and build_calibration, which judges each unit and fits the
// device model into a CalibrationFile. Pure: nothing here touches a GPU (tests/calibrate/steps_test.cpp).
// calibrate/calibrate.hpp runs the plan on a GPU; calibrate/device_protocol.hpp turns the device
// side's output into DeviceAnswers.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "diescope/calibrate/calibration_file.hpp"
#include "diescope/calibrate/device_model.hpp"
#include "diescope/calibrate/verdict.hpp"
#include "diescope/recording/records.hpp"

namespace diescope::calibrate {

// What calibrate knows about the device before it runs anything.
struct DeviceFacts {
  recording::GpuIdentity gpu;               // model, driver, chip, SMs, L2, compute capability
  std::string unit_table;                   // the unit table the sampler reads, e.g. "hopper-gh100"
  std::vector<recording::ColumnDef> units;  // its DIE-Util units, with their recipes
};

// The work each step runs; the device side maps each to a kernel.
enum class StepWorkload {
  ffma,        // FFMA loop, one block per loaded SM (fp32, judged)
  imad,        // integer multiply-add alone (fp32, reported: only the heavy half runs it)
  ffma_imad,   // FFMA and IMAD mixed (fp32, reported)
  stream,      // STREAM triad over vectors well past L2 (dram)
  bf16_mma,    // bf16 mma.sync with a counted FLOP total (tensor, before Hopper)
  bf16_wgmma,  // bf16 warpgroup MMA (wgmma) with a counted FLOP total (tensor, Hopper)
  dfma,        // DFMA loop (fp64)
  l1_load,     // 128-bit global loads that hit L1 (ldst; read by either Hopper Load/store counter)
  l2_read,     // L1-bypassing loads over a buffer that fits L2 (l2)
};
std::string_view step_workload_name(StepWorkload workload);

// The judged workload of a checked unit on a chip of this compute capability (major*10+minor), or
// nothing when the unit has no check. Hopper's tensor check runs wgmma: mma.sync reaches two thirds
// of GH100's dense rate, so it cannot test the dense peak there.
std::optional<StepWorkload> judged_workload(std::string_view unit, int compute_capability);
// Why a unit that has a check cannot be checked on a chip of this compute capability (its
// instructions do not exist there), naming the unit, the instruction and the capability; empty when
// it can, or when the unit has no check at all. Turing (7.5) has no bf16 mma.sync: no tensor check.
std::string unavailable_check(std::string_view unit, int compute_capability);

// A checked unit the plan leaves out on this GPU, with unavailable_check's reason.
struct UnavailableCheck {
  std::string unit;
  std::string reason;
};

struct StepPlan {
  std::string unit;  // the unit it checks
  std::string name;  // "ffma 66/132 SMs"
  StepWorkload workload = StepWorkload::ffma;
  StepRole role = StepRole::judged;
  int loaded_sms = 0;
  double seconds = 0;  // how long the counter window should be
};

struct StreamPlan {
  std::uint64_t elements = kStreamDefaultElements;
  int repeats = kStreamDefaultRepeats;
};
struct WorkingSetPlan {
  std::int64_t m = 256, n = 1024;
  std::vector<std::int64_t> ks;  // 256 to 65536 in powers of two
  int repeats = 10;
};
struct IssuePlan {
  std::int64_t m = 512,
               n = 512;  // not the working-set sweep's shape, so predicting it is not reading the fit back
  std::vector<std::int64_t> ks;  // 256 to 32768 in powers of two
  int repeats = 10;
};
struct LaunchGeometry {
  int bm = 32, bn = 32, bk = 8, tm = 4, tn = 4;  // block tile and thread tile
  int threads() const { return (bm / tm) * (bn / tn); }
  std::string name() const;  // "32x32x8/4x4"
};
struct LaunchPlan {
  std::vector<LaunchGeometry> geometries;  // 32x32x8/4x4 (64 threads) and 64x64x8/4x4 (256)
  std::vector<std::int64_t> sizes;         // square outputs, 32 to 4096 in powers of two
  // Per geometry (same order), the sizes it is timed at: the sizes its block tile divides. The plan
  // sends them, so the device side times exactly these and refuses any other.
  std::vector<std::vector<std::int64_t>> sizes_of;
  double target_ops = 2147483648.0;  // about 2^31 operations per kernel
  std::int64_t max_k = std::int64_t{1} << 20;
  int repeats = 10;
};

struct CalibrationPlan {
  bool quick = false;
  std::vector<StepPlan> steps;
  // Units with a check that cannot run on this GPU; build_calibration writes each as no_check.
  std::vector<UnavailableCheck> unavailable;
  StreamPlan stream;
  // Sweeps a quick check leaves out are not run at all (the file then says so).
  bool run_working_set = true, run_issue = true, run_launch = true;
  WorkingSetPlan working_set;
  IssuePlan issue;
  LaunchPlan launch;
  // Rough time each sweep takes, for the progress line's time left (planned_seconds).
  double stream_seconds = 5, working_set_seconds = 20, issue_seconds = 20, launch_seconds = 30;
};

// The tiled contraction's leaves: the geometries diescope-workload has a kernel for
// (docs/calibration.md#the-sweeps).
const std::vector<LaunchGeometry>& tiled_contraction_leaves();
// Why `geometry` is not a leaf of the tiled contraction at square output `size`, naming both; empty
// when it is one. Not a leaf: the family has no kernel for the geometry, or its block tile does not
// divide the size (the kernel has no range guards).
std::string not_a_leaf(const LaunchGeometry& geometry, std::int64_t size);
// Fills plan.sizes_of (each geometry's sizes its tile divides), then throws UsageError naming the
// first geometry that is not a leaf at one of its sizes, or that has no size at all.
void settle_launch_sizes(LaunchPlan& plan);

// Loads, most first: every SM, half, a quarter, one (132 -> 132, 66, 33, 1; the method's GB205
// ladder 46 -> 46, 23, 11, 1). A quick check takes every SM and a quarter. Repeats are dropped.
std::vector<int> load_ladder(int sm_count, bool quick);
inline constexpr double kFullStepSeconds = 5;
inline constexpr double kQuickStepSeconds = 2;

// Steps for every unit of `facts.units` that has a rule, at every load of the ladder; FP32 adds its
// two reported steps at full load.
CalibrationPlan plan_calibration(const DeviceFacts& facts, bool quick);

// Where a calibration is, for the progress line (progress_at in calibrate/device_protocol.hpp).
struct Progress {
  int index = 0;  // 1-based, of `total`
  int total = 0;
  std::string name;         // what is running now
  double seconds_left = 0;  // planned time of this and what follows
};

// What the device side answered for a plan: the steps it measured (real timings and counter
// readings, NaN for what it could not read) and the sweeps' points (empty when not run).
struct DeviceAnswers {
  std::vector<MeasuredStep> steps;  // any order: matched to the plan by name
  std::vector<StreamTiming> stream;
  std::vector<WorkingSetPoint> working_set;
  std::vector<WorkingSetPoint> reread;  // the re-read sweep, in the working-set form
  std::vector<IssuePoint> issue;
  std::vector<LaunchPoint> launch;
};

struct RunInfo {
  std::string date;    // UTC, format_utc_date
  std::string commit;  // build_commit() normally
};

// The measured step of each planned step, in the plan's order and with the plan's role. Each
// answer is used once; a planned step with no answer (the device side failed before it) comes back
// with no reading and no work, so its verdict shows it as not counted. Answers the plan does not
// name are left out.
std::vector<MeasuredStep> steps_in_plan_order(const CalibrationPlan& plan, std::vector<MeasuredStep> answers);

// Judges every unit with steps, fits the device model and returns the whole file to write. Units
// with a rule but no step (not in the table) are not listed.
CalibrationFile build_calibration(const DeviceFacts& facts, const CalibrationPlan& plan,
                                  const DeviceAnswers& answers, const RunInfo& info);

// Fits the device model from the sweeps' points: the STREAM ceiling, then the cache capacity of
// both working-set sweeps with that ceiling as the DRAM rate, the launch fill over the device's
// SMs, and the issue rate normalised by the fitted fill where there is one.
DeviceModel fit_device_model(DeviceModel points, const recording::GpuIdentity& gpu);

}  // namespace diescope::calibrate
