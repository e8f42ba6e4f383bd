// The host clocks read in nanoseconds.
#include <ctime>

#include <gtest/gtest.h>

#include "diescope/core/clock.hpp"

namespace diescope {
namespace {

TEST(Clock, RealtimeIsNanosecondsSinceTheEpoch) {
  const std::int64_t seconds = std::time(nullptr);
  const std::int64_t ns = core::realtime_ns();
  // time() truncates to the second: the two agree to within a second (plus a second for a tick between).
  EXPECT_GE(ns, seconds * 1'000'000'000);
  EXPECT_LT(ns, (seconds + 2) * 1'000'000'000);
}

TEST(Clock, MonotonicClocksNeverGoBack) {
  const std::int64_t mono = core::monotonic_ns();
  const std::int64_t boot = core::boottime_ns();
  EXPECT_LE(mono, core::monotonic_ns());
  EXPECT_LE(boot, core::boottime_ns());
  EXPECT_GE(core::boottime_ns(), mono);  // boottime counts suspends too, so it is never behind
  const std::int64_t raw = core::monotonic_raw_ns();
  EXPECT_LE(raw, core::monotonic_raw_ns());
}

TEST(Clock, ThreadCpuTimeGrowsWithWork) {
  const std::int64_t before = core::thread_cpu_ns();
  volatile std::uint64_t sink = 0;
  for (std::uint64_t i = 0; i < 20'000'000; ++i) sink = sink + i;
  EXPECT_GT(core::thread_cpu_ns(), before);
}

}  // namespace
}  // namespace diescope
