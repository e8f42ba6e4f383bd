// The statistics across rounds: mean, sample sd, range and the 95% Student-t interval, each value
// worked out by hand in the comments.
#include "diescope/rounds/stats.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace diescope::rounds {
namespace {

TEST(TQuantile, TableValuesForSmallDegreesOfFreedom) {
  // Published two-sided 95% critical values of Student's t.
  EXPECT_NEAR(t_quantile_975(1), 12.7062, 1e-4);  // = tan(0.475 * pi)
  EXPECT_NEAR(std::tan(0.475 * M_PI), t_quantile_975(1), 1e-6);
  EXPECT_NEAR(t_quantile_975(2), 4.3027, 1e-4);
  // df 2 has a closed form: t_p = (2p - 1) / sqrt(2p(1 - p)); p = 0.975 gives 0.95 / sqrt(0.04875).
  EXPECT_NEAR(t_quantile_975(2), 0.95 / std::sqrt(0.04875), 1e-6);
  EXPECT_NEAR(t_quantile_975(3), 3.1824, 1e-4);
  EXPECT_NEAR(t_quantile_975(4), 2.7764, 1e-4);
  EXPECT_NEAR(t_quantile_975(9), 2.2622, 1e-4);
  EXPECT_NEAR(t_quantile_975(19), 2.0930, 1e-4);
  EXPECT_NEAR(t_quantile_975(29), 2.0452, 1e-4);
  EXPECT_NEAR(t_quantile_975(30), 2.0423, 1e-4);
}

TEST(TQuantile, BeyondTheTableItFollowsTheExpansionDownToTheNormalLimit) {
  // Published values: t(0.975; 31) = 2.0395, 40: 2.0211, 60: 2.0003, 120: 1.9799.
  EXPECT_NEAR(t_quantile_975(31), 2.0395, 1e-4);
  EXPECT_NEAR(t_quantile_975(40), 2.0211, 1e-4);
  EXPECT_NEAR(t_quantile_975(60), 2.0003, 1e-4);
  EXPECT_NEAR(t_quantile_975(120), 1.9799, 1e-4);
  // Large df: the normal 0.975 quantile, 1.959964.
  EXPECT_NEAR(t_quantile_975(1'000'000), 1.959964, 1e-5);
  EXPECT_GT(t_quantile_975(1'000'000), kNormalQuantile975);
  // Monotone across the join between the table and the expansion, and everywhere after it.
  for (int df = 1; df < 500; ++df) EXPECT_GT(t_quantile_975(df), t_quantile_975(df + 1)) << "df " << df;
  EXPECT_TRUE(std::isnan(t_quantile_975(0)));
  EXPECT_TRUE(std::isnan(t_quantile_975(-3)));
}

TEST(Summarise, FiveValuesByHand) {
  const std::vector<double> v{10, 12, 14, 16, 18};
  const Summary s = summarise(v);
  // mean = 70 / 5 = 14; squared deviations 16 + 4 + 0 + 4 + 16 = 40; variance 40 / 4 = 10.
  EXPECT_EQ(s.n, 5);
  EXPECT_DOUBLE_EQ(s.mean, 14.0);
  EXPECT_DOUBLE_EQ(s.sd, std::sqrt(10.0));
  EXPECT_DOUBLE_EQ(s.min, 10.0);
  EXPECT_DOUBLE_EQ(s.max, 18.0);
  // Standard error sqrt(10) / sqrt(5) = sqrt(2); t(4) = 2.776445; half width 2.776445 * 1.414214 = 3.926486.
  EXPECT_DOUBLE_EQ(s.t, 2.776445);
  EXPECT_NEAR(s.half_width, 3.926486, 1e-6);
  EXPECT_NEAR(s.low, 10.073514, 1e-6);
  EXPECT_NEAR(s.high, 17.926486, 1e-6);
  EXPECT_TRUE(s.reason.empty());
}

TEST(Summarise, ThreeRoundsOfGpuUtil) {
  const std::vector<double> v{97.2, 98.1, 97.6};
  const Summary s = summarise(v);
  // mean = 292.9 / 3 = 97.6333; deviations -0.4333, 0.4667, -0.0333; squares 0.187778 + 0.217778 +
  // 0.001111 = 0.406667; variance 0.203333; sd 0.450925. t(2) = 4.302653; half 4.302653 * 0.450925 /
  // sqrt(3) = 1.120160.
  EXPECT_NEAR(s.mean, 97.633333, 1e-6);
  EXPECT_NEAR(s.sd, 0.450925, 1e-6);
  EXPECT_NEAR(s.half_width, 1.120160, 1e-6);
  EXPECT_DOUBLE_EQ(s.min, 97.2);
  EXPECT_DOUBLE_EQ(s.max, 98.1);
}

TEST(Summarise, LargeEqualOffsetsKeepTheirSpread) {
  // 1e9 + {1, 2, 3}: mean 1e9 + 2, sd 1 (squared deviations 1 + 0 + 1 = 2, over 2).
  const std::vector<double> v{1e9 + 1, 1e9 + 2, 1e9 + 3};
  const Summary s = summarise(v);
  EXPECT_DOUBLE_EQ(s.mean, 1e9 + 2);
  EXPECT_DOUBLE_EQ(s.sd, 1.0);
}

TEST(Summarise, EqualValuesHaveNoSpread) {
  const std::vector<double> v{97, 97, 97, 97};
  const Summary s = summarise(v);
  EXPECT_DOUBLE_EQ(s.sd, 0.0);
  EXPECT_DOUBLE_EQ(s.low, 97.0);
  EXPECT_DOUBLE_EQ(s.high, 97.0);
}

TEST(Summarise, OneValueHasNoSpreadAndSaysWhy) {
  const std::vector<double> v{42};
  const Summary s = summarise(v);
  EXPECT_EQ(s.n, 1);
  EXPECT_DOUBLE_EQ(s.mean, 42.0);
  EXPECT_DOUBLE_EQ(s.min, 42.0);
  EXPECT_TRUE(std::isnan(s.sd));
  EXPECT_TRUE(std::isnan(s.low));
  EXPECT_TRUE(std::isnan(s.high));
  EXPECT_NE(s.reason.find("no spread"), std::string::npos);
}

TEST(Summarise, NoValuesIsAllNotAvailable) {
  const Summary s = summarise({});
  EXPECT_EQ(s.n, 0);
  EXPECT_TRUE(std::isnan(s.mean));
  EXPECT_TRUE(std::isnan(s.min));
  EXPECT_FALSE(s.reason.empty());
}

}  // namespace
}  // namespace diescope::rounds
