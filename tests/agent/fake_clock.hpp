// A clock the test moves by hand: steps of the wall clock and suspends on purpose.
#pragma once

#include "diescope/core/clock.hpp"

namespace diescope::agent::testing {

class FakeClock final : public core::Clock {
 public:
  explicit FakeClock(recording::TimeNs realtime0 = 1'800'000'000 * recording::kNsPerSecond) {
    now_.realtime_ns = realtime0;
    now_.monotonic_ns = 1000 * recording::kNsPerSecond;
    now_.boottime_ns = 1000 * recording::kNsPerSecond;
  }
  core::ClockReadings read() override { return now_; }
  // Time passes normally on every clock.
  void advance(recording::TimeNs ns) {
    now_.realtime_ns += ns;
    now_.monotonic_ns += ns;
    now_.boottime_ns += ns;
  }
  // Someone sets the wall clock: only realtime moves.
  void step_wall(recording::TimeNs ns) { now_.realtime_ns += ns; }
  // The machine sleeps: monotonic stands still, boottime and realtime move on.
  void suspend(recording::TimeNs ns) {
    now_.realtime_ns += ns;
    now_.boottime_ns += ns;
  }

 private:
  core::ClockReadings now_;
};

}  // namespace diescope::agent::testing
