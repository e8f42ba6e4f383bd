// The sampler child's buffers are sized from the interval and the drain, not for the worst case
// (docs/footprint.md#the-decode-period, docs/footprint.md#the-decode-image,
// docs/footprint.md#the-hardware-buffer), and its decode images rotate between two threads
// (docs/footprint.md#the-decode-pipeline). Every expected value is worked out by hand beside it.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

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

TEST(SamplerSizing, DecodeImagesAreWhatThirtyTwoMiBHoldWithinTwoAndFour) {
  // The Hopper image on the H200: 129 samples * 50,393 bytes = 6,500,697 bytes; 33,554,432 /
  // 6,500,697 = 5.16, so 5, held to the ceiling of 4.
  EXPECT_EQ(child::decode_images(129 * 50'393), 4u);
  // 10 MiB images: 32 / 10 = 3.2, so 3.
  EXPECT_EQ(child::decode_images(10 * kMiB), 3u);
  // 20 MiB images: 32 / 20 = 1.6, so 1, raised to the floor of 2 (one decoded, one evaluated).
  EXPECT_EQ(child::decode_images(20 * kMiB), 2u);
  // 64 MiB images: none fit the 32 MiB; still 2.
  EXPECT_EQ(child::decode_images(64 * kMiB), 2u);
  // 8 MiB images: exactly 4.
  EXPECT_EQ(child::decode_images(8 * kMiB), 4u);
}

TEST(ImageRing, GivesBackFirstWhatWasGivenBackFirstAndMakesNewOnesUpToTheLimit) {
  child::ImageRing ring(3);  // images 0 and 1 made at start, a third allowed
  EXPECT_EQ(ring.made(), 2u);
  auto a = ring.take_free();
  auto b = ring.take_free();
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->image, 0u);
  EXPECT_EQ(b->image, 1u);
  EXPECT_FALSE(a->fresh || b->fresh);
  EXPECT_EQ(a->waited_ns, 0);
  // Both are being decoded or evaluated: the third is made rather than waited for.
  auto c = ring.take_free();
  ASSERT_TRUE(c);
  EXPECT_EQ(c->image, 2u);
  EXPECT_TRUE(c->fresh);
  EXPECT_EQ(c->waited_ns, 0);
  EXPECT_EQ(ring.made(), 3u);
  // Decoded in the order 1, 0, 2: evaluated in that order.
  ring.put_decoded(1);
  ring.put_decoded(0);
  ring.put_decoded(2);
  EXPECT_EQ(ring.take_decoded(), std::optional<std::size_t>(1));
  EXPECT_EQ(ring.take_decoded(), std::optional<std::size_t>(0));
  // Given back 0 then 1: taken again 0 then 1.
  ring.put_free(0);
  ring.put_free(1);
  EXPECT_EQ(ring.take_free()->image, 0u);
  EXPECT_EQ(ring.take_free()->image, 1u);
  // Closed: the decoded image left is still handed out, then nothing.
  ring.close();
  EXPECT_EQ(ring.take_decoded(), std::optional<std::size_t>(2));
  EXPECT_EQ(ring.take_decoded(), std::nullopt);
  EXPECT_EQ(ring.take_free(), std::nullopt);
}

TEST(ImageRing, TheDecodeWaitsOnlyWhenEveryImageIsDecodedAndSaysHowLong) {
  child::ImageRing ring(2);
  ring.put_decoded(ring.take_free()->image);
  ring.put_decoded(ring.take_free()->image);
  // Both decoded, none evaluated, the limit reached: the next take waits until the evaluating side
  // gives one back, 50 ms later.
  std::thread evaluator([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const auto image = ring.take_decoded();
    ring.put_free(*image);
  });
  const auto taken = ring.take_free();
  evaluator.join();
  ASSERT_TRUE(taken);
  EXPECT_EQ(taken->image, 0u);  // the oldest decoded, evaluated and given back
  EXPECT_FALSE(taken->fresh);
  EXPECT_GE(taken->waited_ns, 40'000'000);  // 50 ms less the scheduler's slack
}

TEST(ImageRing, EveryPassArrivesOnceAndInOrderThroughTwoImages) {
  // 500 passes through 2 images, the evaluating side slower than the decoding one: each image
  // carries its pass's number; the evaluating side must see 0, 1, ..., 499.
  child::ImageRing ring(2);
  std::vector<int> carried(2, -1);
  std::vector<int> seen;
  std::thread evaluator([&] {
    while (const auto image = ring.take_decoded()) {
      seen.push_back(carried[*image]);
      std::this_thread::sleep_for(std::chrono::microseconds(20));
      ring.put_free(*image);
    }
  });
  long waited = 0;
  for (int pass = 0; pass < 500; ++pass) {
    const auto taken = ring.take_free();
    ASSERT_TRUE(taken);
    if (taken->waited_ns > 0) ++waited;
    carried[taken->image] = pass;
    ring.put_decoded(taken->image);
  }
  ring.close();
  evaluator.join();
  ASSERT_EQ(seen.size(), 500u);
  for (int pass = 0; pass < 500; ++pass) EXPECT_EQ(seen[static_cast<std::size_t>(pass)], pass);
  EXPECT_EQ(ring.made(), 2u);
  EXPECT_GT(waited, 0);  // the decoding side outran the slower evaluation and waited
}

}  // namespace
}  // namespace diescope::collect
