// The calibration plan, and build_calibration judging what a test double of the device answered
// for it, with readings computed from declared figures (it stands in for the GPU side in this test
// only; nothing here is a measurement).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "diescope/calibrate/device_protocol.hpp"
#include "diescope/calibrate/steps.hpp"
#include "diescope/core/error.hpp"
#include "helpers.hpp"

namespace diescope::calibrate {
namespace {

using namespace test;
using nlohmann::json;

TEST(Plan, LoadLadder) {
  EXPECT_EQ(load_ladder(132, false), (std::vector<int>{132, 66, 33, 1}));
  // The method's GB205 ladder: 46, 23, 11 (46/4 rounded down), 1.
  EXPECT_EQ(load_ladder(46, false), (std::vector<int>{46, 23, 11, 1}));
  EXPECT_EQ(load_ladder(132, true), (std::vector<int>{132, 33}));
  EXPECT_EQ(load_ladder(2, false), (std::vector<int>{2, 1}));  // 2/4 = 0 is no load; 1 once
  EXPECT_EQ(load_ladder(1, true), (std::vector<int>{1}));
  EXPECT_TRUE(load_ladder(0, false).empty());
}

TEST(Plan, FullAndQuick) {
  const CalibrationPlan full = plan_calibration(h200_facts(), false);
  // Six units with a rule (L1 fill has none) x 4 loads, plus FP32's two reported steps: 26 steps.
  ASSERT_EQ(full.steps.size(), 26u);
  EXPECT_EQ(full.steps[0].name, "ffma 132/132 SMs");
  EXPECT_EQ(full.steps[3].name, "ffma 1/132 SMs");
  EXPECT_EQ(full.steps[4].name, "imad 132/132 SMs");
  EXPECT_EQ(full.steps[4].role, StepRole::reported);
  EXPECT_EQ(full.steps[5].workload, StepWorkload::ffma_imad);
  // The H200 is compute capability 9.0, so its tensor steps run wgmma.
  const auto tensor = std::find_if(full.steps.begin(), full.steps.end(),
                                   [](const StepPlan& s) { return s.unit == "tensor"; });
  ASSERT_NE(tensor, full.steps.end());
  EXPECT_EQ(tensor->workload, StepWorkload::bf16_wgmma);
  EXPECT_EQ(tensor->name, "bf16-wgmma 132/132 SMs");
  EXPECT_EQ(std::count_if(full.steps.begin(), full.steps.end(),
                          [](const StepPlan& s) { return s.unit == "l1_fill"; }),
            0);
  // 26 x (5 s + 0.8 s around each step) + STREAM 5 + working set 20 + issue 20 + launch fill 30 = 225.8 s.
  EXPECT_NEAR(progress_at(full, 1, "").seconds_left, 225.8, 1e-9);
  EXPECT_EQ(full.working_set.ks.front(), 256);
  EXPECT_EQ(full.working_set.ks.back(), 65536);
  EXPECT_EQ(full.issue.ks.back(), 32768);
  EXPECT_EQ(full.launch.geometries[0].name(), "32x32x8/4x4");
  EXPECT_EQ(full.launch.geometries[0].threads(), 64);
  EXPECT_EQ(full.launch.geometries[1].threads(), 256);

  const CalibrationPlan quick = plan_calibration(h200_facts(), true);
  // 6 units x 2 loads + 2 reported = 14 steps x (2 s + 0.8 s) + STREAM 2 s = 41.2 s, sweeps left out:
  // under a minute.
  EXPECT_EQ(quick.steps.size(), 14u);
  EXPECT_NEAR(progress_at(quick, 1, "").seconds_left, 41.2, 1e-9);
  EXPECT_FALSE(quick.run_working_set || quick.run_issue || quick.run_launch);
  EXPECT_EQ(quick.stream.repeats, 3);
}

// A launch geometry that is not a leaf of the tiled contraction at a size is an error naming it
// (docs/calibration.md#the-sweeps), never a point quietly left out.
TEST(Plan, ALaunchGeometryThatIsNotALeafIsNamed) {
  EXPECT_EQ(not_a_leaf(LaunchGeometry{64, 64, 8, 4, 4}, 128), "");
  const std::string untiled = not_a_leaf(LaunchGeometry{64, 64, 8, 4, 4}, 32);
  EXPECT_NE(untiled.find("launch geometry 64x64x8/4x4 is not a leaf of the tiled contraction at size 32"),
            std::string::npos)
      << untiled;
  const std::string no_kernel = not_a_leaf(LaunchGeometry{128, 128, 8, 8, 8}, 256);
  EXPECT_NE(no_kernel.find("128x128x8/8x8"), std::string::npos) << no_kernel;
  EXPECT_NE(no_kernel.find("kernels for 32x32x8/4x4, 64x64x8/4x4 only"), std::string::npos) << no_kernel;

  LaunchPlan plan;
  plan.sizes = {32, 64, 96};
  plan.geometries = {LaunchGeometry{32, 32, 8, 4, 4}, LaunchGeometry{64, 64, 8, 4, 4}};
  settle_launch_sizes(plan);
  ASSERT_EQ(plan.sizes_of.size(), 2u);
  EXPECT_EQ(plan.sizes_of[0], (std::vector<std::int64_t>{32, 64, 96}));  // 96 = 3 x 32
  EXPECT_EQ(plan.sizes_of[1], (std::vector<std::int64_t>{64}));          // 96 is 1.5 x 64
  plan.geometries.push_back(LaunchGeometry{32, 32, 16, 4, 4});           // tiles every size, no kernel
  try {
    settle_launch_sizes(plan);
    FAIL() << "no throw";
  } catch (const core::UsageError& e) {
    EXPECT_NE(std::string(e.cause()).find(
                  "launch geometry 32x32x16/4x4 is not a leaf of the tiled contraction at size 32"),
              std::string::npos)
        << e.cause();
  }
  plan.geometries = {LaunchGeometry{64, 64, 8, 4, 4}};
  plan.sizes = {32};
  EXPECT_THROW(settle_launch_sizes(plan), core::UsageError);  // tiles no size at all
}

TEST(Plan, TensorWorkloadFollowsTheChip) {
  // wgmma only on Hopper (9.0); mma.sync on Ampere (8.0), Ada (8.9) and Blackwell (10.0, 12.0).
  EXPECT_EQ(judged_workload("tensor", 90), StepWorkload::bf16_wgmma);
  for (int cc : {80, 89, 100, 120}) EXPECT_EQ(judged_workload("tensor", cc), StepWorkload::bf16_mma) << cc;
  EXPECT_EQ(judged_workload("fp32", 90), StepWorkload::ffma);
  EXPECT_EQ(judged_workload("l1_fill", 90), std::nullopt);  // no check for L1 fill
  // Turing (7.5) has no bf16 mma.sync: no tensor step, and the reason names the capability.
  EXPECT_EQ(judged_workload("tensor", 75), std::nullopt);
  EXPECT_EQ(unavailable_check("tensor", 75),
            "the tensor check is unavailable on compute capability 7.5: its bf16 mma.sync needs 8.0 or "
            "later (docs/calibration.md#steps)");
  for (int cc : {80, 90, 120}) EXPECT_EQ(unavailable_check("tensor", cc), "") << cc;
  EXPECT_EQ(unavailable_check("fp32", 75), "");     // FFMA exists everywhere
  EXPECT_EQ(unavailable_check("l1_fill", 75), "");  // no check at all, so nothing unavailable
}

// A test double of the GPU side: every reading is computed from the figures below.
class DeclaredDevice {
 public:
  double tensor_phantom_points = 5;  // the Tensor counter reads this much above its work

  // What the device side answers for `plan`: every step, in reverse order (answers are matched to
  // the plan by name), and the sweeps the plan runs.
  DeviceAnswers answer(const CalibrationPlan& plan) {
    DeviceAnswers a;
    for (const StepPlan& step : plan.steps) a.steps.insert(a.steps.begin(), run_step(step));
    a.stream = time_stream(plan.stream);
    if (plan.run_working_set) a.working_set = time_working_set();
    if (plan.run_launch) a.launch = time_launch_sweep();
    if (plan.run_issue) a.issue = time_issue_sweep();
    return a;
  }

 private:
  MeasuredStep run_step(const StepPlan& plan) {
    MeasuredStep s;
    s.unit = plan.unit;
    s.name = plan.name;
    s.role = plan.role;
    s.loaded_sms = plan.loaded_sms;
    s.sm_count = 132;
    const auto length = static_cast<recording::TimeNs>(plan.seconds * 1e9);
    s.counter_window = {clock_, clock_ + length};
    s.work_intervals = {{clock_ - 1'000'000, clock_ + length + 1'000'000}};  // queued work spans the window
    clock_ += length + 10'000'000;
    s.sm_clock_mhz = 1980;
    s.mem_clock_min_mhz = s.mem_clock_max_mhz = 3201;
    s.counted_bytes = std::nan("");
    const double load = plan.loaded_sms / 132.0;
    // The work inside the window, scaled to the work's own (2 ms longer) time.
    const double own_s = plan.seconds + 0.002;
    auto pipe = [&](double peak, double share, double extra_points) {
      s.peak_per_sm_per_cycle = peak;
      s.work = share * 132 * peak * 1.98e9 * own_s;
      s.reading_pct = share * 100 + extra_points;
    };
    switch (plan.workload) {
      case StepWorkload::ffma:
        pipe(4, 0.988 * load, 0);
        break;
      case StepWorkload::imad:
        pipe(4, 0.4993, 0);
        break;
      case StepWorkload::ffma_imad:
        pipe(4, 0.7882, 0);
        break;
      case StepWorkload::bf16_mma:
      case StepWorkload::bf16_wgmma:
        pipe(4096, 0.90 * load, tensor_phantom_points);
        break;
      case StepWorkload::dfma:
        pipe(2, 0.97 * load, 0);
        break;
      case StepWorkload::stream: {  // 4.0e12 B/s at full load against a 4.8e12 peak; the counter sees 99%
        const double rate = 4.0e12 * load;
        s.work = rate * own_s;
        s.reading_pct = rate / 4.8e12 * 100;
        s.counted_bytes = 0.99 * rate * plan.seconds;
        break;
      }
      case StepWorkload::l1_load:  // 0.95 wavefronts per loaded SM per cycle, peak 1
        s.work = 0.95 * plan.loaded_sms * 1.98e9 * own_s;
        s.reading_pct = 95 * load;
        break;
      case StepWorkload::l2_read:  // 70% of a 5e12 B/s L2 peak, scaled by load
        s.work = 0.7 * 5e12 * load * own_s;
        s.reading_pct = 70 * load;
        break;
    }
    return s;
  }

  static std::vector<StreamTiming> time_stream(const StreamPlan& plan) {
    // copy at 4.0e12 B/s, triad at 4.2e12: 2^26 floats, 536,870,912 and 805,306,368 bytes.
    return {{StreamKernel::copy, plan.elements, {536870912.0 / 4.0e12}},
            {StreamKernel::triad, plan.elements, {805306368.0 / 4.2e12, 805306368.0 / 4.1e12}}};
  }

  static std::vector<WorkingSetPoint> time_working_set() {
    // 8 MB served at 2e13 B/s from cache, 64 MB and 128 MB at the DRAM rate.
    auto point = [](std::int64_t ws, double rate) {
      return WorkingSetPoint{ws / 1000, ws, static_cast<std::int64_t>(rate / 4), ws, 0.25};
    };
    return {point(8'000'000, 2e13), point(16'000'000, 1.9e13), point(64'000'000, 4.1e12),
            point(128'000'000, 4.0e12)};
  }

  static std::vector<IssuePoint> time_issue_sweep() {
    // Full-fill launches (1056 blocks of 256 threads on 132 SMs): seconds = 1e-5 + ops / 2e13.
    std::vector<IssuePoint> points;
    for (double ops : {1e9, 2e9, 4e9}) {
      IssuePoint p;
      p.k = static_cast<std::int64_t>(ops / 1e6);
      p.scalar_ops = ops;
      p.seconds = 1e-5 + ops / 2e13;
      p.contexts = {{1056, 256, ops, 0}};
      points.push_back(p);
    }
    return points;
  }

  static std::vector<LaunchPoint> time_launch_sweep() {
    // The true model: 132 SMs saturating at 256 threads each; 64-thread blocks at 1e12 ops/s,
    // 256-thread blocks at 2e12.
    std::vector<LaunchPoint> points;
    auto add = [&points](const char* geometry, std::int64_t threads, std::int64_t blocks, double rate) {
      LaunchPoint p;
      p.geometry = geometry;
      p.m = p.n = blocks;
      p.k = 1024;
      p.contexts = {{blocks, threads, 1e9, 0}};
      p.seconds = 1e9 / (rate * std::min(1.0, static_cast<double>(blocks * threads) / (132.0 * 256.0)));
      points.push_back(p);
    };
    for (std::int64_t b : {66, 132, 264, 528, 1056}) add("32x32x8/4x4", 64, b, 1e12);
    for (std::int64_t b : {33, 66, 132, 264}) add("64x64x8/4x4", 256, b, 2e12);
    return points;
  }

  recording::TimeNs clock_ = 1'800'000'000'000'000'000;
};

std::string verdict_of(const CalibrationFile& f, const std::string& key) {
  for (const CalibratedUnit& u : f.units)
    if (u.key == key) return std::string(verdict_name(u.verdict));
  return "not listed";
}

TEST(BuildCalibration, JudgesEveryUnitAndFitsTheModel) {
  DeclaredDevice device;
  const CalibrationPlan plan = plan_calibration(h200_facts(), false);
  const CalibrationFile f =
      build_calibration(h200_facts(), plan, device.answer(plan), RunInfo{"2026-11-30T12:34:56Z", "abc123"});

  EXPECT_EQ(f.schema, 3);
  EXPECT_EQ(f.commit, "abc123");
  EXPECT_FALSE(f.quick);
  EXPECT_EQ(f.gpu.driver, "580.159.04");
  // FFMA at 98.8% of each load; the Tensor counter 5 points above its work (tolerance 3% of 90 = 2.7): fail.
  EXPECT_EQ(verdict_of(f, "fp32"), "pass");
  EXPECT_EQ(verdict_of(f, "dram"), "pass");
  EXPECT_EQ(verdict_of(f, "tensor"), "fail");
  EXPECT_EQ(verdict_of(f, "fp64"), "pass");
  EXPECT_EQ(verdict_of(f, "ldst"), "pass");
  EXPECT_EQ(verdict_of(f, "l2"), "pass");
  EXPECT_EQ(verdict_of(f, "l1_fill"), "not listed");
  ASSERT_EQ(f.units.size(), 6u);
  // FP32 at full load read 98.8%; DRAM 4.0e12 / 4.8e12 = 83.33%.
  EXPECT_NEAR(f.units[0].ceiling_pct.value(), 98.8, 1e-9);
  EXPECT_NEAR(f.units.back().ceiling_pct.value(), 4.0 / 4.8 * 100, 1e-9);
  EXPECT_EQ(f.units[0].check["steps"].size(), 6u);
  EXPECT_EQ(f.units[0].check["steps"][4]["role"], "reported");

  const json& model = f.device_model;
  // Triad's best repeat: 805,306,368 B / (805,306,368 / 4.2e12) s = 4.2e12 B/s, above copy's 4.0e12.
  EXPECT_NEAR(model["stream"]["bandwidth_bytes_per_s"].get<double>() / 4.2e12, 1.0, 1e-12);
  EXPECT_EQ(model["stream"]["best_kernel"], "triad");
  // Every DRAM step implies 4.0e12 l / (4.0e12 l / 4.8e12) = 4.8e12 B/s; against it copy moved
  // 4.0 / 4.8 = 83.33% and triad 4.2 / 4.8 = 87.5%.
  EXPECT_NEAR(model["stream"]["dram_implied_peak_bytes_per_s"].get<double>() / 4.8e12, 1.0, 1e-12);
  EXPECT_NEAR(model["stream"]["kernels"][0]["pct_of_dram_implied_peak"].get<double>(), 4.0 / 4.8 * 100, 1e-9);
  EXPECT_NEAR(model["stream"]["kernels"][1]["pct_of_dram_implied_peak"].get<double>(), 87.5, 1e-9);
  EXPECT_NE(summary_text(f).find(
                "STREAM against the DRAM peak the counter implies (4.80 TB/s): copy 83.3%, triad 87.5%"),
            std::string::npos)
      << summary_text(f);
  // Threshold sqrt(2e13 x 4.2e12) = 9.17e12: cached 8 and 16 MB, spilled 64 and 128 MB;
  // capacity sqrt(16e6 x 64e6) = 32,000,000 bytes; cache rate median(2e13, 1.9e13) = 1.95e13.
  EXPECT_EQ(model["cache"]["outcome"], "transition");
  EXPECT_EQ(model["cache"]["capacity_bytes"], 32'000'000);
  EXPECT_NEAR(model["cache"]["cache_bytes_per_s"].get<double>(), 1.95e13, 1e3);
  EXPECT_EQ(model["cache"]["points"].size(), 4u);
  EXPECT_EQ(model["fill"]["outcome"], "fit");
  EXPECT_EQ(model["fill"]["saturation_threads"], 256);
  EXPECT_EQ(model["fill"]["multiprocessors"], 132);
  EXPECT_EQ(model["issue"]["outcome"], "fit");
  EXPECT_NEAR(model["issue"]["rate_ops_per_s"].get<double>() / 2e13, 1.0, 1e-9);
  EXPECT_NEAR(model["issue"]["latency_s"].get<double>(), 1e-5, 1e-12);

  // What rooflines read back from the file.
  const ModelCeilings ceilings = model_ceilings(calibration_from_json(calibration_to_json(f)).device_model);
  EXPECT_NEAR(ceilings.dram_bytes_per_s.value() / 4.2e12, 1.0, 1e-12);
  EXPECT_EQ(ceilings.cache_capacity_bytes, 32'000'000);
  EXPECT_NEAR(ceilings.cache_bytes_per_s.value(), 1.95e13, 1e3);
  EXPECT_EQ(ceilings.cache_source, "cache");
  EXPECT_NEAR(ceilings.issue_ops_per_s.value() / 2e13, 1.0, 1e-9);
  EXPECT_EQ(ceilings.fill_threads, 256);

  // Written and looked up: FP32, DRAM, FP64, Load/store and L2 passed, Tensor failed, L1 fill has no
  // check: partial.
  const fs::path dir = scratch("run-calibration");
  const fs::path path = write_calibration(f, dir);
  const CalibrationBlock b = find_calibration(h200_query(), std::nullopt, dir);
  EXPECT_EQ(b.status, "partial");
  EXPECT_EQ(b.file->name, path.filename().string());
  EXPECT_EQ(b.reason,
            "full calibration of 2026-11-30T12:34:56Z: passed FP32, FP64, Load/store, L2, DRAM; failed "
            "Tensor; no check L1 fill");
  // Kept for the schema test (docs/calibration.schema.json).
  fs::create_directories(fs::path(DIESCOPE_BINARY_DIR) / "test-calibrations");
  fs::copy_file(path, fs::path(DIESCOPE_BINARY_DIR) / "test-calibrations" / "full.json",
                fs::copy_options::overwrite_existing);
}

TEST(BuildCalibration, OnTuringTheTensorCheckIsUnavailableAndSaysSo) {
  // The H200's facts with Turing's compute capability: the plan has no tensor step (6 units with a
  // rule, less tensor, x 4 loads + FP32's 2 reported = 22 steps) and the file says why.
  DeviceFacts turing = h200_facts();
  turing.gpu.compute_capability = 75;
  const CalibrationPlan plan = plan_calibration(turing, false);
  EXPECT_EQ(plan.steps.size(), 22u);
  EXPECT_EQ(std::count_if(plan.steps.begin(), plan.steps.end(),
                          [](const StepPlan& s) { return s.unit == "tensor"; }),
            0);
  ASSERT_EQ(plan.unavailable.size(), 1u);
  EXPECT_EQ(plan.unavailable[0].unit, "tensor");
  DeclaredDevice device;
  const CalibrationFile f =
      build_calibration(turing, plan, device.answer(plan), RunInfo{"2026-11-30T12:34:56Z", "abc123"});
  EXPECT_EQ(verdict_of(f, "tensor"), "no_check");
  EXPECT_EQ(verdict_of(f, "fp32"), "pass");
  const auto tensor =
      std::find_if(f.units.begin(), f.units.end(), [](const CalibratedUnit& u) { return u.key == "tensor"; });
  ASSERT_NE(tensor, f.units.end());
  EXPECT_NE(tensor->reason.find("unavailable on compute capability 7.5"), std::string::npos)
      << tensor->reason;
  EXPECT_FALSE(tensor->ceiling_pct.has_value());
  // The file reads back with the verdict and the reason.
  const CalibrationFile back = calibration_from_json(calibration_to_json(f));
  EXPECT_EQ(verdict_of(back, "tensor"), "no_check");
  // What `diescope calibrate` prints: the unit's line says the check is unavailable, and why.
  const std::string printed = summary_text(f);
  EXPECT_NE(
      printed.find(
          "no_check              -  the tensor check is unavailable on compute capability 7.5: its bf16 "
          "mma.sync needs 8.0 or later"),
      std::string::npos)
      << printed;
}

TEST(BuildCalibration, AnswersAreMatchedToThePlanByNameOnce) {
  const StepPlan ffma{"fp32", "ffma 132/132 SMs", StepWorkload::ffma, StepRole::judged, 132, 5};
  const StepPlan imad{"fp32", "imad 132/132 SMs", StepWorkload::imad, StepRole::reported, 132, 5};
  CalibrationPlan plan;
  plan.steps = {ffma, ffma, imad};
  MeasuredStep answered;
  answered.unit = "fp32";
  answered.name = ffma.name;
  answered.role = StepRole::reported;
  answered.reading_pct = 90;
  MeasuredStep stray;  // a step the plan does not name
  stray.unit = "fp64";
  stray.name = "dfma 1/132 SMs";
  const std::vector<MeasuredStep> ordered = steps_in_plan_order(plan, {stray, answered});
  ASSERT_EQ(ordered.size(), 3u);
  EXPECT_DOUBLE_EQ(ordered[0].reading_pct, 90);
  EXPECT_EQ(ordered[0].role, StepRole::judged);  // the plan's role, not the answer's
  // The same step planned again (or one the workload never reached): no reading, shown as not counted.
  EXPECT_EQ(ordered[1].name, ffma.name);
  EXPECT_TRUE(std::isnan(ordered[1].reading_pct));
  EXPECT_FALSE(check_step(*unit_rule("fp32"), ordered[1]).counted);
  EXPECT_EQ(ordered[2].name, imad.name);
  EXPECT_EQ(ordered[2].role, StepRole::reported);
  EXPECT_EQ(ordered[2].loaded_sms, 132);
  EXPECT_TRUE(std::isnan(ordered[2].work));
}

TEST(BuildCalibration, TheReReadSweepIsFittedWithTheStreamCeiling) {
  DeclaredDevice device;
  const CalibrationPlan plan = plan_calibration(h200_facts(), false);
  DeviceAnswers answers = device.answer(plan);
  // Four passes over each buffer: requested = 4 x buffer, timed at `rate`.
  auto point = [](std::int64_t buffer, double rate) {
    return WorkingSetPoint{4, buffer, 4 * buffer, buffer, 4.0 * static_cast<double>(buffer) / rate};
  };
  answers.reread = {point(10'000'000, 1.8e13), point(20'000'000, 1.6e13), point(40'000'000, 8.6e12),
                    point(80'000'000, 4.0e12)};
  const CalibrationFile f =
      build_calibration(h200_facts(), plan, answers, RunInfo{"2026-11-30T12:34:56Z", "abc123"});
  const json& model = f.device_model;
  // The DRAM rate is STREAM's 4.2e12: threshold sqrt(1.8e13 x 4.2e12) = 8.695e12, so 40 MB at 8.6e12
  // spilled (against the slowest point's 4.0e12 it would be 8.485e12, and cached). Capacity
  // sqrt(20e6 x 40e6) = 28,284,271 bytes; cache rate median(1.8e13, 1.6e13) = 1.7e13.
  const json& reread = model.at("cache_reread");
  EXPECT_EQ(reread["outcome"], "transition");
  EXPECT_EQ(reread["cached_ws_bytes"], 20'000'000);
  EXPECT_EQ(reread["spilled_ws_bytes"], 40'000'000);
  EXPECT_EQ(reread["capacity_bytes"], 28'284'271);
  EXPECT_NEAR(reread["cache_bytes_per_s"].get<double>(), 1.7e13, 1e3);
  EXPECT_EQ(reread["points"].size(), 4u);
  EXPECT_TRUE(reread["note"].is_string());
  // The contraction sweep is untouched beside it, and, having a cache rate, gives the ceilings.
  EXPECT_EQ(model["cache"]["capacity_bytes"], 32'000'000);
  EXPECT_EQ(model_ceilings(model).cache_source, "cache");
  // Were the contraction sweep all spilled (the H200's), the re-read sweep would give them.
  json spilled = model;
  spilled["cache"] =
      json{{"outcome", "all_spilled"}, {"smallest_ws_bytes", 1 << 30}, {"points", json::array()}};
  const ModelCeilings from_reread = model_ceilings(spilled);
  EXPECT_EQ(from_reread.cache_source, "cache_reread");
  EXPECT_EQ(from_reread.cache_capacity_bytes, 28'284'271);
  EXPECT_NEAR(from_reread.cache_bytes_per_s.value(), 1.7e13, 1e3);
  // Each point keeps its model time and its bound: 40 MB spilled, so its 160 MB requested at
  // STREAM's 4.2e12 B/s take 38.095 ms, and its 40 MB distinct bytes bound it at 9.524 ms; 20 MB was
  // cached, so its 80 MB at the 1.7e13 B/s cache rate take 4.706 ms.
  const json& p40 = reread["points"][2];
  EXPECT_NEAR(reread["points"][1]["rank_ms"].get<double>(), 80e6 / 1.7e13 * 1e3, 1e-9);
  EXPECT_NEAR(p40["rank_ms"].get<double>(), 160e6 / 4.2e12 * 1e3, 1e-9);
  EXPECT_NEAR(p40["bound_ms"].get<double>(), 40e6 / 4.2e12 * 1e3, 1e-9);
  EXPECT_NE(summary_text(f).find(
                "Cache (re-read sweep): capacity 28.3 MB (between 20.0 MB cached and 40.0 MB spilled)"),
            std::string::npos)
      << summary_text(f);
}

TEST(BuildCalibration, QuickLeavesTheSweepsOutAndSaysSo) {
  DeclaredDevice device;
  device.tensor_phantom_points = 0;
  const CalibrationPlan plan = plan_calibration(h200_facts(), true);
  DeviceAnswers answers = device.answer(plan);
  // Points for a sweep the plan left out are not fitted.
  answers.working_set = {WorkingSetPoint{256, 8'000'000, 5'000'000'000'000, 8'000'000, 0.25},
                         WorkingSetPoint{512, 64'000'000, 1'025'000'000'000, 64'000'000, 0.25}};
  const CalibrationFile f =
      build_calibration(h200_facts(), plan, answers, RunInfo{"2026-11-30T12:00:00Z", "abc123"});
  EXPECT_TRUE(f.quick);
  EXPECT_EQ(verdict_of(f, "tensor"), "pass");
  EXPECT_EQ(f.device_model["cache"]["outcome"], "not_run");
  EXPECT_EQ(f.device_model["cache"]["reason"], "the working-set sweep was not run");
  EXPECT_EQ(f.device_model["fill"]["outcome"], "not_run");
  EXPECT_FALSE(f.device_model.contains("cache_reread"));
  EXPECT_TRUE(f.device_model["stream"]["bandwidth_bytes_per_s"].is_number());
  const ModelCeilings ceilings = model_ceilings(f.device_model);
  EXPECT_TRUE(ceilings.dram_bytes_per_s.has_value());
  EXPECT_FALSE(ceilings.cache_capacity_bytes || ceilings.cache_bytes_per_s || ceilings.issue_ops_per_s ||
               ceilings.fill_threads);
  const fs::path dir = scratch("run-quick");
  write_calibration(f, dir);
  // A quick check is never a calibration, whatever passed.
  EXPECT_EQ(find_calibration(h200_query(), std::nullopt, dir).status, "unvalidated");
  fs::create_directories(fs::path(DIESCOPE_BINARY_DIR) / "test-calibrations");
  write_text(fs::path(DIESCOPE_BINARY_DIR) / "test-calibrations" / "quick.json", dump_calibration(f));
}

}  // namespace
}  // namespace diescope::calibrate
