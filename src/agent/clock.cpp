#include "diescope/agent/clock.hpp"

#include <cstdlib>

#include "diescope/core/clock.hpp"

namespace diescope::agent {

ClockReadings SystemClock::read() {
  ClockReadings r;
  r.monotonic_ns = monotonic_ns();
  r.boottime_ns = boottime_ns();
  r.realtime_ns = realtime_ns();
  return r;
}

ClockEvent ClockWatch::check(const ClockReadings& now) {
  ClockEvent event;
  event.at_realtime_ns = now.realtime_ns;
  const TimeNs real_minus_boot = now.realtime_ns - now.boottime_ns;
  const TimeNs boot_minus_mono = now.boottime_ns - now.monotonic_ns;
  if (have_prev_) {
    const TimeNs suspended = boot_minus_mono - prev_boot_minus_mono_;
    const TimeNs stepped = real_minus_boot - prev_real_minus_boot_;
    if (suspended > max_skew_ns_) {
      event.kind = ClockEvent::Kind::suspend;
      event.step_ns = suspended;
    } else if (std::llabs(stepped) > max_skew_ns_) {
      event.kind = ClockEvent::Kind::wall_step;
      event.step_ns = stepped;
    }
  }
  have_prev_ = true;
  prev_real_minus_boot_ = real_minus_boot;
  prev_boot_minus_mono_ = boot_minus_mono;
  return event;
}

}  // namespace diescope::agent
