// The headline: rounding to tenths, the noise floor, negative gaps, the coverage gate.
#include <gtest/gtest.h>

#include "builder.hpp"

namespace diescope::testing {
namespace {

analysis::HeadlineInputs inputs(double gpu, double die, double resolution = 1.0, double coverage = 100.0) {
  analysis::HeadlineInputs in;
  in.gpu_util_pct = gpu;
  in.die_util_pct = die;
  in.gpu_util_resolution_pct = resolution;
  in.gpu_util_coverage_pct = coverage;
  return in;
}

void expect_parts_add_up(const analysis::Headline& h) {
  ASSERT_TRUE(h.stranded_tenths && h.idle_tenths && h.active_tenths);
  EXPECT_EQ(*h.stranded_tenths, *h.idle_tenths + *h.active_tenths);
  EXPECT_EQ(*h.stranded_tenths, 1000 - *h.die_util_tenths);
}

TEST(Headline, GapOfPointThreeAtOnePercentResolutionReadsZero) {
  // G 50.3 -> 503, D 50.0 -> 500: gap 3 tenths; floor = 1% / 2 = 0.5 points = 5 tenths; 3 <= 5.
  const analysis::Headline h = make_headline(inputs(50.3, 50.0));
  EXPECT_EQ(h.gap_tenths, 0);
  EXPECT_TRUE(h.gap_within_noise_floor);
  EXPECT_EQ(h.active_tenths, 0);
  // Idle takes all of stranded: 1000 - 500 = 500 (not 1000 - 503 = 497).
  EXPECT_EQ(h.stranded_tenths, 500);
  EXPECT_EQ(h.idle_tenths, 500);
  expect_parts_add_up(h);
}

TEST(Headline, GapAtTheFloorIsZeroAndJustAboveIsKept) {
  // 50.5 - 50.0 = 5 tenths = the floor: counts as 0.
  EXPECT_EQ(make_headline(inputs(50.5, 50.0)).gap_tenths, 0);
  // 50.6 - 50.0 = 6 tenths: kept; active 6, idle 1000 - 506 = 494, stranded 500 = 494 + 6.
  const analysis::Headline h = make_headline(inputs(50.6, 50.0));
  EXPECT_EQ(h.gap_tenths, 6);
  EXPECT_FALSE(h.gap_within_noise_floor);
  EXPECT_EQ(h.active_tenths, 6);
  EXPECT_EQ(h.idle_tenths, 494);
  expect_parts_add_up(h);
}

TEST(Headline, FinerResolutionHasALowerFloor) {
  // Resolution 0.1%: floor 0.05 points = 0.5 tenths, so a 3-tenth gap is real.
  const analysis::Headline h = make_headline(inputs(50.3, 50.0, 0.1));
  EXPECT_EQ(h.gap_tenths, 3);
  EXPECT_FALSE(h.gap_within_noise_floor);
}

TEST(Headline, ShownPartsAddUpAfterRounding) {
  // G 99.26 -> 993 tenths, D 84.94 -> 849 tenths.
  // gap 993 - 849 = 144, stranded 1000 - 849 = 151, idle 1000 - 993 = 7, active 144; 7 + 144 = 151.
  // Rounding each full-precision figure instead: stranded 15.06 -> 15.1, idle 0.74 -> 0.7,
  // active 14.32 -> 14.3, and 0.7 + 14.3 = 15.0 would not add up to 15.1.
  const analysis::Headline h = make_headline(inputs(99.26, 84.94));
  EXPECT_EQ(h.gpu_util_tenths, 993);
  EXPECT_EQ(h.die_util_tenths, 849);
  EXPECT_EQ(h.gap_tenths, 144);
  EXPECT_EQ(h.stranded_tenths, 151);
  EXPECT_EQ(h.idle_tenths, 7);
  EXPECT_EQ(h.active_tenths, 144);
  expect_parts_add_up(h);
}

TEST(Headline, PartsAddUpOverAGridOfInputs) {
  // Every pair on a 0.37-point grid: the identity stranded = idle + active must hold whenever the
  // split is given, and gap = active.
  int checked = 0;
  for (double g = 0; g <= 100; g += 0.37) {
    for (double d = 0; d <= 100; d += 0.37) {
      const analysis::Headline h = make_headline(inputs(g, d));
      if (!h.idle_tenths) continue;
      expect_parts_add_up(h);
      EXPECT_EQ(h.gap_tenths, h.active_tenths);
      ++checked;
    }
  }
  EXPECT_GT(checked, 20000);
}

TEST(Headline, NegativeGapKeptWithSplitNotApplicable) {
  // A video encode: G 8.4 -> 84, D 93.8 -> 938: gap -854 tenths, far below -5.
  analysis::HeadlineInputs in = inputs(8.4, 93.8);
  in.uncounted_limiting_unit = "NVENC";
  const analysis::Headline h = make_headline(in);
  EXPECT_EQ(h.gap_tenths, -854);
  EXPECT_FALSE(h.gap_within_noise_floor);
  EXPECT_EQ(h.stranded_tenths, 62);
  EXPECT_FALSE(h.idle_tenths.has_value());
  EXPECT_FALSE(h.active_tenths.has_value());
  EXPECT_EQ(h.split_missing, analysis::SplitMissing::negative_gap);
  EXPECT_EQ(h.uncounted_limiting_unit, "NVENC");
}

TEST(Headline, SmallNegativeGapWithinFloorReadsZero) {
  // G 49.6 -> 496, D 50.0 -> 500: gap -4, |-4| <= 5: counts as 0 with idle = stranded = 500.
  const analysis::Headline h = make_headline(inputs(49.6, 50.0));
  EXPECT_EQ(h.gap_tenths, 0);
  EXPECT_TRUE(h.gap_within_noise_floor);
  EXPECT_EQ(h.idle_tenths, 500);
  EXPECT_EQ(h.active_tenths, 0);
}

TEST(Headline, LowCoverageGivesNoGap) {
  const analysis::Headline h = make_headline(inputs(60, 40, 1.0, 89.9));
  EXPECT_EQ(h.gpu_util_tenths, 600);
  EXPECT_EQ(h.die_util_tenths, 400);
  EXPECT_FALSE(h.gap_tenths.has_value());
  EXPECT_FALSE(h.idle_tenths.has_value());
  EXPECT_EQ(h.gap_missing, analysis::GapMissing::gpu_util_coverage_low);
  EXPECT_EQ(h.split_missing, analysis::SplitMissing::no_gap);
}

TEST(Headline, EndToEndNegativeGapFromAVideoEngine) {
  Builder b({"sm"});
  b.engines({"nvenc"});
  b.rec.meta_data.engines[0].label = "NVENC";
  b.setup_sample();
  b.samples(100, 9, 100, {5});
  for (int i = 0; i < 9; ++i) b.engine(200 + 100 * i, {90});
  b.util_every(200, 1000, 100, 8);
  const analysis::Analysis a = b.analyze();
  // DIE-Util 90 (nvenc every sample), GPU-Util 8: gap 80 - 900 = -820 tenths, kept.
  EXPECT_EQ(a.run.limiting_unit, "nvenc");
  EXPECT_EQ(a.run.headline.gap_tenths, -820);
  EXPECT_FALSE(a.run.headline.idle_tenths.has_value());
  EXPECT_EQ(a.run.headline.split_missing, analysis::SplitMissing::negative_gap);
  EXPECT_EQ(a.run.headline.uncounted_limiting_unit, "NVENC");
}

TEST(Headline, EndToEndGapWithinFloor) {
  Builder b({"sm"});
  b.setup_sample();
  b.samples(100, 9, 100, {50});
  b.util_every(200, 1000, 100, 50.3);
  const analysis::Analysis a = b.analyze();
  // G 50.3, D 50.0 -> gap 3 tenths within the 5-tenth floor of 1% resolution.
  EXPECT_EQ(a.run.headline.gap_tenths, 0);
  EXPECT_TRUE(a.run.headline.gap_within_noise_floor);
  EXPECT_EQ(a.run.headline.idle_tenths, 500);
}

}  // namespace
}  // namespace diescope::testing
