// The device side's protocol on the CPU: the plan the workload reads, parsing and sorting its lines,
// the facts from the probe, making a step's counter window and reading from samples and from a
// recording (the 99% coverage rule applied to the result), the progress and its text, and the
// summary. Every figure is declared here; none is a measurement.
#include <gtest/gtest.h>

#include <cmath>

#include "diescope/calibrate/device_protocol.hpp"
#include "diescope/core/error.hpp"
#include "diescope/recording/memory_recording.hpp"
#include "helpers.hpp"

namespace diescope::calibrate {
namespace {

using nlohmann::json;
constexpr recording::TimeNs kMs = 1'000'000;
constexpr recording::TimeNs kT0 = 1'764'000'000'000'000'000;  // a realtime origin in 2025, in ns

using test::h200_facts;

// A step line as the workload prints it: `launches` of 20 ms back to back with 2 us gaps from kT0,
// window 250 ms in from each end.
json step_line(int launches, double work, recording::TimeNs gap_ns = 2000) {
  json intervals = json::array();
  recording::TimeNs t = kT0;
  for (int i = 0; i < launches; ++i) {
    intervals.push_back({t, t + 20 * kMs});
    t += 20 * kMs + gap_ns;
  }
  return json{{"calibrate", "step"},
              {"index", 1},
              {"name", "ffma 132/132 SMs"},
              {"unit", "fp32"},
              {"workload", "ffma"},
              {"loaded_sms", 132},
              {"sm_count", 132},
              {"work", work},
              {"peak_per_sm_per_cycle", 4},
              {"sm_clock_mhz", 1980.0},
              {"launches", intervals},
              {"window", {kT0 + 250 * kMs, t - gap_ns - 250 * kMs}}};
}

// 10 ms samples from `from` to `to` reading `value`, `bytes` each.
std::vector<CounterSample> samples(recording::TimeNs from, recording::TimeNs to, double value,
                                   double bytes = std::nan("")) {
  std::vector<CounterSample> out;
  for (recording::TimeNs t = from; t + 10 * kMs <= to; t += 10 * kMs)
    out.push_back({t, t + 10 * kMs, value, bytes});
  return out;
}

TEST(DeviceProtocol, PlanRequestCarriesEveryStepAndSweep) {
  const CalibrationPlan full = plan_calibration(h200_facts(), false);
  const json j = plan_request_json(full);
  ASSERT_EQ(j.at("steps").size(), full.steps.size());
  EXPECT_EQ(j["steps"][0]["index"], 1);
  EXPECT_EQ(j["steps"][0]["workload"], "ffma");
  EXPECT_EQ(j["steps"][0]["loaded_sms"], 132);
  EXPECT_EQ(j["steps"][5]["workload"], "ffma+imad");
  EXPECT_EQ(j["stream"]["elements"], 1 << 26);
  EXPECT_EQ(j["working_set"]["ks"].back(), 65536);
  EXPECT_EQ(j["launch"]["geometries"][1]["name"], "64x64x8/4x4");
  // Each geometry carries the sizes its block tile divides: 32x32 from 32, 64x64 from 64 (to 4096).
  EXPECT_EQ(j["launch"]["geometries"][0]["sizes"].size(), 8u);
  EXPECT_EQ(j["launch"]["geometries"][0]["sizes"][0], 32);
  EXPECT_EQ(j["launch"]["geometries"][1]["sizes"].size(), 7u);
  EXPECT_EQ(j["launch"]["geometries"][1]["sizes"][0], 64);
  const json q = plan_request_json(plan_calibration(h200_facts(), true));
  EXPECT_TRUE(q["working_set"].is_null() && q["issue"].is_null() && q["launch"].is_null());
  EXPECT_EQ(q["stream"]["repeats"], 3);
}

TEST(DeviceProtocol, ParsesAStepLine) {
  const WorkloadStep s = parse_workload_step(step_line(3, 1e9));
  EXPECT_EQ(s.name, "ffma 132/132 SMs");
  EXPECT_EQ(s.launches.size(), 3u);
  EXPECT_EQ(s.launches[1].start_ns, kT0 + 20 * kMs + 2000);
  EXPECT_DOUBLE_EQ(s.peak_per_sm_per_cycle, 4);
  json no_peak = step_line(3, 1e9);
  no_peak["peak_per_sm_per_cycle"] = nullptr;
  EXPECT_TRUE(std::isnan(parse_workload_step(no_peak).peak_per_sm_per_cycle));
}

TEST(DeviceProtocol, AStepLineMissingAFieldIsNamed) {
  json line = step_line(3, 1e9);
  line.erase("window");
  try {
    parse_workload_step(line);
    FAIL() << "no throw";
  } catch (const core::Error& e) {
    EXPECT_NE(std::string(e.cause()).find("\"window\""), std::string::npos) << e.cause();
    EXPECT_EQ(e.exit_code(), core::kExitInput);
  }
  line = step_line(3, 1e9);
  line["work"] = "lots";
  EXPECT_THROW(parse_workload_step(line), core::Error);
}

TEST(DeviceProtocol, ParsesTheSweeps) {
  const json stream{{"calibrate", "stream"},
                    {"points",
                     {{{"kernel", "copy"}, {"elements", 1 << 26}, {"seconds", {0.0002, 0.00019}}},
                      {{"kernel", "triad"}, {"elements", 1 << 26}, {"seconds", {0.0003}}}}}};
  const auto t = parse_stream_timings(stream);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[1].kernel, StreamKernel::triad);
  EXPECT_EQ(t[0].seconds.size(), 2u);
  EXPECT_THROW(
      parse_stream_timings(json{{"points", {{{"kernel", "memcpy"}, {"elements", 1}, {"seconds", {1}}}}}}),
      core::Error);

  const json ws{{"points",
                 {{{"k", 256},
                   {"working_set_bytes", 1000},
                   {"requested_bytes", 2000},
                   {"distinct_bytes", 500},
                   {"seconds", 1e-5}}}}};
  EXPECT_EQ(parse_working_set(ws).at(0).requested_bytes, 2000);
  const json ctx =
      json::array({{{"blocks", 64}, {"threads_per_block", 256}, {"scalar_ops", 1e9}, {"mma_ops", 0}}});
  const json issue{{"points",
                    {{{"k", 256},
                      {"scalar_ops", 1e9},
                      {"mma_ops", 0},
                      {"kernels", 1},
                      {"seconds", 1e-4},
                      {"contexts", ctx}}}}};
  EXPECT_EQ(parse_issue_points(issue).at(0).contexts.at(0).blocks, 64);
  // An issue line without the output's shape (an older device side) leaves loops and distinct bytes
  // unknown; with it, the nest is {m, n, k} and distinct = (k (m + n) + m n) x 4 bytes:
  // (256 x 1024 + 262,144) x 4 = 2,097,152.
  EXPECT_TRUE(parse_issue_points(issue).at(0).loops.empty());
  json shaped = issue;
  shaped["m"] = 512;
  shaped["n"] = 512;
  const IssuePoint ip = parse_issue_points(shaped).at(0);
  EXPECT_EQ(ip.loops, (std::vector<std::int64_t>{512, 512, 256}));
  EXPECT_EQ(ip.distinct_bytes, 2'097'152);
  // The contraction's nest is {n, m, k}; the re-read's {passes, floats}: 500 bytes are 125 floats.
  json ws_shaped = ws;
  ws_shaped["m"] = 256;
  ws_shaped["n"] = 1024;
  EXPECT_EQ(parse_working_set(ws_shaped).at(0).loops, (std::vector<std::int64_t>{1024, 256, 256}));
  json reread = ws;
  reread["calibrate"] = "reread";
  EXPECT_EQ(parse_working_set(reread).at(0).loops, (std::vector<std::int64_t>{256, 125}));
  const json launch{{"points",
                     {{{"geometry", "32x32x8/4x4"},
                       {"m", 32},
                       {"n", 32},
                       {"k", 1024},
                       {"seconds", 1e-3},
                       {"contexts", ctx}}}}};
  EXPECT_EQ(parse_launch_points(launch).at(0).geometry, "32x32x8/4x4");
}

TEST(DeviceProtocol, StepWindowIsTheSamplesInsideTheSteadySpan) {
  // 60 launches of 20 ms: 1.2 s of work; the steady window leaves 250 ms at each end.
  const WorkloadStep step = parse_workload_step(step_line(60, 6e9));
  // Samples from well before to well after the work, reading 80% inside the work and 0 outside.
  std::vector<CounterSample> rows = samples(kT0 - 100 * kMs, kT0, 0);
  const auto inside = samples(kT0, kT0 + 1200 * kMs, 80, 1e8);
  rows.insert(rows.end(), inside.begin(), inside.end());
  const std::vector<MemClockReading> clocks{
      {kT0 + 100 * kMs, 2619}, {kT0 + 500 * kMs, 2619}, {kT0 + 900 * kMs, 2619}};
  const MeasuredStep m = measure_step(step, rows, clocks, StepRole::judged);
  EXPECT_DOUBLE_EQ(m.reading_pct, 80);
  EXPECT_EQ(m.counter_window.start_ns, kT0 + 250 * kMs);
  EXPECT_LE(m.counter_window.end_ns, step.window.end_ns);
  EXPECT_GE(m.counter_window.start_ns, step.window.start_ns);
  // The byte total is the samples' own: 1e8 per 10 ms sample.
  const double samples_in =
      static_cast<double>(m.counter_window.end_ns - m.counter_window.start_ns) / (10 * kMs);
  EXPECT_NEAR(m.counted_bytes, samples_in * 1e8, 1);
  EXPECT_DOUBLE_EQ(m.mem_clock_min_mhz, 2619);
  EXPECT_DOUBLE_EQ(m.mem_clock_max_mhz, 2619);
  // Launches back to back with 2 us gaps every 20 ms cover 99.99% of the window: the step counts.
  EXPECT_GT(coverage(m), kMinCoverage);
  EXPECT_TRUE(check_step(*unit_rule("fp32"), m).counted);
}

TEST(DeviceProtocol, AStepWhoseWorkLeavesGapsIsNotCounted) {
  // 2 ms of idle after each 20 ms launch (the host could not keep up): 91% coverage, under 99%.
  const WorkloadStep step = parse_workload_step(step_line(60, 6e9, 2 * kMs));
  const MeasuredStep m = measure_step(step, samples(kT0, kT0 + 1400 * kMs, 80), {}, StepRole::judged);
  EXPECT_LT(coverage(m), kMinCoverage);
  EXPECT_GT(coverage(m), 0.9);
  const StepCheck c = check_step(*unit_rule("fp32"), m);
  EXPECT_FALSE(c.counted);
  EXPECT_NE(c.not_counted.find("cover"), std::string::npos) << c.not_counted;
}

TEST(DeviceProtocol, ExactlyAtTheCoverageThreshold) {
  // A window the work covers for 99% of its length: counted; a hair less is not.
  MeasuredStep m;
  m.counter_window = Interval{0, 1'000'000'000};
  m.work_intervals = {Interval{0, 990'000'000}};
  EXPECT_DOUBLE_EQ(coverage(m), 0.99);
  m.work_intervals = {Interval{0, 989'999'000}};
  EXPECT_LT(coverage(m), kMinCoverage);
}

TEST(DeviceProtocol, NoSampleInsideTheWindowGivesNoReading) {
  const WorkloadStep step = parse_workload_step(step_line(60, 6e9));
  // Samples only before the step (the sampler stopped early).
  const MeasuredStep m = measure_step(step, samples(kT0 - 500 * kMs, kT0, 50), {}, StepRole::judged);
  EXPECT_TRUE(std::isnan(m.reading_pct));
  const StepCheck c = check_step(*unit_rule("fp32"), m);
  EXPECT_FALSE(c.counted);
}

TEST(DeviceProtocol, BlankedSamplesAreSkippedAndBytesScaled) {
  const WorkloadStep step = parse_workload_step(step_line(60, 6e9));
  std::vector<CounterSample> rows = samples(kT0, kT0 + 1200 * kMs, 40, 2e8);
  for (std::size_t i = 40; i < rows.size(); i += 10) rows[i].value = std::nan("");  // a decode split them
  const MeasuredStep m = measure_step(step, rows, {}, StepRole::judged);
  EXPECT_DOUBLE_EQ(m.reading_pct, 40);
  const double window_samples =
      static_cast<double>(m.counter_window.end_ns - m.counter_window.start_ns) / (10 * kMs);
  EXPECT_NEAR(m.counted_bytes, window_samples * 2e8, 1e3);
  EXPECT_TRUE(std::isnan(m.mem_clock_min_mhz));  // no NVML clock read in the window
}

TEST(DeviceProtocol, WorkloadLinesSortTheOutput) {
  WorkloadLines lines;
  // The window markers and other lines are no calibrate lines.
  EXPECT_FALSE(lines.read("diescope: measure start"));
  EXPECT_FALSE(lines.read(R"({"result":1})"));
  EXPECT_FALSE(lines.read(R"({"calibrate":"device","device":{"sm_count":132,"l2_bytes":52428800}})"));
  EXPECT_EQ(lines.device["sm_count"], 132);
  const auto begin = lines.read(R"({"calibrate":"begin","index":3,"name":"ffma 33/132 SMs"})");
  ASSERT_TRUE(begin);
  EXPECT_EQ(begin->index, 3);
  EXPECT_EQ(begin->name, "ffma 33/132 SMs");
  EXPECT_FALSE(lines.read(step_line(3, 1e9).dump()));
  ASSERT_EQ(lines.steps.size(), 1u);
  EXPECT_EQ(lines.steps[0].launches.size(), 3u);
  const std::string ws_points =
      R"("points":[{"k":4,"working_set_bytes":1000,"requested_bytes":4000,"distinct_bytes":1000,"seconds":1e-6}])";
  lines.read(R"({"calibrate":"reread",)" + ws_points + "}");
  lines.read(R"({"calibrate":"stream","points":[{"kernel":"triad","elements":64,"seconds":[0.001]}]})");
  EXPECT_EQ(lines.sweeps.reread.size(), 1u);
  EXPECT_EQ(lines.sweeps.reread[0].requested_bytes, 4000);
  EXPECT_TRUE(lines.sweeps.working_set.empty());
  ASSERT_EQ(lines.sweeps.stream.size(), 1u);
  EXPECT_EQ(lines.sweeps.stream[0].kernel, StreamKernel::triad);
  EXPECT_TRUE(lines.sweeps.steps.empty());
  EXPECT_FALSE(lines.read(R"({"calibrate":"done"})"));
  // A step line missing a field stops the calibration, naming it.
  json broken = step_line(3, 1e9);
  broken.erase("launches");
  EXPECT_THROW(lines.read(broken.dump()), core::Error);
}

TEST(DeviceProtocol, DeviceFactsTakeTheWorkloadsSmsAndL2) {
  recording::RecordingMeta probe;
  probe.gpu = recording::GpuIdentity{0, "GPU-0f0e", "NVIDIA H200", "GH100", "580.159.04", 90, 0,
                                     0, ""};  // NVML gave no SMs or L2
  probe.unit_table = "hopper-gh100";
  probe.units = test::h200_units();
  const DeviceFacts facts = device_facts(probe, json{{"sm_count", 132}, {"l2_bytes", 52'428'800}});
  EXPECT_EQ(facts.gpu.sm_count, 132);
  EXPECT_EQ(facts.gpu.l2_bytes, 52'428'800);
  EXPECT_EQ(facts.gpu.model, "NVIDIA H200");
  EXPECT_EQ(facts.unit_table, "hopper-gh100");
  EXPECT_EQ(facts.units.size(), 7u);
  // No device line, or figures that are not integers: the recording's stand.
  EXPECT_EQ(device_facts(probe, json()).gpu.sm_count, 0);
  EXPECT_EQ(device_facts(probe, json{{"sm_count", "132"}, {"l2_bytes", 5.2e7}}).gpu.l2_bytes, 0);
}

TEST(DeviceProtocol, StepsAreMeasuredFromTheRecording) {
  // A recording with FP32 and DRAM columns and the DRAM byte count: 10 ms samples over the steps'
  // 1.2 s of work, FP32 reading 80%, DRAM 60% with 1e8 bytes each.
  recording::MemoryRecording recording;
  recording.meta_data.units = {test::unit_column("fp32", "FP32", "fma"),
                               test::unit_column("dram", "DRAM", "dram")};
  recording::ColumnDef bytes;
  bytes.key = "dram_bytes";
  recording.meta_data.counts = {bytes};
  for (const CounterSample& s : samples(kT0, kT0 + 1200 * kMs, 0))
    recording.list<recording::ChipSample>().push_back({s.start_ns, s.end_ns, {80, 60}, {}, {1e8}});
  recording.list<recording::ClockReading>() = {{kT0 + 500 * kMs, 1980, 2619}, {kT0 + 700 * kMs, 1980, 3201}};

  WorkloadStep ffma = parse_workload_step(step_line(60, 6e9));
  WorkloadStep triad = ffma;
  triad.unit = "dram";
  triad.name = "stream-triad 132/132 SMs";
  WorkloadStep unplanned = ffma;
  unplanned.name = "ffma 7/132 SMs";
  const CalibrationPlan plan = plan_calibration(h200_facts(), false);
  const std::vector<MeasuredStep> m = measure_recorded_steps(recording, {ffma, triad, unplanned}, plan);
  ASSERT_EQ(m.size(), 3u);
  EXPECT_DOUBLE_EQ(m[0].reading_pct, 80);
  EXPECT_TRUE(std::isnan(m[0].counted_bytes));  // FP32 has no byte count
  EXPECT_EQ(m[0].role, StepRole::judged);
  EXPECT_DOUBLE_EQ(m[1].reading_pct, 60);
  const double samples_in =
      static_cast<double>(m[1].counter_window.end_ns - m[1].counter_window.start_ns) / (10 * kMs);
  EXPECT_NEAR(m[1].counted_bytes, samples_in * 1e8, 1);
  // NVML's memory clock inside the window: 2619 and 3201 MHz.
  EXPECT_DOUBLE_EQ(m[1].mem_clock_min_mhz, 2619);
  EXPECT_DOUBLE_EQ(m[1].mem_clock_max_mhz, 3201);
  EXPECT_EQ(m[2].role, StepRole::reported);  // not in the plan
}

TEST(DeviceProtocol, TimeLeftText) {
  EXPECT_EQ(format_time_left(0), "0 s");
  EXPECT_EQ(format_time_left(42.4), "42 s");
  EXPECT_EQ(format_time_left(59.6), "1 min 00 s");
  EXPECT_EQ(format_time_left(65), "1 min 05 s");
  EXPECT_EQ(format_time_left(-3), "0 s");
  EXPECT_EQ(format_time_left(std::nan("")), "0 s");
}

TEST(DeviceProtocol, ProgressText) {
  const Progress p{7, 17, "ffma 33/132 SMs", 65};
  EXPECT_EQ(progress_text(p, false), "diescope: step 7/17: ffma 33/132 SMs (about 1 min 05 s left)");
  // 6 of 17 done in a 17-wide bar: 6 marks.
  EXPECT_EQ(progress_text(p, true, 17), "[######...........]  7/17  ffma 33/132 SMs  about 1 min 05 s left");
  EXPECT_EQ(progress_text(Progress{1, 4, "stream", 3}, true, 8), "[........]  1/4  stream  about 3 s left");
}

TEST(DeviceProtocol, PlannedNamesAndSeconds) {
  const CalibrationPlan quick = plan_calibration(h200_facts(), true);
  const auto names = planned_names(quick);
  ASSERT_EQ(names.size(), 15u);  // 14 steps and STREAM
  EXPECT_EQ(names.back(), "stream");
  double total = 0;
  for (int i = 1; i <= 15; ++i) total += planned_seconds(quick, i);
  // 14 steps of 2 s plus 0.8 s each around them, and STREAM's 2 s: 41.2 s, under the minute.
  EXPECT_NEAR(total, 41.2, 1e-9);
  const CalibrationPlan full = plan_calibration(h200_facts(), false);
  EXPECT_EQ(planned_names(full).back(), "issue-rate sweep");
  EXPECT_EQ(planned_names(full).size(), full.steps.size() + 4);
}

TEST(DeviceProtocol, ProgressAtEachStepAndSweep) {
  const CalibrationPlan full = plan_calibration(h200_facts(), false);
  // 26 steps and 4 sweeps. Time left at the first: 26 x (5 + 0.8) + 5 + 20 + 30 + 20 = 225.8 s;
  // at the second, 5.8 s less; at the last (the issue-rate sweep), its own 20 s.
  const Progress first = progress_at(full, 1, "ffma 132/132 SMs");
  EXPECT_EQ(first.total, 30);
  EXPECT_EQ(first.name, "ffma 132/132 SMs");
  EXPECT_NEAR(first.seconds_left, 225.8, 1e-9);
  EXPECT_NEAR(progress_at(full, 2, "").seconds_left, 220, 1e-9);
  EXPECT_DOUBLE_EQ(progress_at(full, 30, "issue-rate sweep").seconds_left, 20);
  EXPECT_DOUBLE_EQ(progress_at(plan_calibration(h200_facts(), true), 15, "stream").seconds_left, 2);
}

TEST(DeviceProtocol, PlanText) {
  EXPECT_EQ(plan_text(h200_facts(), plan_calibration(h200_facts(), true)),
            "quick check hopper-gh100 on NVIDIA H200 (132 SMs), 15 steps and sweeps, about 41 s");
  // 225.8 s rounds to 226 s.
  EXPECT_EQ(plan_text(h200_facts(), plan_calibration(h200_facts(), false)),
            "full calibration hopper-gh100 on NVIDIA H200 (132 SMs), 30 steps and sweeps, about 3 min 46 s");
}

TEST(DeviceProtocol, SummaryNamesVerdictsAndTheModel) {
  CalibrationFile f;
  f.gpu = CalibrationGpu{"NVIDIA H200", "580.159.04", "GH100", "GPU-0f0e", 90, 132, 52'428'800};
  f.date = "2026-11-29T17:00:00Z";
  CalibratedUnit u;
  u.key = "fp32";
  u.label = "FP32";
  u.verdict = Verdict::pass;
  u.reason = "every load within tolerance";
  u.ceiling_pct = 97.25;
  f.units.push_back(u);
  f.device_model = json{{"stream", {{"bandwidth_bytes_per_s", 4.1e12}, {"best_kernel", "triad"}}},
                        {"cache",
                         {{"outcome", "transition"},
                          {"capacity_bytes", 5.9e7},
                          {"cached_ws_bytes", 4.2e7},
                          {"spilled_ws_bytes", 8.4e7},
                          {"monotone", true},
                          {"cache_bytes_per_s", 9e12}}},
                        {"issue", {{"outcome", "not_run"}, {"reason", "the issue-rate sweep was not run"}}}};
  const std::string s = summary_text(f);
  EXPECT_NE(s.find("FP32         pass"), std::string::npos) << s;
  EXPECT_NE(s.find("97.2%"), std::string::npos) << s;
  EXPECT_NE(s.find("4.10 TB/s (triad)"), std::string::npos) << s;
  EXPECT_NE(s.find("capacity 59.0 MB (between 42.0 MB cached and 84.0 MB spilled)"), std::string::npos) << s;
  EXPECT_NE(s.find("the driver reports L2 52.4 MB"), std::string::npos) << s;
  EXPECT_NE(s.find("Issue rate: not_run"), std::string::npos) << s;

  // A fitted line whose intercept is below zero is printed as fitted, and says it is no latency.
  f.device_model["issue"] =
      json{{"outcome", "fit"}, {"rate_ops_per_s", 1.374e13}, {"latency_s", -3e-7}, {"max_residual", 0.05}};
  const std::string negative = summary_text(f);
  EXPECT_NE(negative.find(
                "Issue rate: 13.74 Tops/s, latency -0.3 us (a negative intercept: no launch latency can be "
                "read), largest residual 5.0%"),
            std::string::npos)
      << negative;
  f.device_model["issue"]["latency_s"] = 2.1e-6;
  EXPECT_NE(summary_text(f).find("latency 2.1 us, largest residual 5.0%"), std::string::npos)
      << summary_text(f);
}

}  // namespace
}  // namespace diescope::calibrate
