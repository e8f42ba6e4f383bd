// Every outcome of every device-model fit, on synthetic points whose answers are worked out by hand
// in the comments.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>

#include "diescope/calibrate/device_model.hpp"

namespace diescope::calibrate {
namespace {

constexpr std::int64_t kMB = 1'000'000;

// ---- STREAM ----

TEST(Stream, BytesCountEveryVectorReadAndWritten) {
  // copy c = a: 1 read + 1 write = 2 x 2^26 x 4 = 536,870,912 bytes.
  EXPECT_EQ(stream_bytes(StreamKernel::copy, std::uint64_t{1} << 26), 536'870'912u);
  EXPECT_EQ(stream_bytes(StreamKernel::scale, std::uint64_t{1} << 26), 536'870'912u);
  // add c = a + b and triad a = b + 0.5 c: 2 reads + 1 write = 3 x 2^26 x 4 = 805,306,368 bytes.
  EXPECT_EQ(stream_bytes(StreamKernel::add, std::uint64_t{1} << 26), 805'306'368u);
  EXPECT_EQ(stream_bytes(StreamKernel::triad, std::uint64_t{1} << 26), 805'306'368u);
  EXPECT_EQ(stream_kernel_name(StreamKernel::triad), "triad");
}

TEST(Stream, BestOfRepeatsAndTheFastestKernelIsTheCeiling) {
  const std::uint64_t n = std::uint64_t{1} << 26;
  const std::int64_t l2 = 50 * 1024 * 1024;  // 4 x 50 MiB = 200 MiB < 512 MiB copy footprint
  // copy: best repeat 1.34217728e-4 s (NaN and negative left out): 536,870,912 / 1.34217728e-4 = 4.0e12 B/s.
  // triad: 805,306,368 / 1.6777216e-4 = 4.8e12 B/s, the ceiling.
  const StreamFit fit = fit_stream({{StreamKernel::copy, n, {2e-4, 1.34217728e-4, std::nan(""), -1, 1.5e-4}},
                                    {StreamKernel::triad, n, {1.6777216e-4, 2e-4}}},
                                   l2);
  ASSERT_EQ(fit.kernels.size(), 2u);
  EXPECT_EQ(fit.kernels[0].repeats, 3);
  EXPECT_DOUBLE_EQ(fit.kernels[0].best_seconds, 1.34217728e-4);
  EXPECT_DOUBLE_EQ(fit.kernels[0].bytes_per_s, 4.0e12);
  EXPECT_DOUBLE_EQ(fit.kernels[1].bytes_per_s, 4.8e12);
  EXPECT_DOUBLE_EQ(fit.bandwidth_bytes_per_s, 4.8e12);
  EXPECT_EQ(fit.best_kernel, "triad");
  EXPECT_TRUE(fit.reason.empty());
  EXPECT_TRUE(fit.note.empty());
}

TEST(Stream, RatesThatAreNotExactOrNotDramAreNaNWithTheReason) {
  const std::int64_t l2 = 50 * 1024 * 1024;
  const StreamFit fit =
      fit_stream({{StreamKernel::scale, 1000, {1e-6}},                       // guard needed
                  {StreamKernel::add, std::uint64_t{1} << 20, {1e-5}},       // 12 MiB < 200 MiB
                  {StreamKernel::copy, std::uint64_t{1} << 26, {0.0, -2}}},  // no valid repeat
                 l2);
  ASSERT_EQ(fit.kernels.size(), 3u);
  for (const StreamKernelRate& k : fit.kernels) EXPECT_TRUE(std::isnan(k.bytes_per_s));
  EXPECT_NE(fit.kernels[0].reason.find("not a power of two"), std::string::npos) << fit.kernels[0].reason;
  // add over 2^20 floats: 3 x 2^20 x 4 = 12 MiB, under 4 x 50 MiB.
  EXPECT_NE(fit.kernels[1].reason.find("12.0 MiB"), std::string::npos) << fit.kernels[1].reason;
  EXPECT_NE(fit.kernels[1].reason.find("not a DRAM rate"), std::string::npos);
  EXPECT_NE(fit.kernels[2].reason.find("no repeat"), std::string::npos);
  EXPECT_TRUE(std::isnan(fit.bandwidth_bytes_per_s));
  EXPECT_NE(fit.reason.find("no STREAM kernel gave a DRAM rate"), std::string::npos);
}

TEST(Stream, UnknownL2SkipsTheFootprintCheckAndSaysSo) {
  // 2^20 floats would fail the footprint check against any real L2; with L2 unknown the rate stands:
  // copy 2 x 2^20 x 4 = 8,388,608 bytes / 4.194304e-6 s = 2.0e12 B/s.
  const StreamFit fit = fit_stream({{StreamKernel::copy, std::uint64_t{1} << 20, {4.194304e-6}}}, 0);
  EXPECT_DOUBLE_EQ(fit.bandwidth_bytes_per_s, 2.0e12);
  EXPECT_FALSE(fit.note.empty());
  EXPECT_TRUE(std::isnan(fit_stream({}, 0).bandwidth_bytes_per_s));
  EXPECT_EQ(fit_stream({}, 0).reason, "no STREAM kernel was timed");
}

// ---- Working-set sweep ----

// A point with the given working set and requested rate, timed at 0.25 s (exact in binary).
WorkingSetPoint ws_point(std::int64_t ws, double rate) {
  WorkingSetPoint p;
  p.k = ws / 1000;
  p.working_set_bytes = ws;
  p.requested_bytes = static_cast<std::int64_t>(rate * 0.25);
  p.distinct_bytes = ws;
  p.seconds = 0.25;
  return p;
}

// 1 MB reads slow because it is launch-bound (dropped: smaller than the fastest), 2 to 8 MB from
// cache, 64 and 128 MB from DRAM.
std::vector<WorkingSetPoint> clean_sweep() {
  return {ws_point(1 * kMB, 1.0e12), ws_point(2 * kMB, 5.0e12),  ws_point(4 * kMB, 4.0e12),
          ws_point(8 * kMB, 4.5e12), ws_point(64 * kMB, 1.0e12), ws_point(128 * kMB, 0.9e12)};
}

TEST(Capacity, TransitionWithADramRate) {
  // Threshold sqrt(5e12 x 1e12) = 2.236e12: cached 2, 4, 8 MB; spilled 64, 128 MB.
  // capacity = sqrt(8e6 x 64e6) = sqrt(5.12e14) = 22,627,416.998 -> 22,627,417 bytes.
  // cache rate = median(5e12, 4e12, 4.5e12) = 4.5e12.
  const CapacityFit fit = fit_capacity(clean_sweep(), 1.0e12);
  ASSERT_TRUE(std::holds_alternative<CapacityTransition>(fit));
  const auto& t = std::get<CapacityTransition>(fit);
  EXPECT_EQ(t.cached_ws, 8 * kMB);
  EXPECT_EQ(t.spilled_ws, 64 * kMB);
  EXPECT_EQ(t.capacity, 22'627'417);
  EXPECT_TRUE(t.monotone);
  EXPECT_DOUBLE_EQ(t.cache_rate, 4.5e12);
}

TEST(Capacity, TransitionWithoutADramRateUsesTheSlowestPoint) {
  // Kept points (2 MB on): fastest 5e12, slowest 0.9e12, contrast 5.56 >= 2; threshold
  // sqrt(5e12 x 0.9e12) = 2.121e12 splits them as above.
  const CapacityFit fit = fit_capacity(clean_sweep());
  ASSERT_TRUE(std::holds_alternative<CapacityTransition>(fit));
  EXPECT_EQ(std::get<CapacityTransition>(fit).capacity, 22'627'417);
}

TEST(Capacity, RatesThatDoNotSplitByWorkingSetAreFlaggedNotMonotone) {
  // 4 MB reads at the DRAM rate between two cached points: cached {2, 8} MB, spilled {4, 64} MB.
  // cached_ws 8 MB > spilled_ws 4 MB, so not monotone; capacity sqrt(8e6 x 4e6) = 5,656,854.25 -> 5,656,854;
  // cache rate median(5e12, 4.5e12) = 4.75e12.
  const CapacityFit fit = fit_capacity({ws_point(2 * kMB, 5.0e12), ws_point(4 * kMB, 1.0e12),
                                        ws_point(8 * kMB, 4.5e12), ws_point(64 * kMB, 1.0e12)},
                                       1.0e12);
  ASSERT_TRUE(std::holds_alternative<CapacityTransition>(fit));
  const auto& t = std::get<CapacityTransition>(fit);
  EXPECT_FALSE(t.monotone);
  EXPECT_EQ(t.cached_ws, 8 * kMB);
  EXPECT_EQ(t.spilled_ws, 4 * kMB);
  EXPECT_EQ(t.capacity, 5'656'854);
  EXPECT_DOUBLE_EQ(t.cache_rate, 4.75e12);
}

TEST(Capacity, AllCachedInventsNoCapacity) {
  // Threshold sqrt(5e12 x 1e12) = 2.236e12; all three rates are above it. largest 8 MB, median 4e12.
  const CapacityFit fit =
      fit_capacity({ws_point(2 * kMB, 5.0e12), ws_point(4 * kMB, 4.0e12), ws_point(8 * kMB, 3.0e12)}, 1.0e12);
  ASSERT_TRUE(std::holds_alternative<CapacityAllCached>(fit));
  EXPECT_EQ(std::get<CapacityAllCached>(fit).largest_ws, 8 * kMB);
  EXPECT_DOUBLE_EQ(std::get<CapacityAllCached>(fit).cache_rate, 4.0e12);
}

TEST(Capacity, AllSpilledBoundsTheCapacityByTheSmallestKeptPoint) {
  // DRAM rate 4e12, fastest 1.1e12: threshold sqrt(1.1e12 x 4e12) = 2.098e12 and every rate is below.
  // The 1 MB point is dropped (smaller than the fastest, 2 MB), so the bound is 2 MB, not 1 MB.
  const CapacityFit fit = fit_capacity({ws_point(1 * kMB, 0.5e12), ws_point(2 * kMB, 1.1e12),
                                        ws_point(4 * kMB, 1.0e12), ws_point(8 * kMB, 1.05e12)},
                                       4.0e12);
  ASSERT_TRUE(std::holds_alternative<CapacityAllSpilled>(fit));
  EXPECT_EQ(std::get<CapacityAllSpilled>(fit).smallest_ws, 2 * kMB);
}

TEST(Capacity, NoTransitionWhenTheContrastIsUnderTwo) {
  // No DRAM rate; fastest 5e12, slowest 3e12: contrast 5/3 = 1.667 < 2.
  const CapacityFit fit =
      fit_capacity({ws_point(2 * kMB, 5.0e12), ws_point(4 * kMB, 4.0e12), ws_point(8 * kMB, 3.0e12)});
  ASSERT_TRUE(std::holds_alternative<CapacityNoTransition>(fit));
  EXPECT_DOUBLE_EQ(std::get<CapacityNoTransition>(fit).contrast, 5.0 / 3.0);
}

TEST(Capacity, TooFewPoints) {
  EXPECT_TRUE(std::holds_alternative<CapacityTooFewPoints>(fit_capacity({ws_point(2 * kMB, 5e12)}, 1e12)));
  // A point with no time does not count: one valid point is left.
  WorkingSetPoint untimed = ws_point(4 * kMB, 4e12);
  untimed.seconds = 0;
  EXPECT_TRUE(
      std::holds_alternative<CapacityTooFewPoints>(fit_capacity({ws_point(2 * kMB, 5e12), untimed}, 1e12)));
  // The fastest point is the largest, so nothing is left past it: extend the sweep.
  const CapacityFit fit = fit_capacity({ws_point(1 * kMB, 1e12), ws_point(2 * kMB, 5e12)}, 1e12);
  ASSERT_TRUE(std::holds_alternative<CapacityTooFewPoints>(fit));
  EXPECT_NE(std::get<CapacityTooFewPoints>(fit).reason.find("extend the sweep"), std::string::npos);
}

// ---- Launch fill ----

TEST(Fill, CappedAndUncappedForms) {
  // B=2 blocks of T=256 on P=4, t=128: capped 2 x min(256,128) / (4 x 128) = 256/512 = 0.5;
  // uncapped 2 x 256 / 512 = 1.
  const LaunchContext wide{2, 256, 1e6, 0};
  EXPECT_DOUBLE_EQ(context_fill(wide, 4, 128, FillForm::capped), 0.5);
  EXPECT_DOUBLE_EQ(context_fill(wide, 4, 128, FillForm::uncapped), 1.0);
  // Blocks no wider than t: the forms coincide. t=512: 2 x 256 / 2048 = 0.25 both ways.
  EXPECT_DOUBLE_EQ(context_fill(wide, 4, 512, FillForm::capped), 0.25);
  EXPECT_DOUBLE_EQ(context_fill(wide, 4, 512, FillForm::uncapped), 0.25);
  // Saturates at 1: 10 x 128 / 512 = 2.5 -> 1.
  EXPECT_DOUBLE_EQ(context_fill({10, 256, 1, 0}, 4, 128), 1.0);
  EXPECT_TRUE(std::isnan(context_fill(wide, 0, 128)));
  EXPECT_TRUE(std::isnan(context_fill({0, 256, 1, 0}, 4, 128)));
}

TEST(Fill, EffectiveOpsDivideEachContextByItsFill) {
  // P=4, t=128. {2 x 256, 1e6 ops}: fill 0.5 -> 2e6. {1 x 64, 3e6 ops}: fill 64/512 = 0.125 -> 24e6.
  // Total 26e6; the kernel's fill is 4e6 / 26e6 = 0.153846...
  const std::vector<LaunchContext> contexts = {{2, 256, 1e6, 0}, {1, 64, 3e6, 0}};
  EXPECT_DOUBLE_EQ(effective_ops(contexts, 4, 128), 26e6);
  EXPECT_DOUBLE_EQ(kernel_fill(contexts, 4, 128), 4.0 / 26.0);
  EXPECT_TRUE(std::isnan(kernel_fill({}, 4, 128)));
}

// ---- Issue rate ----

IssuePoint issue_point(double ops, double seconds, std::vector<LaunchContext> contexts = {}) {
  IssuePoint p;
  p.k = static_cast<std::int64_t>(ops / 1e6);
  p.scalar_ops = ops;
  p.seconds = seconds;
  p.contexts = std::move(contexts);
  return p;
}

TEST(IssueRate, ExactLineGivesRateAndLatency) {
  // seconds = 1e-4 + ops / 1e13: ops 1e9, 2e9, 4e9 -> 2e-4, 3e-4, 5e-4. A zero-op point is left out.
  const IssueRateFit fit = fit_issue_rate(
      {issue_point(1e9, 2e-4), issue_point(2e9, 3e-4), issue_point(4e9, 5e-4), issue_point(0, 9.0)});
  ASSERT_TRUE(std::holds_alternative<IssueFit>(fit));
  const auto& f = std::get<IssueFit>(fit);
  EXPECT_NEAR(f.rate / 1e13, 1.0, 1e-9);
  EXPECT_NEAR(f.latency_s, 1e-4, 1e-12);
  EXPECT_NEAR(f.max_residual, 0.0, 1e-9);
  EXPECT_EQ(f.points, 3);
}

TEST(IssueRate, LargestResidual) {
  // x = 1, 2, 3; y = 2, 3, 5. Means 2 and 10/3; Sxx = 2, Sxy = (-1)(-4/3) + 0 + (1)(5/3) = 3.
  // slope 1.5 -> rate 1/1.5; intercept 10/3 - 3 = 1/3. Predictions 11/6, 10/3, 29/6:
  // relative errors (1/6)/2 = 1/12, (1/3)/3 = 1/9, (1/6)/5 = 1/30; the largest is 1/9.
  const IssueRateFit fit = fit_issue_rate({issue_point(1, 2), issue_point(2, 3), issue_point(3, 5)});
  ASSERT_TRUE(std::holds_alternative<IssueFit>(fit));
  const auto& f = std::get<IssueFit>(fit);
  EXPECT_NEAR(f.rate, 1 / 1.5, 1e-12);
  EXPECT_NEAR(f.latency_s, 1.0 / 3.0, 1e-12);
  EXPECT_NEAR(f.max_residual, 1.0 / 9.0, 1e-12);
}

TEST(IssueRate, FillNormalisesEachPoint) {
  // P=4, t=128, blocks of 128 threads: 2 blocks fill 2x128/512 = 0.5, 8 and 16 blocks fill 1.
  // Effective ops 1e9/0.5 = 2e9, 3e9, 5e9; seconds 1e-4 + effective/1e13 = 3e-4, 4e-4, 6e-4: an exact line.
  const std::vector<IssuePoint> points = {issue_point(1e9, 3e-4, {{2, 128, 1e9, 0}}),
                                          issue_point(3e9, 4e-4, {{8, 128, 3e9, 0}}),
                                          issue_point(5e9, 6e-4, {{16, 128, 5e9, 0}})};
  const IssueRateFit filled = fit_issue_rate(points, FillModel{4, 128, FillForm::capped});
  ASSERT_TRUE(std::holds_alternative<IssueFit>(filled));
  EXPECT_NEAR(std::get<IssueFit>(filled).rate / 1e13, 1.0, 1e-9);
  EXPECT_NEAR(std::get<IssueFit>(filled).max_residual, 0.0, 1e-9);
  // Blind to the fill the same points do not lie on a line: x = 1, 3, 5 (e9), y = 3, 4, 6 (e-4):
  // slope (Sxy/Sxx) = ((-2)(-1.333) + 0 + (2)(1.667)) / 8 = 6/8 = 0.75e-13 -> rate 1.333e13.
  const IssueRateFit raw = fit_issue_rate(points);
  ASSERT_TRUE(std::holds_alternative<IssueFit>(raw));
  EXPECT_NEAR(std::get<IssueFit>(raw).rate / 1e13, 1 / 0.75, 1e-9);
  EXPECT_GT(std::get<IssueFit>(raw).max_residual, 0.01);
  // A point without contexts cannot be normalised.
  const IssueRateFit missing =
      fit_issue_rate({issue_point(1e9, 3e-4), issue_point(3e9, 4e-4)}, FillModel{4, 128});
  ASSERT_TRUE(std::holds_alternative<IssueUnfittable>(missing));
  EXPECT_NE(std::get<IssueUnfittable>(missing).reason.find("no launch contexts"), std::string::npos);
}

TEST(IssueRate, Unfittable) {
  auto reason = [](const IssueRateFit& f) {
    return std::holds_alternative<IssueUnfittable>(f) ? std::get<IssueUnfittable>(f).reason
                                                      : std::string("fitted");
  };
  EXPECT_NE(reason(fit_issue_rate({issue_point(1e9, 1e-3)})).find("too few points"), std::string::npos);
  EXPECT_NE(
      reason(fit_issue_rate({issue_point(1e9, 1e-3), issue_point(1e9, 2e-3)})).find("same operation count"),
      std::string::npos);
  EXPECT_NE(reason(fit_issue_rate({issue_point(1e9, 2e-3), issue_point(2e9, 1e-3)})).find("no growth"),
            std::string::npos);
}

// ---- Launch-fill fit ----

// A point of a geometry with `threads` per block, `blocks` blocks and 1e9 operations, timed as the true
// model says: seconds = ops / (rate x fill), fill = min(1, blocks x threads / (4 x 256)) (P=4, t=256).
LaunchPoint true_point(const std::string& geometry, std::int64_t threads, std::int64_t blocks, double rate) {
  LaunchPoint p;
  p.geometry = geometry;
  p.m = p.n = blocks * 32;
  p.k = 1024;
  p.contexts = {{blocks, threads, 1e9, 0}};
  const double fill = std::min(1.0, static_cast<double>(blocks * threads) / (4.0 * 256.0));
  p.seconds = 1e9 / (rate * fill);
  return p;
}

std::vector<LaunchPoint> true_sweep() {
  // Geometry A: 64 threads, rate 1e12; blocks 1..32 fill 0.0625, 0.125, 0.25, 0.5, 1, 1.
  // Geometry B: 256 threads, rate 2e12; blocks 1..8 fill 0.25, 0.5, 1, 1.
  std::vector<LaunchPoint> points;
  for (std::int64_t b : {1, 2, 4, 8, 16, 32}) points.push_back(true_point("32x32x8/4x4", 64, b, 1e12));
  for (std::int64_t b : {1, 2, 4, 8}) points.push_back(true_point("64x64x8/4x4", 256, b, 2e12));
  return points;
}

TEST(LaunchFill, RecoversTheSaturationAndLeavesOutStarvedPoints) {
  const LaunchFillFit fit = fit_fill(true_sweep(), 4);
  ASSERT_TRUE(std::holds_alternative<FillFit>(fit)) << std::get<FillUnfittable>(fit).reason;
  const auto& f = std::get<FillFit>(fit);
  EXPECT_EQ(f.cores, 4);
  // The data were made with t = 256; every other candidate leaves a residual.
  EXPECT_EQ(f.saturation, 256);
  // The lead geometry is the first point's: A, 1e12 ops/s.
  EXPECT_NEAR(f.rate / 1e12, 1.0, 1e-9);
  EXPECT_NEAR(f.max_residual, 0.0, 1e-9);
  // A's best raw throughput is 1e12; its 1-block point runs at 1e9/0.016 = 6.25e10 < 1e12/8 = 1.25e11:
  // starved. Its 2-block point, 1.25e11, is exactly at the bound and stays. B: best 2e12, bound 2.5e11,
  // its slowest 5e11 stays.
  EXPECT_EQ(f.starved_points, 1);
  EXPECT_EQ(f.points, 9);
  // Below 0.9 fill under t=256: A's 2, 4, 8 blocks (0.125, 0.25, 0.5) and B's 1, 2 blocks (0.25, 0.5).
  EXPECT_EQ(f.partial_points, 5);
  // Blind to the fill, A's rate is sum a^2 / sum a over a = throughputs 1.25e11, 2.5e11, 5e11, 1e12, 1e12:
  // 2.328125e24 / 2.875e12 = 8.0978e11. The largest raw residual is A's 2-block point:
  // 1 - 1.25e11 x 2.875e12 / 2.328125e24 = 1 - 0.154362 = 0.845638.
  ASSERT_TRUE(f.raw_rate && f.raw_residual);
  EXPECT_NEAR(*f.raw_rate / (2.328125e24 / 2.875e12), 1.0, 1e-12);
  EXPECT_NEAR(*f.raw_residual, 1 - 0.125 * 2.875 / 2.328125, 1e-12);
  // No block is wider than 256 threads, so the uncapped form finds the same t with the same residual.
  ASSERT_TRUE(f.uncapped);
  EXPECT_EQ(f.uncapped->first, 256);
  EXPECT_NEAR(f.uncapped->second, 0.0, 1e-9);
}

std::string unfittable(const LaunchFillFit& fit) {
  return std::holds_alternative<FillUnfittable>(fit) ? std::get<FillUnfittable>(fit).reason
                                                     : std::string("fitted");
}

TEST(LaunchFill, UnfittableSweeps) {
  EXPECT_NE(unfittable(fit_fill({true_point("g", 64, 8, 1e12)}, 4)).find("too few points"),
            std::string::npos);

  std::vector<LaunchPoint> mma = true_sweep();
  mma[3].contexts[0].mma_ops = 1e6;
  EXPECT_NE(unfittable(fit_fill(mma, 4)).find("tile-MMA"), std::string::npos);

  // Never leaves full fill: times proportional to operations, 64 and 128 blocks of 64 threads. The first
  // candidate, t=64, fills both (64 x 64 / 256 >= 1) with zero residual and wins; then no geometry has a
  // point below full fill.
  LaunchPoint a = true_point("g", 64, 64, 1e12), b = true_point("g", 64, 128, 1e12);
  b.contexts[0].scalar_ops = 2e9;
  b.seconds = 2e-3;
  a.seconds = 1e-3;
  EXPECT_NE(unfittable(fit_fill({a, b}, 4)).find("both at and below full fill"), std::string::npos);

  // One point below full fill: 8 and 16 blocks of 64 threads (fills 0.5 and 1 at t=256). t=256 is the
  // first candidate with zero residual (t=512 ties later), and only one point is below 0.9.
  EXPECT_NE(unfittable(fit_fill({true_point("g", 64, 8, 1e12), true_point("g", 64, 16, 1e12)}, 4))
                .find("only 1 point"),
            std::string::npos);

  // Starved points leave one: A's 1 block is starved against its 16 blocks (1/16 of the throughput).
  EXPECT_NE(unfittable(fit_fill({true_point("g", 64, 1, 1e12), true_point("g", 64, 16, 1e12)}, 4))
                .find("latency-starved"),
            std::string::npos);

  EXPECT_NE(unfittable(fit_fill(true_sweep(), 4, {})).find("no candidate"), std::string::npos);
  EXPECT_NE(unfittable(fit_fill(true_sweep(), 0)).find("multiprocessors"), std::string::npos);
}

TEST(Median, OddEvenAndEmpty) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_TRUE(std::isnan(median({})));
}

// Each point against the fitted model (docs/calibration.md#device-model), worked by hand.
TEST(PointScores, WorkingSetPointsTakeTheRateTheirSideOfTheCapacityGives) {
  // 8e9 requested bytes; a 2 MiB capacity served at 8e12 B/s, DRAM at 4e12 B/s.
  const CapacityFit transition = CapacityTransition{1 << 20, 4 << 20, 2 << 20, true, 8e12};
  WorkingSetPoint cached{256, 1 << 20, 8'000'000'000, 400'000'000, 1e-3};
  WorkingSetPoint spilled{4096, 4 << 20, 8'000'000'000, 400'000'000, 2e-3};
  EXPECT_DOUBLE_EQ(working_set_rank_ms(cached, transition, 4e12), 1.0);             // 8e9 / 8e12 s
  EXPECT_DOUBLE_EQ(working_set_rank_ms(spilled, transition, 4e12), 2.0);            // 8e9 / 4e12 s
  EXPECT_TRUE(std::isnan(working_set_rank_ms(spilled, transition, std::nullopt)));  // no DRAM rate
  EXPECT_DOUBLE_EQ(working_set_rank_ms(spilled, CapacityFit{CapacityAllCached{4 << 20, 8e12}}, 4e12), 1.0);
  EXPECT_DOUBLE_EQ(working_set_rank_ms(cached, CapacityFit{CapacityAllSpilled{1 << 20}}, 4e12), 2.0);
  EXPECT_TRUE(std::isnan(working_set_rank_ms(cached, CapacityFit{CapacityNoTransition{1.5}}, 4e12)));
  // The distinct-byte bound: 4e8 bytes at 4e12 B/s = 0.1 ms.
  EXPECT_DOUBLE_EQ(distinct_bound_ms(400'000'000, 4e12), 0.1);
  EXPECT_TRUE(std::isnan(distinct_bound_ms(0, 4e12)));
  EXPECT_TRUE(std::isnan(distinct_bound_ms(400'000'000, std::nullopt)));
}

TEST(PointScores, IssuePointsTakeTheFittedLineAndTheFill) {
  // 2e10 operations at 1e13 op/s after 5 us: 2.005 ms. 66 blocks of 256 threads on 132 SMs that
  // saturate at 256 threads fill half the device, so the effective operations double: 4.005 ms.
  IssuePoint p;
  p.k = 256;
  p.scalar_ops = 2e10;
  p.seconds = 2e-3;
  p.contexts = {LaunchContext{66, 256, 2e10, 0}};
  const IssueFit fit{1e13, 5e-6, 0.01, 5};
  EXPECT_NEAR(issue_rank_ms(p, fit, std::nullopt), 2.005, 1e-12);
  EXPECT_NEAR(issue_rank_ms(p, fit, FillModel{132, 256, FillForm::capped}), 4.005, 1e-12);
}

}  // namespace
}  // namespace diescope::calibrate
