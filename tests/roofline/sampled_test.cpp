// The sampled backend (docs/roofline.md#the-sampled-backend): kernel windows in synthetic PM samples,
// the region times put on the samples' clock, the two-point measurement, the analytic FLOP rules, the
// sampler's interval check and bad input. Every expected figure is worked out by hand in the test.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "diescope/core/error.hpp"
#include "diescope/roofline/csv.hpp"
#include "diescope/roofline/plot.hpp"
#include "diescope/roofline/profile.hpp"
#include "diescope/roofline/range.hpp"
#include "diescope/roofline/sampled.hpp"

namespace diescope::roofline {
namespace {

constexpr std::int64_t kMs = 1'000'000;
const double kNaN = std::nan("");

// Samples of 1 ms from t = 0, one activity (and byte count) each.
std::vector<ActivitySample> ms_samples(const std::vector<double>& activity,
                                       const std::vector<double>& bytes = {}) {
  std::vector<ActivitySample> out;
  for (std::size_t i = 0; i < activity.size(); ++i) {
    const auto t = static_cast<std::int64_t>(i) * kMs;
    out.push_back({t, t + kMs, activity[i], bytes.empty() ? 0.0 : bytes[i]});
  }
  return out;
}

// Constants with round numbers for hand-worked cases: 5% threshold, 1.5 ms gap, 2 ms minimum, 0.7 ratio.
SampledConstants easy() {
  SampledConstants c;
  c.interval_ms = 1;
  c.activity_threshold_pct = 5;
  c.gap_ms = 1.5;
  c.min_window_ms = 2;
  c.activity_ratio = 0.7;
  return c;
}

// ---- kernel windows -------------------------------------------------------------------------------

TEST(SampledWindows, ActiveSamplesMakeOneWindowWithItsLength) {
  // Samples 2, 3, 4 are at 100%: one window from 2 ms to 5 ms, 3 ms long; its edges are whole (100%
  // of the plateau), so it is active for 3 ms.
  const auto w = find_windows(ms_samples({0, 0, 100, 100, 100, 0, 0}), 0, 7 * kMs, easy());
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].start_ns, 2 * kMs);
  EXPECT_EQ(w[0].end_ns, 5 * kMs);
  EXPECT_DOUBLE_EQ(w[0].active_s, 0.003);
  EXPECT_DOUBLE_EQ(w[0].mean_activity_pct, 100);
  EXPECT_EQ(w[0].kind, WindowKind::kernel);
}

TEST(SampledWindows, TheThresholdIsInclusive) {
  // 4.9% is idle, 5% is active: samples 1..3 (5, 5, 5) are the window; sample 0 (4.9) is not in it.
  const auto w = find_windows(ms_samples({4.9, 5, 5, 5, 4.9}), 0, 5 * kMs, easy());
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].start_ns, 1 * kMs);
  EXPECT_EQ(w[0].end_ns, 4 * kMs);
}

TEST(SampledWindows, WindowsCloserThanTheGapJoin) {
  // One idle sample between two active pairs: the space between them is 1 ms < 1.5 ms, so one window
  // from 0 to 5 ms. Its mean activity is (100 + 100 + 0 + 100 + 100) / 5 = 80%; the idle sample
  // inside counts whole (a dip between waves is still the kernel): active 5 ms.
  auto w = find_windows(ms_samples({100, 100, 0, 100, 100}), 0, 5 * kMs, easy());
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].end_ns - w[0].start_ns, 5 * kMs);
  EXPECT_DOUBLE_EQ(w[0].mean_activity_pct, 80);
  EXPECT_DOUBLE_EQ(w[0].active_s, 0.005);
  // Two idle samples: 2 ms apart, not closer than 1.5 ms: two windows of 2 ms.
  w = find_windows(ms_samples({100, 100, 0, 0, 100, 100}), 0, 6 * kMs, easy());
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[1].start_ns, 4 * kMs);
}

TEST(SampledWindows, AWindowShorterThanTheMinimumIsDropped) {
  // A 1 ms blip (a bootstrap launch) under the 2 ms minimum, then a 3 ms kernel.
  const auto w = find_windows(ms_samples({100, 0, 0, 100, 100, 100}), 0, 6 * kMs, easy());
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].kind, WindowKind::too_short);
  EXPECT_EQ(w[1].kind, WindowKind::kernel);
}

TEST(SampledWindows, WindowsBelowTheActivityRatioAreDataMovement) {
  // Three windows of 2 ms at 96%, 49% and 70%: 0.7 x 96 = 67.2, so the 49% window is data movement
  // and the 70% one a kernel.
  const auto w = find_windows(ms_samples({96, 96, 0, 0, 49, 49, 0, 0, 70, 70}), 0, 10 * kMs, easy());
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w[0].kind, WindowKind::kernel);
  EXPECT_EQ(w[1].kind, WindowKind::data_movement);
  EXPECT_EQ(w[2].kind, WindowKind::kernel);
}

TEST(SampledWindows, EdgeSamplesCountByTheirActiveShare) {
  // A kernel that starts halfway through sample 1 and ends a quarter into sample 4: 50, 100, 100, 25.
  // Plateau = the mean of the samples between the edges = 100; active = 0.5 + 1 + 1 + 0.25 = 2.75 ms.
  const auto w = find_windows(ms_samples({0, 50, 100, 100, 25, 0}), 0, 6 * kMs, easy());
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].end_ns - w[0].start_ns, 4 * kMs);
  EXPECT_NEAR(w[0].active_s, 0.00275, 1e-15);
}

TEST(SampledWindows, BytesAreTheIntegralOverTheWindow) {
  // 10 + 20 + 30 + 40 bytes in the window; the idle samples' 1000 bytes are outside it.
  auto w =
      find_windows(ms_samples({0, 100, 100, 100, 100, 0}, {1000, 10, 20, 30, 40, 1000}), 0, 6 * kMs, easy());
  ASSERT_EQ(w.size(), 1u);
  EXPECT_DOUBLE_EQ(w[0].dram_bytes, 100);
  // A sample without values inside: the others moved 10 + 30 + 40 = 80 bytes in 3 ms, so its 1 ms
  // is 80 / 3 bytes: 80 + 26.667 = 106.667.
  w = find_windows(ms_samples({0, 100, 100, 100, 100, 0}, {1000, 10, kNaN, 30, 40, 1000}), 0, 6 * kMs,
                   easy());
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NEAR(w[0].dram_bytes, 80 + 80.0 / 3, 1e-9);
  EXPECT_EQ(w[0].unread_samples, 1);
}

TEST(SampledWindows, TheH200ConstantsSplitAtOneIdleSampleAndKeepTwoSamples) {
  // docs/roofline.md#sampled-constants: 0.5 ms samples (the sampler's are 499,994 ns long), gap 0.25 ms,
  // minimum 1 ms. Touching samples join; one idle sample (499,994 ns apart) splits; a two-sample window
  // (999,988 ns) is under 1 ms and dropped, three samples are kept.
  const SampledConstants c;
  EXPECT_DOUBLE_EQ(c.interval_ms, 0.5);
  EXPECT_DOUBLE_EQ(c.activity_threshold_pct, 1);
  EXPECT_DOUBLE_EQ(c.gap_ms, 0.25);
  EXPECT_DOUBLE_EQ(c.min_window_ms, 1);
  EXPECT_DOUBLE_EQ(c.activity_ratio, 0.7);
  const std::vector<double> act = {100, 100, 100, 0, 100, 100, 0, 0.5, 1, 100, 100, 100};
  std::vector<ActivitySample> s;
  for (std::size_t i = 0; i < act.size(); ++i) {
    const auto t = static_cast<std::int64_t>(i) * 499'994;
    s.push_back({t, t + 499'994, act[i], 0});
  }
  const auto w = find_windows(s, 0, 12 * kMs, c);
  // 0-2 (three samples), 4-5 (two: too short), 8-11 (1% is active: four samples).
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w[0].end_ns, 3 * 499'994);
  EXPECT_EQ(w[0].kind, WindowKind::kernel);
  EXPECT_EQ(w[1].kind, WindowKind::too_short);
  EXPECT_EQ(w[2].start_ns, 8 * 499'994);
  EXPECT_EQ(w[2].kind, WindowKind::kernel);
}

TEST(SampledWindows, OnlySamplesOverlappingTheRegionCount) {
  // Two kernels, 0-3 ms and 5-8 ms; the region [4.5 ms, 9 ms] overlaps only the second.
  const auto w =
      find_windows(ms_samples({100, 100, 100, 0, 0, 100, 100, 100, 0}), 4 * kMs + kMs / 2, 9 * kMs, easy());
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].start_ns, 5 * kMs);
}

// ---- regions on the samples' clock ------------------------------------------------------------------

// A timestamps-mode file: the clock pair says realtime = monotonic + 1,000,000,000 ns.
RangeRun stamps(const std::string& body, bool ended = true) {
  std::string text =
      "diescope-range\t1\nclock\t5000\t1000005000\t120\nmode\ttimestamps\ndevice\tNVIDIA H200\t\n" + body;
  if (ended) text += "end\t0\n";
  return parse_range_output(text, "t.sampled.txt");
}

TEST(SampledRegions, RegionTimesAreConvertedToTheSamplesClock) {
  // The region runs 2 ms to 6 ms on CLOCK_MONOTONIC, so 1002 ms to 1006 ms on CLOCK_REALTIME, where
  // the samples are: samples 1002..1004 ms are active (the kernel), samples 999..1000 ms (before the
  // region) are not the region's.
  std::vector<double> act(10, 0.0);
  act[0] = act[1] = 100;           // 998-1000 ms: another region's kernel
  act[4] = act[5] = act[6] = 100;  // 1002-1005 ms
  std::vector<ActivitySample> s = ms_samples(act, std::vector<double>(10, 7.0));
  for (auto& x : s) {
    x.start_ns += 998 * kMs;
    x.end_ns += 998 * kMs;
  }
  const RangeRun run = stamps("open\tk\t1\t2000000\nrow\tk\t1\t1\t3\tkern\t2000000\t6000000\n");
  EXPECT_EQ(run.realtime_minus_monotonic_ns, 1'000'000'000);
  std::vector<std::string> warnings;
  const auto g = measure_regions(s, run, 1010 * kMs, easy(), "prog", warnings);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].from_ns, 1002 * kMs);
  EXPECT_EQ(g[0].to_ns, 1006 * kMs);
  EXPECT_EQ(g[0].kernel_windows, 1);
  EXPECT_DOUBLE_EQ(g[0].duration_s, 0.003);
  EXPECT_DOUBLE_EQ(g[0].dram_bytes, 21);  // 3 samples x 7 bytes
  EXPECT_TRUE(warnings.empty());
}

TEST(SampledRegions, NoRegionGivesOneRowForTheWholeRunWithAWarning) {
  auto s = ms_samples({0, 100, 100, 100, 0});
  for (auto& x : s) {  // on the samples' clock, 1 s after the library's
    x.start_ns += 1'000'000'000;
    x.end_ns += 1'000'000'000;
  }
  // The library's row for the work outside every region: from the first launch to the end.
  const RangeRun run = stamps("row\t\t1\t1\t1\tkern\t0\t5000000\n");
  std::vector<std::string> warnings;
  const auto g = measure_regions(s, run, 0, easy(), "prog", warnings);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_DOUBLE_EQ(g[0].duration_s, 0.003);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("prog: the program marks no NVTX region, so its whole run is one row"),
            std::string::npos);
  const auto rows =
      rows_from_sampled(g, nullptr, 1, "prog", "NVIDIA H200", {parse_flop_rule("prog=6")}, warnings);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].region, "");
}

TEST(SampledRegions, ARegionNeverClosedRunsToTheEndWithAWarning) {
  const auto s = ms_samples({0, 100, 100, 100, 0, 0, 100, 100});
  // Closed flag 0, closed at 4 ms (the exit handler); the program ended at 8 ms on the samples'
  // clock, so the row runs to 8 ms and holds both kernels: 3 ms + 2 ms (2 ms apart: two windows).
  std::vector<std::string> warnings;
  auto shifted = s;
  for (auto& x : shifted) {
    x.start_ns += 1'000'000'000;
    x.end_ns += 1'000'000'000;
  }
  const RangeRun good = stamps("open\tk\t1\t0\nrow\tk\t1\t0\t2\tkern\t0\t4000000\n");
  const auto g = measure_regions(shifted, good, 1'000'000'000 + 8 * kMs, easy(), "prog", warnings);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].to_ns, 1'000'000'000 + 8 * kMs);
  EXPECT_EQ(g[0].kernel_windows, 2);
  EXPECT_DOUBLE_EQ(g[0].duration_s, 0.005);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(
      warnings[0].find("region k (occurrence 1) was never closed: its row runs until the program ended"),
      std::string::npos);
}

TEST(SampledRegions, ACrashInsideARegionKeepsTheClosedOnesAndMeasuresTheOpenOneToTheEnd) {
  // ffma closed (0-3 ms monotonic), triad opened at 4 ms and the program died at 8 ms (no row, no end).
  std::vector<ActivitySample> s = ms_samples({100, 100, 100, 0, 0, 100, 100, 100});
  for (auto& x : s) {
    x.start_ns += 1'000'000'000;
    x.end_ns += 1'000'000'000;
  }
  const RangeRun run = stamps(
      "open\tffma\t1\t0\nrow\tffma\t1\t1\t1\tk\t0\t3000000\nopen\ttriad\t1\t4000000\n", /*ended=*/false);
  std::vector<std::string> warnings;
  const auto g = measure_regions(s, run, 1'000'000'000 + 8 * kMs, easy(), "prog", warnings);
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].name, "ffma");
  EXPECT_DOUBLE_EQ(g[0].duration_s, 0.003);
  EXPECT_EQ(g[1].name, "triad");
  EXPECT_FALSE(g[1].closed);
  EXPECT_DOUBLE_EQ(g[1].duration_s, 0.003);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(
      warnings[0].find("prog: the program ended without its exit handlers (it crashed or was killed) inside "
                       "triad#1, whose rows run until it ended"),
      std::string::npos)
      << warnings[0];
}

TEST(SampledRegions, AFileWithoutTheClockPairIsRefused) {
  const RangeRun run = parse_range_output("diescope-range\t1\nmode\ttimestamps\nend\t0\n", "old.txt");
  std::vector<std::string> warnings;
  EXPECT_THROW(measure_regions({}, run, 0, easy(), "prog", warnings), core::InputError);
}

TEST(SampledRegions, ARegionWithoutAKernelWindowIsNamed) {
  const RangeRun run = stamps("open\tidle\t1\t0\nrow\tidle\t1\t1\t0\t\t0\t3000000\n");
  auto s = ms_samples({0, 0, 0});
  for (auto& x : s) {
    x.start_ns += 1'000'000'000;
    x.end_ns += 1'000'000'000;
  }
  std::vector<std::string> warnings;
  const auto g = measure_regions(s, run, 0, easy(), "prog", warnings);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("region idle (occurrence 1) shows no compute activity"), std::string::npos);
  EXPECT_TRUE(rows_from_sampled(g, nullptr, 1, "prog", "", {}, warnings).empty());
}

// ---- the two-point measurement ----------------------------------------------------------------------

SampledRegion region(const std::string& name, long number, double duration_s, double bytes) {
  SampledRegion g;
  g.name = name;
  g.number = number;
  g.duration_s = duration_s;
  g.dram_bytes = bytes;
  g.kernel_windows = 1;
  g.launches = 1;
  return g;
}

TEST(SampledTwoPoint, TheOneIterationRunIsSubtractedAndTheRestDividedByNMinusOne) {
  // N = 5: the region, entered once per iteration, took 2 ms per iteration plus 3 ms of set-up on its
  // first entry in both runs. Main: 5 x 2 + 3 = 13 ms, 5 x 100 + 40 = 540 bytes. Ref: 2 + 3 = 5 ms,
  // 140 bytes. (13 - 5) / 4 = 2 ms; (540 - 140) / 4 = 100 bytes: the set-up is gone.
  std::vector<SampledRegion> main = {region("k", 1, 0.005, 140)};
  for (long i = 2; i <= 5; ++i) main.push_back(region("k", i, 0.002, 100));
  const std::vector<SampledRegion> ref = {region("k", 1, 0.005, 140)};
  std::vector<std::string> warnings;
  const auto rows =
      rows_from_sampled(main, &ref, 5, "prog", "NVIDIA H200", {parse_flop_rule("prog\\[k\\]=1e9")}, warnings);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_NEAR(rows[0].duration_s, 0.002, 1e-15);
  EXPECT_DOUBLE_EQ(rows[0].bytes[index(Level::dram)], 100);
  EXPECT_DOUBLE_EQ(rows[0].flop[index(Precision::fp32)], 1e9);
  EXPECT_EQ(rows[0].profiler, Profiler::sampled);
  EXPECT_EQ(rows[0].caches, "program");
  EXPECT_TRUE(warnings.empty());
}

TEST(SampledTwoPoint, ARegionMissingFromTheRefRunHasNoRow) {
  const std::vector<SampledRegion> main = {region("k", 1, 0.01, 1)};
  const std::vector<SampledRegion> ref = {region("other", 1, 0.01, 1)};
  std::vector<std::string> warnings;
  EXPECT_TRUE(rows_from_sampled(main, &ref, 3, "prog", "", {}, warnings).empty());
  ASSERT_FALSE(warnings.empty());
  EXPECT_NE(warnings[0].find("region k is in the 3-iteration run but not in the one-iteration (.ref) run"),
            std::string::npos);
}

TEST(SampledTwoPoint, NoMoreTimeInTheLongerRunLeavesTheDurationEmpty) {
  // The program ignored N: both runs took 10 ms, (10 - 10) / 2 = 0 is no time.
  const std::vector<SampledRegion> main = {region("k", 1, 0.01, 1)};
  const std::vector<SampledRegion> ref = {region("k", 1, 0.01, 1)};
  std::vector<std::string> warnings;
  const auto rows = rows_from_sampled(main, &ref, 3, "prog", "", {}, warnings);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_TRUE(std::isnan(rows[0].duration_s));
  EXPECT_NE(warnings[0].find("DIESCOPE_ITERATIONS"), std::string::npos);
}

// ---- energy (docs/roofline.md#energy) -------------------------------------------------------------

recording::PowerLimitReading reading(std::int64_t ms, double draw_w, double energy_mj) {
  return recording::PowerLimitReading{ms * kMs, 700, draw_w, energy_mj};
}

Window window_of(std::int64_t from_ms, std::int64_t to_ms, WindowKind kind = WindowKind::kernel) {
  Window w;
  w.start_ns = from_ms * kMs;
  w.end_ns = to_ms * kMs;
  w.kind = kind;
  return w;
}

TEST(SampledEnergy, TheCounterIsLinearBetweenReadingsOverEachKernelWindow) {
  // Readings at 0, 100 and 200 ms: the counter at 0, 50 J and 110 J. Kernel windows [50, 150) and
  // [180, 190); a data-movement window [10, 20) does not count. [50, 100): 50 J x 50/100 = 25 J;
  // [100, 150): 60 J x 50/100 = 30 J; [180, 190): 60 J x 10/100 = 6 J. 61 J in all.
  std::vector<SampledRegion> g(1);
  g[0].windows = {window_of(10, 20, WindowKind::data_movement), window_of(50, 150), window_of(180, 190)};
  const std::vector<recording::PowerLimitReading> power = {reading(0, 400, 0), reading(100, 400, 50'000),
                                                           reading(200, 400, 110'000)};
  add_window_energy(g, power);
  EXPECT_NEAR(g[0].energy_j, 61.0, 1e-9);
  EXPECT_EQ(g[0].energy_source, "counter");
  // Its row: 61 J over 12.2 TFLOP (1.22e13 FLOP) is 5 J per TFLOP.
  g[0].kernel_windows = 2;
  std::vector<std::string> warnings;
  const auto rows =
      rows_from_sampled(g, nullptr, 1, "prog", "NVIDIA H200", {parse_flop_rule("prog=1.22e13")}, warnings);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_NEAR(joules_per_tflop(rows[0]), 5.0, 1e-12);
  EXPECT_EQ(joules_per_tflop_missing(rows[0]), "");
}

TEST(SampledEnergy, WithoutTheCounterTheDrawIsIntegrated) {
  // The counter is not read at 100 ms: the draw, 200 W at 0 and 400 W at 100 ms, linear between.
  // [50, 100): the draw goes from 300 to 400 W, the trapezoid 350 W x 0.05 s = 17.5 J.
  std::vector<SampledRegion> g(1);
  g[0].windows = {window_of(50, 100)};
  add_window_energy(g, {reading(0, 200, 0), reading(100, 400, kNaN)});
  EXPECT_NEAR(g[0].energy_j, 17.5, 1e-9);
  EXPECT_EQ(g[0].energy_source, "power_draw");
}

TEST(SampledEnergy, AWindowOutsideTheReadingsHasNone) {
  // The readings end at 100 ms; the window runs to 120 ms: not covered, so no energy (NaN, not 0).
  std::vector<SampledRegion> g(1);
  g[0].windows = {window_of(50, 120)};
  add_window_energy(g, {reading(0, 200, 0), reading(100, 400, 40'000)});
  EXPECT_TRUE(std::isnan(g[0].energy_j));
  EXPECT_EQ(g[0].energy_source, "");
  Row r;
  r.profiler = Profiler::sampled;
  r.flop[index(Precision::fp32)] = 1e12;
  EXPECT_TRUE(std::isnan(joules_per_tflop(r)));
  EXPECT_NE(joules_per_tflop_missing(r).find("neither"), std::string::npos);
  r.profiler = Profiler::ncu;
  EXPECT_NE(joules_per_tflop_missing(r).find("replays"), std::string::npos);
}

TEST(SampledEnergy, TheTwoPointDifferenceAppliesToEnergyToo) {
  // N = 3. Main: 3 occurrences of 10 J plus 4 J of set-up in the first (34 J); ref: 14 J.
  // (34 - 14) / 2 = 10 J per iteration.
  std::vector<SampledRegion> main = {region("k", 1, 0.005, 1), region("k", 2, 0.002, 1),
                                     region("k", 3, 0.002, 1)};
  main[0].energy_j = 14;
  main[1].energy_j = main[2].energy_j = 10;
  std::vector<SampledRegion> ref = {region("k", 1, 0.005, 1)};
  ref[0].energy_j = 14;
  for (auto* v : {&main, &ref})
    for (SampledRegion& g : *v) g.energy_source = "counter";
  std::vector<std::string> warnings;
  auto rows = rows_from_sampled(main, &ref, 3, "prog", "", {}, warnings);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_NEAR(rows[0].energy_j, 10.0, 1e-12);
  EXPECT_EQ(rows[0].energy_source, "counter");
  // One occurrence measured by the draw makes the row's source the draw.
  main[2].energy_source = "power_draw";
  rows = rows_from_sampled(main, &ref, 3, "prog", "", {}, warnings);
  EXPECT_EQ(rows[0].energy_source, "power_draw");
}

TEST(SampledTwoPoint, IterationsAreSubstitutedInTheArguments) {
  const auto argv = substitute_iterations({"prog", "--reps", "{iterations}", "--tag=x{iterations}y"}, 20);
  EXPECT_EQ(argv, (std::vector<std::string>{"prog", "--reps", "20", "--tag=x20y"}));
}

// ---- analytic FLOPs ----------------------------------------------------------------------------------

TEST(SampledFlops, TheFirstMatchingRuleWinsAgainstExecutableAndRegion) {
  const std::vector<FlopRule> rules = {parse_flop_rule("\\[gemm\\]=2e13@tensor-bf16"),
                                       parse_flop_rule("regions=5e11"), parse_flop_rule("never=1")};
  EXPECT_EQ(match_flop_rule(rules, "regions[gemm]"), 0u);
  EXPECT_EQ(match_flop_rule(rules, "regions[ffma]"), 1u);
  EXPECT_FALSE(match_flop_rule(rules, "other[ffma]"));
  EXPECT_EQ(rules[0].precision, Precision::tensor_bf16);
  EXPECT_DOUBLE_EQ(rules[0].value, 2e13);
  EXPECT_EQ(rules[1].precision, Precision::fp32);
  const std::vector<SampledRegion> g = {region("gemm", 1, 0.02, 1e9), region("ffma", 1, 0.02, 1e6)};
  std::vector<std::string> warnings;
  const auto rows = rows_from_sampled(g, nullptr, 1, "regions", "", rules, warnings);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_DOUBLE_EQ(rows[0].flop[index(Precision::tensor_bf16)], 2e13);
  EXPECT_DOUBLE_EQ(rows[1].flop[index(Precision::fp32)], 5e11);
  // The third rule matched nothing: a warning naming it and the rows there are.
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("--flop 'never=1' matches no row (the rows are regions[gemm], regions[ffma])"),
            std::string::npos)
      << warnings[0];
}

TEST(SampledFlops, BadRulesAreUsageErrors) {
  EXPECT_THROW(parse_flop_rule("gemm"), core::UsageError);
  EXPECT_THROW(parse_flop_rule("=5"), core::UsageError);
  EXPECT_THROW(parse_flop_rule("gemm=lots"), core::UsageError);
  EXPECT_THROW(parse_flop_rule("gemm=-1"), core::UsageError);
  EXPECT_THROW(parse_flop_rule("(gemm=5"), core::UsageError);
  EXPECT_THROW(parse_flop_rule("gemm=5@fp128"), core::UsageError);
  EXPECT_EQ(parse_flop_rule("a=b=3").value, 3);  // the last '=' splits: the pattern may hold one
}

// ---- the sampler's interval ----------------------------------------------------------------------

TEST(SampledCheck, IntervalCoverageAndHolesAreCounted) {
  // Four 0.5 ms samples, a 1 ms hole after the second: covered 2 ms of a 3 ms span = 66.67%.
  const std::int64_t h = kMs / 2;
  const std::vector<ActivitySample> s = {
      {0, h, 1, 0}, {h, 2 * h, 1, 0}, {4 * h, 5 * h, kNaN, 0}, {5 * h, 6 * h, 1, 0}};
  const SamplingCheck c = check_sampling(s, 0.5);
  EXPECT_EQ(c.samples, 4);
  EXPECT_DOUBLE_EQ(c.median_interval_ms, 0.5);
  EXPECT_NEAR(c.covered_pct, 200.0 / 3, 1e-9);
  EXPECT_EQ(c.holes, 1);
  EXPECT_DOUBLE_EQ(c.longest_hole_ms, 1.0);
  EXPECT_EQ(c.unread, 1);
}

// ---- settings and the table ------------------------------------------------------------------------

TEST(SampledSettings, TheBackendTakesItsOwnSettings) {
  const NcuSettings s =
      parse_backend_settings("sampled", {"iterations=20", "interval-ms=0.25", "threshold=2", "gap-ms=0.75",
                                         "min-window-ms=0.5", "activity-ratio=0.6", "lib=/x.so"});
  EXPECT_EQ(s.iterations, 20);
  EXPECT_DOUBLE_EQ(s.sampled.interval_ms, 0.25);
  EXPECT_DOUBLE_EQ(s.sampled.activity_threshold_pct, 2);
  EXPECT_DOUBLE_EQ(s.sampled.gap_ms, 0.75);
  EXPECT_DOUBLE_EQ(s.sampled.min_window_ms, 0.5);
  EXPECT_DOUBLE_EQ(s.sampled.activity_ratio, 0.6);
  EXPECT_EQ(s.lib, "/x.so");
  EXPECT_THROW(parse_backend_settings("sampled", {"iterations=0"}), core::UsageError);
  EXPECT_THROW(parse_backend_settings("sampled", {"iterations=2.5"}), core::UsageError);
  EXPECT_THROW(parse_backend_settings("sampled", {"interval-ms=0.05"}), core::UsageError);
  EXPECT_THROW(parse_backend_settings("sampled", {"activity-ratio=1.5"}), core::UsageError);
  try {
    parse_backend_settings("range", {"iterations=3"});
    FAIL();
  } catch (const core::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("-O iterations belongs to the sampled backend, not range"),
              std::string::npos)
        << e.what();
  }
}

TEST(SampledTable, RowsRoundTripThroughTheCsvAndDrawWithTheirOwnMark) {
  // A row without a clock (the sampler reads none per region): its counter peaks are unknown, its point
  // is drawn from its FLOPs, bytes and duration: 1e12 FLOP / 1e9 B = 1000 FLOP/B, 1e12 / 0.02 = 50 TFLOP/s.
  const std::vector<SampledRegion> g = {region("gemm", 1, 0.02, 1e9)};
  std::vector<std::string> warnings;
  auto rows =
      rows_from_sampled(g, nullptr, 1, "regions", "NVIDIA H200", {parse_flop_rule("gemm=1e12")}, warnings);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_DOUBLE_EQ(intensity(rows[0], Level::dram), 1000);
  EXPECT_DOUBLE_EQ(performance(rows[0]), 5e13);
  const auto back = parse_table_csv(table_csv(rows), "t.csv");
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].profiler, Profiler::sampled);
  EXPECT_DOUBLE_EQ(back[0].duration_s, 0.02);
  EXPECT_DOUBLE_EQ(back[0].bytes[index(Level::dram)], 1e9);
  const std::string svg = render_svg(back, PlotOptions{});
  EXPECT_NE(svg.find("sampled | regions"), std::string::npos);
}

TEST(SampledTable, SampledRowsBorrowTheGpusPeaksPerCycleFromAnotherBackendsRow) {
  // An ncu row of the H200 with its peaks (33,792 fp32 FLOP/cycle, 1,504 DRAM B/cycle), a sampled row of
  // the same GPU without, and a sampled row of another GPU: only the second takes the H200's peaks.
  Row ncu;
  ncu.gpu = "NVIDIA H200";
  ncu.peak_flop_per_cycle[index(Precision::fp32)] = 33792;
  ncu.peak_bytes_per_cycle[index(Level::dram)] = 1504;
  Row sampled;
  sampled.profiler = Profiler::sampled;
  sampled.gpu = "NVIDIA H200";
  Row other = sampled;
  other.gpu = "NVIDIA H100";
  std::vector<Row> rows = {sampled, ncu, other};
  const auto borrowed = borrow_counter_peaks(rows);
  ASSERT_EQ(borrowed, (std::vector<std::size_t>{0}));
  EXPECT_DOUBLE_EQ(rows[0].peak_flop_per_cycle[index(Precision::fp32)], 33792);
  EXPECT_DOUBLE_EQ(rows[0].peak_bytes_per_cycle[index(Level::dram)], 1504);
  EXPECT_TRUE(std::isnan(rows[2].peak_flop_per_cycle[index(Precision::fp32)]));
}

}  // namespace
}  // namespace diescope::roofline
