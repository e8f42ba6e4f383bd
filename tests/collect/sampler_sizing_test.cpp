// The sampler child's buffers are sized from the interval and the drain, not for the worst case
// (docs/footprint.md#the-decode-period, docs/footprint.md#the-decode-image,
// docs/footprint.md#the-hardware-buffer). Every expected value is worked out by hand beside it.
#include <gtest/gtest.h>

#include "../../src/collect/pmsampling/child_io.hpp"

namespace diescope::collect {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

TEST(SamplerSizing, DecodePeriodIsTheDrainOrAHundredIntervals) {
  EXPECT_DOUBLE_EQ(child::decode_period_ms(10, 1000), 1000);   // 100 * 10 ms = 1000 ms: the drain
  EXPECT_DOUBLE_EQ(child::decode_period_ms(1, 1000), 100);     // 100 * 1 ms = 100 ms < 1000
  EXPECT_NEAR(child::decode_period_ms(0.1, 100), 10, 1e-9);    // 100 * 0.1 ms = 10 ms < 100
  EXPECT_DOUBLE_EQ(child::decode_period_ms(0.1, 5), 5);        // a drain shorter than 100 intervals
  EXPECT_DOUBLE_EQ(child::decode_period_ms(100, 1000), 1000);  // 100 * 100 ms = 10 s: the drain
}

TEST(SamplerSizing, SamplesHeldAreTwoDecodePeriodsAndSpare) {
  EXPECT_EQ(child::samples_held(10, 1000), 264u);   // 2 * (1000 / 10) + 64
  EXPECT_EQ(child::samples_held(0.1, 1000), 264u);  // decoded every 10 ms: 2 * (10 / 0.1) + 64
  EXPECT_EQ(child::samples_held(1000, 1000), 66u);  // 2 * 1 + 64
  EXPECT_EQ(child::samples_held(0.1, 5), 164u);     // 2 * (5 / 0.1) + 64
}

TEST(SamplerSizing, DecodeImageHoldsOneDecodePeriodAndAQuarter) {
  EXPECT_EQ(child::decode_image_samples(10, 1000), 129u);   // ceil(100 * 1.25) + 4
  EXPECT_EQ(child::decode_image_samples(0.1, 1000), 129u);  // decoded every 10 ms: 100 samples, the same
  EXPECT_EQ(child::decode_image_samples(0.1, 5), 67u);      // ceil(50 * 1.25) + 4 = 63 + 4
  EXPECT_EQ(child::decode_image_samples(1000, 1000), 8u);   // ceil(1.25) + 4 = 6, raised to the floor of 8
}

TEST(SamplerSizing, HardwareBufferHoldsTheSamplesHeldWithHeadroom) {
  // 10 ms, 1 s drains, 50,393 bytes a sample (the Hopper table on the H200): 264 * 50,393 * 1.5 =
  // 19,955,628 bytes = 19.03 MiB, rounded up to 20 MiB.
  EXPECT_EQ(child::hardware_buffer_bytes(10, 1000, 50'393), 20 * kMiB);
  // 0.1 ms decodes every 10 ms and holds the same 264 samples: the same 20 MiB.
  EXPECT_EQ(child::hardware_buffer_bytes(0.1, 1000, 50'393), 20 * kMiB);
  // 0.1 ms, 5 ms drains, 4,096 bytes: 164 * 4,096 * 1.5 = 1,007,616 bytes: under the floor, 4 MiB.
  EXPECT_EQ(child::hardware_buffer_bytes(0.1, 5, 4096), 4 * kMiB);
}

TEST(SamplerSizing, HardwareBufferStaysWithinItsCeiling) {
  // 10 ms, 1 s drains, 2,000,000 bytes a sample: 264 * 2,000,000 * 1.5 = 792,000,000 bytes, over
  // 512 MiB (536,870,912): the ceiling.
  EXPECT_EQ(child::hardware_buffer_bytes(10, 1000, 2'000'000), 512 * kMiB);
}

TEST(SamplerSizing, ZeroAsksForTheRule) {
  // --hw-buffer-mb 0 (the default) leaves the size to the rule; a size in MiB is kept as given.
  const char* plain[] = {"sample", "--metrics", "a"};
  std::string why;
  auto args = child::parse_args(3, const_cast<char**>(plain), why);
  ASSERT_TRUE(args) << why;
  EXPECT_EQ(args->hw_buffer_mb, 0u);
  const char* given[] = {"sample", "--metrics", "a", "--hw-buffer-mb", "64"};
  args = child::parse_args(5, const_cast<char**>(given), why);
  ASSERT_TRUE(args) << why;
  EXPECT_EQ(args->hw_buffer_mb, 64u);
}

}  // namespace
}  // namespace diescope::collect
