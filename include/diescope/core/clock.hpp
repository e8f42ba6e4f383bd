// The host's clocks, in nanoseconds: the one place diescope reads them. Recordings are timed on
// the wall clock (CLOCK_REALTIME, ns since the Unix epoch); deadlines and durations use the
// monotonic clock, which never steps (docs/recording-format.md).
#pragma once

#include <cstdint>

namespace diescope::core {

std::int64_t realtime_ns();       // CLOCK_REALTIME: the timeline of every record
std::int64_t monotonic_ns();      // CLOCK_MONOTONIC: never steps; stops during a suspend
std::int64_t boottime_ns();       // CLOCK_BOOTTIME: like monotonic, but counts through a suspend
std::int64_t monotonic_raw_ns();  // CLOCK_MONOTONIC_RAW: the hardware clock, not slewed by NTP
std::int64_t thread_cpu_ns();     // CPU time of the calling thread

// One reading of the host's clocks, all in ns. Readers that compare readings (ClockWatch) take
// them through Clock, so tests can step the wall clock or suspend on purpose.
struct ClockReadings {
  std::int64_t realtime_ns = 0;   // CLOCK_REALTIME: what records are timed on
  std::int64_t monotonic_ns = 0;  // CLOCK_MONOTONIC: never steps, stops during suspend
  std::int64_t boottime_ns = 0;   // CLOCK_BOOTTIME: like monotonic, but keeps counting through suspend
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

// A step larger than this between two reads is a jump (docs/method.md#known-limits).
inline constexpr std::int64_t kMaxClockSkewNs = 100'000'000;

// What ClockWatch saw between two reads.
struct ClockEvent {
  enum class Kind { none, wall_step, suspend };
  Kind kind = Kind::none;
  std::int64_t step_ns = 0;  // wall step: how far the wall clock moved against boottime; suspend: its length
  std::int64_t at_realtime_ns = 0;
};

// Compares successive readings. A suspend shows as boottime running ahead of monotonic; a wall step
// as realtime moving against boottime (so a suspend, which moves realtime too, is not also counted
// as a step). NTP slewing moves realtime by well under 0.1 s between two polls and is not an event.
class ClockWatch {
 public:
  explicit ClockWatch(std::int64_t max_skew_ns = kMaxClockSkewNs) : max_skew_ns_(max_skew_ns) {}
  ClockEvent check(const ClockReadings& now);

 private:
  std::int64_t max_skew_ns_;
  bool have_prev_ = false;
  std::int64_t prev_real_minus_boot_ = 0;
  std::int64_t prev_boot_minus_mono_ = 0;
};

}  // namespace diescope::core
