// The agent's view of time: the three host clocks it compares to notice a wall-clock step or a
// suspend (docs/method.md#known-limits). Injected, so tests can step the wall clock on purpose.
#pragma once

#include "diescope/recording/records.hpp"

namespace diescope::agent {

// One reading of the host's clocks, all in ns.
struct ClockReadings {
  TimeNs realtime_ns = 0;   // CLOCK_REALTIME: what records are timed on
  TimeNs monotonic_ns = 0;  // CLOCK_MONOTONIC: never steps, stops during suspend
  TimeNs boottime_ns = 0;   // CLOCK_BOOTTIME: like monotonic, but keeps counting through suspend
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
inline constexpr TimeNs kMaxClockSkewNs = 100 * kNsPerMs;

// What ClockWatch saw between two reads.
struct ClockEvent {
  enum class Kind { none, wall_step, suspend };
  Kind kind = Kind::none;
  TimeNs step_ns = 0;  // wall step: how far the wall clock moved against boottime; suspend: its length
  TimeNs at_realtime_ns = 0;
};

// Compares successive readings. A suspend shows as boottime running ahead of monotonic; a wall step
// as realtime moving against boottime (so a suspend, which moves realtime too, is not also counted
// as a step). NTP slewing moves realtime by well under 0.1 s between two polls and is not an event.
class ClockWatch {
 public:
  explicit ClockWatch(TimeNs max_skew_ns = kMaxClockSkewNs) : max_skew_ns_(max_skew_ns) {}
  ClockEvent check(const ClockReadings& now);

 private:
  TimeNs max_skew_ns_;
  bool have_prev_ = false;
  TimeNs prev_real_minus_boot_ = 0;
  TimeNs prev_boot_minus_mono_ = 0;
};

}  // namespace diescope::agent
