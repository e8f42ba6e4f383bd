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

// docs/method.md#known-limits: a wall-clock step or a suspend of more than 0.1 s between two reads
// is a jump; `run` and the agent share the rule. Readings in ns, stepped by hand.
TEST(ClockWatch, AStepOrASuspendOverATenthOfASecondIsAJump) {
  core::ClockWatch watch;
  core::ClockReadings r{1'000'000'000'000, 5'000'000'000, 5'000'000'000};  // realtime, monotonic, boottime
  EXPECT_EQ(watch.check(r).kind, core::ClockEvent::Kind::none);            // the first read sets the base
  auto advance = [&](std::int64_t ns) {
    r.realtime_ns += ns;
    r.monotonic_ns += ns;
    r.boottime_ns += ns;
  };
  advance(100'000'000);  // 0.1 s passes on every clock: nothing
  EXPECT_EQ(watch.check(r).kind, core::ClockEvent::Kind::none);
  r.realtime_ns += 100'000'000;  // the wall clock set 0.1 s on: not more than 0.1 s, no jump
  EXPECT_EQ(watch.check(r).kind, core::ClockEvent::Kind::none);
  r.realtime_ns += 150'000'000;  // set 0.15 s on: a wall step of +150 ms
  core::ClockEvent e = watch.check(r);
  EXPECT_EQ(e.kind, core::ClockEvent::Kind::wall_step);
  EXPECT_EQ(e.step_ns, 150'000'000);
  EXPECT_EQ(e.at_realtime_ns, r.realtime_ns);
  r.realtime_ns -= 200'000'000;  // set 0.2 s back: -200 ms
  e = watch.check(r);
  EXPECT_EQ(e.kind, core::ClockEvent::Kind::wall_step);
  EXPECT_EQ(e.step_ns, -200'000'000);
  r.realtime_ns += 2'000'000'000;  // a 2 s suspend: realtime and boottime move, monotonic stands
  r.boottime_ns += 2'000'000'000;
  e = watch.check(r);
  EXPECT_EQ(e.kind, core::ClockEvent::Kind::suspend);  // not also a wall step
  EXPECT_EQ(e.step_ns, 2'000'000'000);
}

TEST(Clock, ThreadCpuTimeGrowsWithWork) {
  const std::int64_t before = core::thread_cpu_ns();
  volatile std::uint64_t sink = 0;
  for (std::uint64_t i = 0; i < 20'000'000; ++i) sink = sink + i;
  EXPECT_GT(core::thread_cpu_ns(), before);
}

}  // namespace
}  // namespace diescope
