#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <vector>

#include "diescope/harness/stopping.hpp"

namespace diescope::harness {
namespace {

struct Stop {
  std::size_t at;  // 1-based sample count when the rule said stop
  StopReason reason;
};

// Feeds `samples` (seconds) with the wall clock advancing `wall_step` per sample.
std::optional<Stop> feed(StoppingCriteria c, const std::vector<double>& samples, double wall_step) {
  StoppingRule rule(c);
  for (std::size_t i = 0; i < samples.size(); ++i) {
    if (auto r = rule.add_sample(samples[i], wall_step * static_cast<double>(i + 1))) return Stop{i + 1, *r};
  }
  return std::nullopt;
}

TEST(StoppingRule, SteadySamplesStopWhenMinimumTimeIsReached) {
  // Noise is 0 from the second sample; min_samples 3 holds from the third; the samples add up to
  // min_time 1.0 at the fourth (4 x 0.25).
  const StoppingCriteria c{.min_samples = 3, .min_time_s = 1.0, .max_noise = 0.05, .timeout_s = 100};
  const auto stop = feed(c, std::vector<double>(10, 0.25), 0.01);
  ASSERT_TRUE(stop);
  EXPECT_EQ(stop->at, 4u);
  EXPECT_EQ(stop->reason, StopReason::converged);
}

TEST(StoppingRule, MinimumSampleCountHoldsEvenWhenTimeIsEnough) {
  const StoppingCriteria c{.min_samples = 7, .min_time_s = 0.1, .max_noise = 0.05, .timeout_s = 100};
  const auto stop = feed(c, std::vector<double>(10, 0.5), 0.01);
  ASSERT_TRUE(stop);
  EXPECT_EQ(stop->at, 7u);
}

TEST(StoppingRule, NoisySequenceStopsWhenNoiseFallsToTarget) {
  // 1.0, 1.2 alternating, target 10 %, min_samples 4, no minimum time:
  //   n=4: mean 1.1, squares 4 x 0.01 = 0.04, /3 -> sd 0.11547, noise 0.10497 > 0.1
  //   n=5: mean 1.08, squares 3 x 0.0064 + 2 x 0.0144 = 0.048, /4 -> sd 0.10954, noise 0.10143 > 0.1
  //   n=6: mean 1.1, squares 6 x 0.01 = 0.06, /5 -> sd 0.10954, noise 0.09959 <= 0.1  -> stop
  const StoppingCriteria c{.min_samples = 4, .min_time_s = 0, .max_noise = 0.1, .timeout_s = 100};
  const auto stop = feed(c, {1.0, 1.2, 1.0, 1.2, 1.0, 1.2, 1.0, 1.2}, 0.01);
  ASSERT_TRUE(stop);
  EXPECT_EQ(stop->at, 6u);
  EXPECT_EQ(stop->reason, StopReason::converged);
}

TEST(StoppingRule, TimeoutStopsANoisySequence) {
  // 1 and 2 alternating never get below 30 % noise; one second of wall time per sample and a 5 s
  // timeout stop it at the fifth sample.
  const StoppingCriteria c{.min_samples = 2, .min_time_s = 0, .max_noise = 0.01, .timeout_s = 5};
  const auto stop = feed(c, {1, 2, 1, 2, 1, 2, 1, 2}, 1.0);
  ASSERT_TRUE(stop);
  EXPECT_EQ(stop->at, 5u);
  EXPECT_EQ(stop->reason, StopReason::timeout);
}

TEST(StoppingRule, SampleCapStopsBeforeTimeout) {
  const StoppingCriteria c{
      .min_samples = 2, .min_time_s = 0, .max_noise = 0.01, .timeout_s = 100, .max_samples = 3};
  const auto stop = feed(c, {1, 2, 1, 2}, 0.01);
  ASSERT_TRUE(stop);
  EXPECT_EQ(stop->at, 3u);
  EXPECT_EQ(stop->reason, StopReason::max_samples);
}

TEST(StoppingRule, OneSampleNeverConvergesAndTimeoutAppliesWithoutSamples) {
  const StoppingCriteria c{.min_samples = 1, .min_time_s = 0, .max_noise = 1.0, .timeout_s = 10};
  StoppingRule rule(c);
  EXPECT_FALSE(rule.add_sample(1.0, 0.1));  // noise is unknown from one sample
  EXPECT_TRUE(std::isnan(rule.relative_noise()));
  EXPECT_FALSE(rule.check_timeout(9.9));
  EXPECT_EQ(rule.check_timeout(10.0), StopReason::timeout);
  EXPECT_EQ(rule.add_sample(1.0, 0.2), StopReason::converged);  // two equal samples: noise 0
  EXPECT_DOUBLE_EQ(rule.accumulated_seconds(), 2.0);
}

}  // namespace
}  // namespace diescope::harness
