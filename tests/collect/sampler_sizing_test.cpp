// The sampler child's buffers are sized from the interval and the drain, not for the worst case
// (docs/footprint.md#the-hardware-buffer, docs/footprint.md#the-decode-image). Every expected value
// is worked out by hand in the comment beside it.
#include <gtest/gtest.h>

#include "../../src/collect/pmsampling/child_io.hpp"

namespace diescope::collect {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

TEST(SamplerSizing, HardwareBufferHoldsTwoDrainsWithHeadroom) {
  // 10 ms, 1 s drains, 40,000 bytes a sample: 2*100 + 64 = 264 samples; 264 * 40,000 * 1.5 =
  // 15,840,000 bytes = 15.1 MiB, rounded up to 16 MiB.
  EXPECT_EQ(child::hardware_buffer_bytes(10, 1000, 40'000), 16 * kMiB);
  // 0.1 ms, 100 ms drains, 4,096 bytes: 2*1000 + 64 = 2,064 samples; * 4,096 * 1.5 = 12,681,216
  // bytes = 12.09 MiB, rounded up to 13 MiB.
  EXPECT_EQ(child::hardware_buffer_bytes(0.1, 100, 4096), 13 * kMiB);
}

TEST(SamplerSizing, HardwareBufferStaysWithinItsBounds) {
  // 1 s samples, 1 s drains, 1,000 bytes: (2 + 64) * 1,000 * 1.5 = 99,000 bytes, under a MiB: the
  // floor, 4 MiB.
  EXPECT_EQ(child::hardware_buffer_bytes(1000, 1000, 1000), 4 * kMiB);
  // 0.1 ms, 1 s drains, 40,000 bytes: (20,000 + 64) * 40,000 * 1.5 = 1,203,840,000 bytes: the
  // ceiling, 512 MiB.
  EXPECT_EQ(child::hardware_buffer_bytes(0.1, 1000, 40'000), 512 * kMiB);
}

TEST(SamplerSizing, DecodeImageHoldsOneDrainWithinItsCap) {
  // 10 ms, 1 s drains: ceil(100 * 1.25) + 4 = 129 samples; 16 MiB / 40,000 = 419 fit.
  EXPECT_EQ(child::decode_image_samples(10, 1000, 40'000), 129u);
  // 0.1 ms, 1 s drains: 12,504 wanted, but only 16,777,216 / 40,000 = 419 fit: several passes a drain.
  EXPECT_EQ(child::decode_image_samples(0.1, 1000, 40'000), 419u);
  // 1 s samples, 10 ms drains: ceil(0.0125) + 4 = 5, raised to the floor of 8.
  EXPECT_EQ(child::decode_image_samples(1000, 10, 40'000), 8u);
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
