// The retimer: samples CUPTI gave no time are placed in the hole they fill exactly, or dropped
// and reported; never passed on with an empty span and never dropped silently.
#include <gtest/gtest.h>

#include "../../src/collect/pmsampling/child_io.hpp"

// Its own namespace: the part's test files compile as one (docs/building.md#one-test-binary-per-part).
namespace diescope::collect::retimer_test {
namespace {

namespace m = sampler_msg;
constexpr std::int64_t kMs = 1'000'000;

m::Sample timed(std::int64_t start_ms, double value) {
  return {start_ms * kMs, (start_ms + 1) * kMs, {value}};
}
// What CUPTI hands back for a sample it gave no time: start == end, an older stamp.
m::Sample untimed(double value) {
  return {5 * kMs, 5 * kMs, {value}};
}

std::vector<m::Sample> samples_of(const std::vector<SamplerMessage>& out) {
  std::vector<m::Sample> s;
  for (const auto& message : out)
    if (auto* x = std::get_if<m::Sample>(&message)) s.push_back(*x);
  return s;
}
template <typename T>
int count_of(const std::vector<SamplerMessage>& out) {
  int n = 0;
  for (const auto& message : out) n += std::holds_alternative<T>(message);
  return n;
}

TEST(SamplerRetimer, TimedSamplesPassThrough) {
  child::Retimer retimer(kMs);
  std::vector<SamplerMessage> out;
  for (int k = 10; k < 14; ++k) retimer.feed(timed(k, k), out);
  EXPECT_EQ(samples_of(out).size(), 4u);
  EXPECT_EQ(count_of<m::Note>(out), 0);
  EXPECT_EQ(count_of<m::Gap>(out), 0);
}

TEST(SamplerRetimer, RunThatFillsItsHolePlacedOneIntervalEach) {
  child::Retimer retimer(kMs);
  std::vector<SamplerMessage> out;
  retimer.feed(timed(10, 1), out);  // ends at 11 ms
  retimer.feed(untimed(2), out);
  retimer.feed(untimed(3), out);
  retimer.feed(untimed(4), out);
  EXPECT_TRUE(samples_of(out).size() == 1);  // held until a timed sample shows the hole
  retimer.feed(timed(14, 5), out);           // starts at 14 ms: a 3 ms hole for 3 samples
  auto s = samples_of(out);
  ASSERT_EQ(s.size(), 5u);
  // The held samples take 11-12, 12-13 and 13-14 ms, in the order CUPTI gave them.
  for (int i = 1; i <= 3; ++i) {
    EXPECT_EQ(s[static_cast<std::size_t>(i)].start_ns, (10 + i) * kMs);
    EXPECT_EQ(s[static_cast<std::size_t>(i)].end_ns, (11 + i) * kMs);
    EXPECT_EQ(s[static_cast<std::size_t>(i)].values[0], 1.0 + i);
  }
  EXPECT_EQ(count_of<m::Gap>(out), 0);
  EXPECT_EQ(count_of<m::Note>(out), 1);
  EXPECT_EQ(retimer.retimed(), 3);
  EXPECT_EQ(retimer.dropped(), 0);
}

TEST(SamplerRetimer, RunShorterThanItsHoleIsDroppedAndTheHoleIsAGap) {
  child::Retimer retimer(kMs);
  std::vector<SamplerMessage> out;
  retimer.feed(timed(10, 1), out);
  retimer.feed(untimed(2), out);
  retimer.feed(untimed(3), out);
  retimer.feed(timed(16, 4), out);  // a 5 ms hole (11 to 16 ms) for 2 samples: they cannot be placed
  auto s = samples_of(out);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(retimer.dropped(), 2);
  ASSERT_EQ(count_of<m::Gap>(out), 1);
  for (const auto& message : out) {
    if (auto* gap = std::get_if<m::Gap>(&message)) {
      EXPECT_EQ(gap->from_ns, 11 * kMs);
      EXPECT_EQ(gap->to_ns, 16 * kMs);
    }
    if (auto* note = std::get_if<m::Note>(&message)) {
      EXPECT_NE(note->text.find("dropped 2 samples"), std::string::npos);
    }
  }
}

TEST(SamplerRetimer, RunHeldAtTheEndIsDroppedWithANote) {
  child::Retimer retimer(kMs);
  std::vector<SamplerMessage> out;
  retimer.feed(timed(10, 1), out);
  retimer.feed(untimed(2), out);
  retimer.finish(out);
  EXPECT_EQ(samples_of(out).size(), 1u);
  EXPECT_EQ(retimer.dropped(), 1);
  EXPECT_EQ(count_of<m::Note>(out), 1);
}

}  // namespace
}  // namespace diescope::collect::retimer_test
