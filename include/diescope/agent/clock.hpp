// The agent's view of time: the three host clocks it compares to notice a wall-clock step or a
// suspend (docs/method.md#known-limits). Injected, so tests can step the wall clock on purpose.
#pragma once

#include "diescope/recording/records.hpp"

namespace diescope::agent {

// One reading of the host's clocks, all in ns.
struct ClockReadings {
  recording::TimeNs realtime_ns = 0;   // CLOCK_REALTIME: what records are timed on
  recording::TimeNs monotonic_ns = 0;  // CLOCK_MONOTONIC: never steps, stops during suspend
  recording::TimeNs boottime_ns = 0;   // CLOCK_BOOTTIME: like monotonic, but keeps counting through suspend
};

class Clock {
 public:
  virtual ~Clock() = default;
  virtual ClockReadings read() = 0;
};

// The host's clocks.
class SystemClock final : public Clock {
 public:
  ClockReadings read() override;
};

// A step larger than this between two reads restarts the agent's record (docs/method.md#known-limits).
inline constexpr recording::TimeNs kMaxClockSkewNs = 100 * recording::kNsPerMs;

// What ClockWatch saw between two reads.
struct ClockEvent {
  enum class Kind { none, wall_step, suspend };
  Kind kind = Kind::none;
  recording::TimeNs step_ns =
      0;  // wall step: how far the wall clock moved against boottime; suspend: its length
  recording::TimeNs at_realtime_ns = 0;
};

// Compares successive readings. A suspend shows as boottime running ahead of monotonic; a wall step
// as realtime moving against boottime (so a suspend, which moves realtime too, is not also counted
// as a step). NTP slewing moves realtime by well under 0.1 s between two polls and is not an event.
class ClockWatch {
 public:
  explicit ClockWatch(recording::TimeNs max_skew_ns = kMaxClockSkewNs) : max_skew_ns_(max_skew_ns) {}
  ClockEvent check(const ClockReadings& now);

 private:
  recording::TimeNs max_skew_ns_;
  bool have_prev_ = false;
  recording::TimeNs prev_real_minus_boot_ = 0;
  recording::TimeNs prev_boot_minus_mono_ = 0;
};

}  // namespace diescope::agent
