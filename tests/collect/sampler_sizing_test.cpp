// The sampler child's buffers are sized from the interval and the drain, not for the worst case
// (docs/footprint.md#the-decode-period, docs/footprint.md#the-decode-image,
// docs/footprint.md#the-hardware-buffer), and its decode images rotate between two threads
// (docs/footprint.md#the-decode-pipeline). Every expected value is worked out by hand beside it.
#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <thread>
#include <vector>

#include "../../src/collect/pmsampling/child_io.hpp"

namespace diescope::collect {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

TEST(SamplerSizing, DecodePeriodIsTheDrainOrAHundredIntervalsButNoShorterThanTwentyMs) {
  EXPECT_DOUBLE_EQ(child::decode_period_ms(10, 1000), 1000);   // 100 * 10 ms = 1000 ms: the drain
  EXPECT_DOUBLE_EQ(child::decode_period_ms(1, 1000), 100);     // 100 * 1 ms = 100 ms < 1000
  EXPECT_DOUBLE_EQ(child::decode_period_ms(0.25, 1000), 25);   // 100 * 0.25 ms = 25 ms, over the floor
  EXPECT_NEAR(child::decode_period_ms(0.2, 1000), 20, 1e-9);   // 100 * 0.2 ms = 20 ms: the floor itself
  EXPECT_DOUBLE_EQ(child::decode_period_ms(0.1, 100), 20);     // 100 * 0.1 ms = 10 ms, raised to 20
  EXPECT_DOUBLE_EQ(child::decode_period_ms(0.1, 5), 5);        // a drain shorter than the floor: the drain
  EXPECT_DOUBLE_EQ(child::decode_period_ms(100, 1000), 1000);  // 100 * 100 ms = 10 s: the drain
}

TEST(SamplerSizing, SlackIsAQuarterPeriodButAtLeastThirtyMs) {
  EXPECT_DOUBLE_EQ(child::decode_slack_ms(10, 1000), 250);  // a quarter of 1000 ms
  EXPECT_DOUBLE_EQ(child::decode_slack_ms(1, 1000), 30);    // a quarter of 100 ms is 25, under 30
  EXPECT_DOUBLE_EQ(child::decode_slack_ms(0.1, 1000), 30);  // a quarter of 20 ms is 5, under 30
  EXPECT_DOUBLE_EQ(child::decode_slack_ms(0.1, 5), 30);     // a quarter of 5 ms is 1.25, under 30
}

TEST(SamplerSizing, SamplesHeldAreAPeriodThenAPeriodOrTheSlackAndSpare) {
  EXPECT_EQ(child::samples_held(10, 1000), 264u);  // 100 + max(100, 250 / 10 = 25) + 64
  EXPECT_EQ(child::samples_held(1, 1000), 264u);   // 100 + max(100, 30 / 1 = 30) + 64
  EXPECT_EQ(child::samples_held(0.1, 1000),
            564u);  // decoded every 20 ms: 200 + max(200, 30 / 0.1 = 300) + 64
  EXPECT_EQ(child::samples_held(1000, 1000), 66u);  // 1 + max(1, ceil(250 / 1000) = 1) + 64
  EXPECT_EQ(child::samples_held(0.1, 5), 414u);     // 50 + max(50, 300) + 64
}

TEST(SamplerSizing, DecodeImageHoldsOneDecodePeriodAndTheSlack) {
  EXPECT_EQ(child::decode_image_samples(10, 1000), 129u);   // (1000 + 250) / 10 = 125, + 4
  EXPECT_EQ(child::decode_image_samples(1, 1000), 134u);    // (100 + 30) / 1 = 130, + 4
  EXPECT_EQ(child::decode_image_samples(0.2, 1000), 254u);  // (20 + 30) / 0.2 = 250, + 4
  EXPECT_EQ(child::decode_image_samples(0.1, 1000), 504u);  // (20 + 30) / 0.1 = 500, + 4
  EXPECT_EQ(child::decode_image_samples(0.1, 5), 354u);     // (5 + 30) / 0.1 = 350, + 4
  EXPECT_EQ(child::decode_image_samples(1000, 1000), 8u);   // ceil((1000 + 250) / 1000) + 4 = 6, raised to 8
}

TEST(SamplerSizing, HardwareBufferHoldsTheSamplesHeldWithHeadroom) {
  // 10 ms, 1 s drains, 50,393 bytes a sample (the Hopper table on the H200): 264 * 50,393 * 1.5 =
  // 19,955,628 bytes = 19.03 MiB, rounded up to 20 MiB.
  EXPECT_EQ(child::hardware_buffer_bytes(10, 1000, 50'393), 20 * kMiB);
  // 0.1 ms holds 564 samples: 564 * 50,393 * 1.5 = 42,632,478 bytes = 40.66 MiB, rounded up to 41.
  EXPECT_EQ(child::hardware_buffer_bytes(0.1, 1000, 50'393), 41 * kMiB);
  // 0.1 ms, 5 ms drains, 4,096 bytes: 414 * 4,096 * 1.5 = 2,543,616 bytes: under the floor, 4 MiB.
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

TEST(SamplerSizing, DecodeImagesAreWhatThirtyTwoMiBHoldWithinThreeAndFour) {
  // The Hopper image on the H200 at 10 ms: 129 samples * 50,393 bytes = 6,500,697 bytes; 33,554,432 /
  // 6,500,697 = 5.16, so 5, held to the ceiling of 4.
  EXPECT_EQ(child::decode_images(129 * 50'393), 4u);
  // 10 MiB images: 32 / 10 = 3.2, so 3.
  EXPECT_EQ(child::decode_images(10 * kMiB), 3u);
  // The Hopper image at 0.1 ms: 504 * 50,393 = 25,398,072 bytes; 33,554,432 / 25,398,072 = 1.32, so
  // 1, raised to the floor of 3 (one decoded, one evaluated, one more if the evaluation falls behind).
  EXPECT_EQ(child::decode_images(504 * 50'393), 3u);
  // 20 MiB images: 32 / 20 = 1.6, so 1, raised to 3.
  EXPECT_EQ(child::decode_images(20 * kMiB), 3u);
  // 64 MiB images: none fit the 32 MiB; still 3.
  EXPECT_EQ(child::decode_images(64 * kMiB), 3u);
  // 8 MiB images: exactly 4.
  EXPECT_EQ(child::decode_images(8 * kMiB), 4u);
}

TEST(ImageRing, TakingAheadGetsOnlyAnImageGivenBackAndNeitherMakesNorWaits) {
  child::ImageRing ring(3);  // images 0 and 1 made at start, a third allowed
  EXPECT_EQ(ring.try_take_free(), std::optional<std::size_t>(0));
  EXPECT_EQ(ring.try_take_free(), std::optional<std::size_t>(1));
  // None given back: nullopt at once, and no third image made although the limit allows one.
  EXPECT_EQ(ring.try_take_free(), std::nullopt);
  EXPECT_EQ(ring.made(), 2u);
  ring.put_free(1);
  EXPECT_EQ(ring.try_take_free(), std::optional<std::size_t>(1));
  ring.put_free(0);
  ring.close();
  EXPECT_EQ(ring.try_take_free(), std::nullopt);  // closed: nothing more is decoded
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
