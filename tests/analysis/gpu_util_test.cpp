// GPU-Util: booking NVML samples to time, weighting by the chip samples, coverage and source.
#include <gtest/gtest.h>

#include "builder.hpp"
#include "diescope/core/error.hpp"

namespace diescope::testing {
namespace {

TEST(GpuUtil, EachSampleCoversTheTimeSinceThePreviousCappedAtOneSecond) {
  Builder b({"sm"}, 3000);
  b.setup_sample();
  b.samples(100, 29, 100, {10});  // usable chip time [100, 3000) = 2900 ms
  b.util(500, 40);                // first: (500 - 1000, 500] -> overlaps chip time [100, 500) = 400 ms
  b.util(700, 60);                // (500, 700] = 200 ms
  b.util(2500, 80);               // (max(700, 2500 - 1000), 2500] = (1500, 2500] = 1000 ms, not 1800
  b.util(3000, 20);               // (2500, 3000] = 500 ms
  const analysis::Analysis a = b.analyze();
  // Covered: 400 + 200 + 1000 + 500 = 2100 of 2900 ms = 72.41%.
  // GPU-Util = (40 x 400 + 60 x 200 + 80 x 1000 + 20 x 500) / 2100 = 118000 / 2100 = 56.190476.
  EXPECT_NEAR(a.run.gpu_util_coverage_pct, 2100.0 / 2900.0 * 100.0, 1e-9);
  EXPECT_NEAR(a.run.gpu_util_pct, 118000.0 / 2100.0, 1e-9);
  EXPECT_EQ(a.run.gpu_util_from, analysis::GpuUtilFrom::samples);
  // Under 90% coverage: neither the gap nor the split.
  EXPECT_FALSE(a.run.headline.gap_tenths.has_value());
  EXPECT_FALSE(a.run.headline.idle_tenths.has_value());
  EXPECT_EQ(a.run.headline.gap_missing, analysis::GapMissing::gpu_util_coverage_low);
  EXPECT_EQ(a.run.headline.split_missing, analysis::SplitMissing::no_gap);
  // GPU-Util itself is still shown, and stranded capacity needs only DIE-Util: 1000 - 100 = 900.
  EXPECT_EQ(a.run.headline.gpu_util_tenths, 562);
  EXPECT_EQ(a.run.headline.stranded_tenths, 900);
}

TEST(GpuUtil, WeightedByOverlapWithChipSamplesOnly) {
  Builder b({"sm"});
  b.setup_sample();
  b.samples(100, 4, 100, {10});  // [100, 500)
  b.samples(600, 4, 100, {10});  // [600, 1000): no chip sample in [500, 600)
  b.util_every(100, 500, 100, 0);
  b.util(600, 100);  // books (500, 600]: exactly the hole in the chip samples
  b.util_every(700, 1000, 100, 0);
  const analysis::Analysis a = b.analyze();
  // The 100 reading covers no chip-sampled time, so GPU-Util over the samples is 0 with full
  // coverage; over the whole run it would have been 10 (100 x 100 / 1000, counting [0, 100) too).
  EXPECT_NEAR(a.run.gpu_util_pct, 0.0, 1e-12);
  EXPECT_NEAR(a.run.gpu_util_coverage_pct, 100.0, 1e-9);
}

TEST(GpuUtil, OverlapSplitsAReadingAcrossSamples) {
  Builder b({"sm"});
  b.setup_sample();
  b.samples(100, 9, 100, {10});
  b.util(300, 50);   // (-700, 300] -> 200 ms of chip time [100, 300)
  b.util(550, 80);   // (300, 550] -> 250 ms
  b.util(1000, 20);  // (550, 1000] -> 450 ms
  const analysis::Analysis a = b.analyze();
  // (50 x 200 + 80 x 250 + 20 x 450) / 900 = (10000 + 20000 + 9000) / 900 = 43.333...
  EXPECT_NEAR(a.run.gpu_util_pct, 39000.0 / 900.0, 1e-9);
  EXPECT_NEAR(a.run.gpu_util_coverage_pct, 100.0, 1e-9);
}

TEST(GpuUtil, SourceSaysPolledOrBoth) {
  {
    Builder b({"sm"});
    b.setup_sample();
    b.samples(100, 9, 100, {10});
    for (int t = 200; t <= 1000; t += 200) b.util(t, 5, recording::UtilSource::polled);
    EXPECT_EQ(b.analyze().run.gpu_util_from, analysis::GpuUtilFrom::polled);
  }
  {
    Builder b({"sm"});
    b.setup_sample();
    b.samples(100, 9, 100, {10});
    b.util(400, 5, recording::UtilSource::samples);
    b.util(1000, 5, recording::UtilSource::polled);
    EXPECT_EQ(b.analyze().run.gpu_util_from, analysis::GpuUtilFrom::samples_and_polled);
  }
}

TEST(GpuUtil, NoSamplesGivesNaNWithReason) {
  Builder b({"sm"});
  b.setup_sample();
  b.samples(100, 9, 100, {10});
  const analysis::Analysis a = b.analyze();
  EXPECT_TRUE(std::isnan(a.run.gpu_util_pct));
  EXPECT_EQ(a.run.gpu_util_missing, analysis::GpuUtilMissing::not_covered);
  EXPECT_EQ(a.run.gpu_util_from, analysis::GpuUtilFrom::none);
  EXPECT_FALSE(a.run.headline.gpu_util_tenths.has_value());
  EXPECT_EQ(a.run.headline.gap_missing, analysis::GapMissing::no_gpu_util);
}

TEST(GpuUtil, CoverageAtNinetyPercentIsEnoughForTheGap) {
  Builder b({"sm"});
  b.setup_sample();
  b.samples(100, 9, 100, {20});  // usable chip time [100, 1000) = 900 ms
  // One reading at 910 books (-90, 910]: chip time [100, 910) = 810 of 900 ms = 90%, at the gate.
  b.util(910, 30);
  analysis::Analysis a = b.analyze();
  EXPECT_NEAR(a.run.gpu_util_coverage_pct, 90.0, 1e-9);
  // G = 30.0, D = 20.0: gap 100 tenths, active 100, idle 1000 - 300 = 700, stranded 800.
  EXPECT_EQ(a.run.headline.gap_tenths, 100);
  EXPECT_EQ(a.run.headline.idle_tenths, 700);
  EXPECT_EQ(a.run.headline.active_tenths, 100);
  EXPECT_EQ(a.run.headline.stranded_tenths, 800);
  // At 909 the reading covers 809 ms: 89.89%, under the gate.
  b.rec.list<recording::UtilSample>().clear();
  b.util(909, 30);
  a = b.analyze();
  EXPECT_NEAR(a.run.gpu_util_coverage_pct, 809.0 / 9.0, 1e-9);
  EXPECT_FALSE(a.run.headline.gap_tenths.has_value());
}

// The counters held by another tool: no chip sample at all, only NVML's polled GPU-Util
// (docs/method.md#gpu-util-without-chip-samples).
Builder counters_held() {
  Builder b({"sm"}, 1000);
  b.rec.side_records.counters.clear();  // the counters never went on
  b.mark(250, recording::MarkKind::start).mark(750, recording::MarkKind::stop);
  b.util(300, 81, recording::UtilSource::polled);   // (-700, 300]: the run's [0, 300), 300 ms
  b.util(500, 92, recording::UtilSource::polled);   // (300, 500], 200 ms
  b.util(1000, 74, recording::UtilSource::polled);  // (500, 1000], 500 ms
  return b;
}

TEST(GpuUtil, WithoutChipSamplesIsOverTheWholeSpan) {
  const analysis::Analysis a = counters_held().analyze();
  // Run: (81 x 300 + 92 x 200 + 74 x 500) / 1000 = 79700 / 1000 = 79.7, NVML covering all of it.
  EXPECT_NEAR(a.run.gpu_util_pct, 79.7, 1e-9);
  EXPECT_EQ(a.run.gpu_util_missing, analysis::GpuUtilMissing::none);
  EXPECT_EQ(a.run.gpu_util_from, analysis::GpuUtilFrom::polled);
  EXPECT_TRUE(std::isnan(a.run.gpu_util_coverage_pct));  // no chip time to cover a share of
  EXPECT_NEAR(a.run.gpu_util_whole_span_pct, 79.7, 1e-9);
  EXPECT_EQ(a.run.headline.gpu_util_tenths, 797);
  // DIE-Util and everything that needs it stay missing, for DIE-Util's reason.
  EXPECT_FALSE(a.run.headline.die_util_tenths.has_value());
  EXPECT_EQ(a.run.die_util_missing, analysis::DieUtilMissing::no_usable_samples);
  EXPECT_EQ(a.run.headline.gap_missing, analysis::GapMissing::no_die_util);
  EXPECT_FALSE(a.run.headline.stranded_tenths.has_value());
  // Window [250, 750): (81 x 50 + 92 x 200 + 74 x 250) / 500 = 40950 / 500 = 81.9.
  ASSERT_TRUE(a.window.found);
  EXPECT_NEAR(a.window.results.gpu_util_pct, 81.9, 1e-9);
  EXPECT_EQ(a.window.results.headline.gpu_util_tenths, 819);
  EXPECT_NEAR(a.window.results.gpu_util_whole_span_pct, 81.9, 1e-9);
}

TEST(GpuUtil, WithoutChipSamplesNeedsNvmlOverMostOfTheSpan) {
  Builder b({"sm"}, 1000);
  b.rec.side_records.counters.clear();
  b.util(500, 92, recording::UtilSource::polled);  // (-500, 500]: half of the run
  const analysis::Analysis a = b.analyze();
  EXPECT_NEAR(a.run.gpu_util_whole_span_coverage_pct, 50.0, 1e-9);
  EXPECT_TRUE(std::isnan(a.run.gpu_util_pct));
  EXPECT_EQ(a.run.gpu_util_missing, analysis::GpuUtilMissing::no_usable_samples);
  EXPECT_FALSE(a.run.headline.gpu_util_tenths.has_value());
  EXPECT_EQ(a.run.gpu_util_from, analysis::GpuUtilFrom::none);
}

TEST(GpuUtil, OutOfOrderOrNaNSamplesAreInputErrors) {
  {
    Builder b({"sm"});
    b.setup_sample();
    b.samples(100, 9, 100, {10});
    b.util(500, 10).util(400, 10);
    EXPECT_THROW(b.analyze(), core::InputError);
  }
  {
    Builder b({"sm"});
    b.setup_sample();
    b.samples(100, 9, 100, {10});
    b.util(500, std::numeric_limits<double>::quiet_NaN());
    EXPECT_THROW(b.analyze(), core::InputError);
  }
}

}  // namespace
}  // namespace diescope::testing
