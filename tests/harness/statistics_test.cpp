#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "diescope/harness/statistics.hpp"

namespace diescope::harness {
namespace {

TEST(Statistics, SummaryOfFiveValuesWithAnOutlier) {
  const std::vector<double> values = {4, 100, 1, 3, 2};  // unsorted on purpose
  const Summary s = summarize(values);
  EXPECT_EQ(s.count, 5u);
  EXPECT_DOUBLE_EQ(s.mean, 22.0);   // (1 + 2 + 3 + 4 + 100) / 5 = 110 / 5
  EXPECT_DOUBLE_EQ(s.median, 3.0);  // sorted 1 2 3 4 100: rank 0.5 * 4 = 2 -> 3
  EXPECT_DOUBLE_EQ(s.p95, 80.8);    // rank 0.95 * 4 = 3.8 -> 4 + 0.8 * (100 - 4)
  EXPECT_DOUBLE_EQ(s.min, 1.0);
  EXPECT_DOUBLE_EQ(s.max, 100.0);
  // squared deviations from 22: 441 + 400 + 361 + 324 + 6084 = 7610; / (5 - 1) = 1902.5
  EXPECT_DOUBLE_EQ(s.stddev, std::sqrt(1902.5));
  EXPECT_DOUBLE_EQ(s.relative_noise(), std::sqrt(1902.5) / 22.0);
}

TEST(Statistics, MedianOfAnEvenCountInterpolates) {
  const std::vector<double> values = {10, 20, 30, 40};
  const Summary s = summarize(values);
  EXPECT_DOUBLE_EQ(s.median, 25.0);  // rank 0.5 * 3 = 1.5 -> 20 + 0.5 * (30 - 20)
  EXPECT_DOUBLE_EQ(s.p95, 38.5);     // rank 0.95 * 3 = 2.85 -> 30 + 0.85 * (40 - 30)
}

TEST(Statistics, NaNValuesAreLeftOutAndCounted) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> values = {nan, 2, nan, 4};
  const Summary s = summarize(values);
  EXPECT_EQ(s.count, 2u);
  EXPECT_DOUBLE_EQ(s.mean, 3.0);               // (2 + 4) / 2
  EXPECT_DOUBLE_EQ(s.stddev, std::sqrt(2.0));  // (1 + 1) / (2 - 1)
}

TEST(Statistics, EmptyAndSingleValue) {
  const Summary empty = summarize(std::vector<double>{});
  EXPECT_EQ(empty.count, 0u);
  EXPECT_TRUE(std::isnan(empty.mean));
  EXPECT_TRUE(std::isnan(empty.p95));
  const Summary one = summarize(std::vector<double>{7});
  EXPECT_EQ(one.count, 1u);
  EXPECT_DOUBLE_EQ(one.p95, 7.0);
  EXPECT_TRUE(std::isnan(one.stddev));  // unknown from one value, not 0
  EXPECT_TRUE(std::isnan(one.relative_noise()));
}

}  // namespace
}  // namespace diescope::harness
