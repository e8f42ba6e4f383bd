// How `diescope calibrate` talks to its device side, and what it makes of the answers. Pure: tested
// on the CPU (tests/calibrate/device_protocol_test.cpp).
//
// calibrate_gpu (calibrate/calibrate.hpp; no CUDA) writes the plan as JSON (plan_request_json) and runs
// `diescope-workload calibrate --plan FILE` under the run machinery (collect/run.hpp), so the
// sampler child reads the chip's counters over the whole calibration. The workload runs each step
// and sweep in order and prints one JSON object per line on stdout, each with a "calibrate" key:
//
//   {"calibrate":"device", "device":{...,"sm_count":132,"l2_bytes":52428800,...}}
//   {"calibrate":"begin", "index":3, "name":"ffma 33/132 SMs"}          a step or sweep starts
//   {"calibrate":"step", "index":3, "name":..., "unit":"fp32", "workload":"ffma", "loaded_sms":33,
//    "sm_count":132, "work":1.2e12, "peak_per_sm_per_cycle":4, "sm_clock_mhz":1980.1,
//    "launches":[[start_ns,end_ns],...], "window":[start_ns,end_ns], ...}
//   {"calibrate":"stream"|"working_set"|"reread"|"issue"|"launch", "points":[...]}
//   {"calibrate":"done"}
//
// Times are ns on the host's CLOCK_REALTIME (the samples' timeline): the workload maps its kernels'
// %globaltimer stamps with an offset it measures by bracketing a stamp kernel with the host clock.
// `launches` are the work's own intervals (one per launch: the earliest block start to the latest
// block end); `window` is the span the workload ran at steady state (its launches less a settling
// margin at each end), inside which the counter samples are taken.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "diescope/calibrate/steps.hpp"
#include "diescope/recording/recording.hpp"

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

// The re-read sweep's "reread" line has the working-set form (k = passes, working set = distinct =
// the buffer, requested = passes x buffer) and is read by parse_working_set; build_calibration fits
// it beside the contraction sweep and writes it as device_model.cache_reread.

// Reads the workload's lines as they come. Lines that are not JSON objects with a "calibrate" key
// (the window markers, anything else the workload prints) are skipped.
class WorkloadLines {
 public:
  struct Begin {
    int index = 0;
    std::string name;
  };
  // Takes one line (without its newline); returns the step or sweep it begins, if it begins one.
  // Throws Error (exit code 3) for a step or sweep line missing a field.
  std::optional<Begin> read(const std::string& line);

  nlohmann::json device;            // the last "device" line's device object; null when none came
  std::vector<WorkloadStep> steps;  // in the order reported
  DeviceAnswers sweeps;             // the sweeps' points; its steps stay empty (measure_recorded_steps)
};

// What calibrate knows before it plans: the probe recording's GPU, unit table and units, with the
// SM count and L2 size from the workload's device line where it gives them as integers (CUDA's
// figures, which NVML may not have).
DeviceFacts device_facts(const recording::RecordingMeta& probe, const nlohmann::json& device);

// One chip sample as the calibration reads it: the unit's value (percent of peak) and the byte
// count beside it (NaN when none).
struct CounterSample {
  recording::TimeNs start_ns = 0, end_ns = 0;
  double value = 0;
  double bytes = 0;
};
struct MemClockReading {
  recording::TimeNs ts_ns = 0;
  double mem_mhz = 0;
};

// The MeasuredStep of one step: the counter window is the span of the samples that lie wholly
// inside the step's steady window and have a value; the reading is their time-weighted mean; the
// byte total is theirs scaled to the window where a sample had no byte count; the memory clock is
// the lowest and highest NVML reading inside the window (NaN when none). A step with no such sample
// gets reading NaN and an empty window, so the verdict shows it as not counted.
MeasuredStep measure_step(const WorkloadStep& step, const std::vector<CounterSample>& samples,
                          const std::vector<MemClockReading>& clocks, StepRole role);

// measure_step for each reported step, over the run's recording: each unit's column of the chip
// samples (DRAM with the dram_bytes count beside it) and NVML's memory clock. A step gets its
// plan's role; one the plan does not name is reported.
std::vector<MeasuredStep> measure_recorded_steps(const recording::Recording& recording,
                                                 const std::vector<WorkloadStep>& steps,
                                                 const CalibrationPlan& plan);

// "1 min 05 s", "42 s", "0 s".
std::string format_time_left(double seconds);
// The progress line for a terminal: "[#######.............]  7/17  ffma 33/132 SMs  about 1 min 05 s left"
// (bar `bar_width` wide); without a terminal a plain line: "diescope: step 7/17: ffma 33/132 SMs (about 1 min
// 05 s left)".
std::string progress_text(const Progress& progress, bool terminal, int bar_width = 24);

// The time a step or sweep should take: planned seconds plus what the device side adds around it
// (settling margins, sizing launches), used for the time left.
double planned_seconds(const CalibrationPlan& plan, int index);
// Step and sweep names in the order the workload runs them (steps, then stream and the sweeps).
std::vector<std::string> planned_names(const CalibrationPlan& plan);
// Where a calibration is when the workload begins step or sweep `index` (1-based) of the plan: the
// total is every step and sweep, the time left the planned seconds of this one and those after it.
Progress progress_at(const CalibrationPlan& plan, int index, std::string name);
// The line announcing the plan: "quick check hopper-gh100 on NVIDIA H200 (132 SMs), 15 steps and
// sweeps, about 41 s".
std::string plan_text(const DeviceFacts& facts, const CalibrationPlan& plan);

// The summary `diescope calibrate` prints: each unit's verdict, ceiling and reason, then the device
// model (bandwidth ceiling, cache capacity beside the driver's L2 size, issue rate, launch fill).
std::string summary_text(const CalibrationFile& file);

}  // namespace diescope::calibrate
