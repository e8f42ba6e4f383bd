// How `diescope calibrate` talks to its device side, and what it makes of the answers. Pure: tested
// on the CPU (tests/calibrate/device_protocol_test.cpp).
//
// `diescope calibrate` (no CUDA) writes the plan as JSON (plan_request_json) and runs
// `diescope-workload calibrate --plan FILE` under the run machinery (collect/run.hpp), so the
// sampler child reads the chip's counters over the whole calibration. The workload runs each step
// and sweep in order and prints one JSON object per line on stdout, each with a "calibrate" key:
//
//   {"calibrate":"device", "device":{...,"sm_count":132,"l2_bytes":52428800,...}}
//   {"calibrate":"begin", "index":3, "name":"ffma 33/132 SMs"}          a step or sweep starts
//   {"calibrate":"step", "index":3, "name":..., "unit":"fp32", "workload":"ffma", "loaded_sms":33,
//    "sm_count":132, "work":1.2e12, "peak_per_sm_per_cycle":4, "sm_clock_mhz":1980.1,
//    "launches":[[start_ns,end_ns],...], "window":[start_ns,end_ns], ...}
//   {"calibrate":"stream"|"working_set"|"issue"|"launch", "points":[...]}
//
// Times are ns on the host's CLOCK_REALTIME (the samples' timeline): the workload maps its kernels'
// %globaltimer stamps with an offset it measures by bracketing a stamp kernel with the host clock.
// `launches` are the work's own intervals (one per launch: the earliest block start to the latest
// block end); `window` is the span the workload ran at steady state (its launches less a settling
// margin at each end), inside which the counter samples are taken.
#pragma once

#include <cstdint>
#include <deque>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "diescope/calibrate/steps.hpp"

namespace diescope::calibrate {

// The plan as the workload reads it.
nlohmann::json plan_request_json(const CalibrationPlan& plan);

// One step as the workload reported it.
struct WorkloadStep {
  int index = 0;
  std::string unit, name, workload;
  int loaded_sms = 0;
  int sm_count = 0;
  double work = 0;                   // counted over all launches
  double peak_per_sm_per_cycle = 0;  // NaN when the workload has none for the chip
  double sm_clock_mhz = 0;           // NaN when not measured
  std::vector<Interval> launches;
  Interval window;
};

// Throws Error (exit code 3) naming the field that is missing or of the wrong type.
WorkloadStep parse_workload_step(const nlohmann::json& line);
std::vector<StreamTiming> parse_stream_timings(const nlohmann::json& line);
std::vector<WorkingSetPoint> parse_working_set(const nlohmann::json& line);
std::vector<IssuePoint> parse_issue_points(const nlohmann::json& line);
std::vector<LaunchPoint> parse_launch_points(const nlohmann::json& line);

// The re-read sweep (diescope's, beside the seed's contraction sweep): points in the
// working-set form (k = passes, working set = distinct = the buffer, requested = passes x buffer),
// fitted by fit_capacity with the DRAM rate, written as the file's device_model.cache_reread in
// the same form as device_model.cache.
nlohmann::json reread_cache_json(const std::vector<WorkingSetPoint>& points, std::optional<double> dram_rate);

// One chip sample as the calibration reads it: the unit's value (percent of peak) and the byte
// count beside it (NaN when none).
struct CounterSample {
  TimeNs start_ns = 0, end_ns = 0;
  double value = 0;
  double bytes = 0;
};
struct MemClockReading {
  TimeNs ts_ns = 0;
  double mem_mhz = 0;
};

// The MeasuredStep of one step: the counter window is the span of the samples that lie wholly
// inside the step's steady window and have a value; the reading is their time-weighted mean; the
// byte total is theirs scaled to the window where a sample had no byte count; the memory clock is
// the lowest and highest NVML reading inside the window (NaN when none). A step with no such sample
// gets reading NaN and an empty window, so the verdict shows it as not counted.
MeasuredStep measure_step(const WorkloadStep& step, const std::vector<CounterSample>& samples,
                          const std::vector<MemClockReading>& clocks, StepRole role);

// What the device side answered, replayed to run_calibration in the plan's order. A step the
// workload never reported (it failed before it) comes back with no reading and no work.
class RecordedStepRunner final : public StepRunner {
 public:
  std::deque<MeasuredStep> steps;
  std::vector<StreamTiming> stream;
  std::vector<WorkingSetPoint> working_set;
  std::vector<IssuePoint> issue;
  std::vector<LaunchPoint> launch;

  MeasuredStep run_step(const StepPlan& plan) override;
  std::vector<StreamTiming> time_stream(const StreamPlan&) override { return stream; }
  std::vector<WorkingSetPoint> time_working_set(const WorkingSetPlan&) override { return working_set; }
  std::vector<IssuePoint> time_issue_sweep(const IssuePlan&) override { return issue; }
  std::vector<LaunchPoint> time_launch_sweep(const LaunchPlan&) override { return launch; }
};

// "1 min 05 s", "42 s", "0 s".
std::string format_time_left(double seconds);
// The progress line for a terminal: "[#######.............]  7/17  ffma 33/132 SMs  about 1 min 05 s left"
// (bar `bar_width` wide); without a terminal a plain line: "diescope: step 7/17: ffma 33/132 SMs (about 1 min 05 s left)".
std::string progress_text(const Progress& progress, bool terminal, int bar_width = 24);

// The time a step or sweep should take: planned seconds plus what the device side adds around it
// (settling margins, sizing launches), used for the time left.
double planned_seconds(const CalibrationPlan& plan, int index);
// Step and sweep names in the order the workload runs them (steps, then stream and the sweeps).
std::vector<std::string> planned_names(const CalibrationPlan& plan);

// The summary `diescope calibrate` prints: each unit's verdict, ceiling and reason, then the device
// model (bandwidth ceiling, cache capacity beside the driver's L2 size, issue rate, launch fill).
std::string summary_text(const CalibrationFile& file);

}  // namespace diescope::calibrate
