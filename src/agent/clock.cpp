#include "diescope/agent/clock.hpp"

#include <cstdlib>

#include "diescope/core/clock.hpp"

namespace diescope::agent {

ClockReadings SystemClock::read() {
  ClockReadings r;
  r.monotonic_ns = core::monotonic_ns();
  r.boottime_ns = core::boottime_ns();
  r.realtime_ns = core::realtime_ns();
  return r;
}

ClockEvent ClockWatch::check(const ClockReadings& now) {
  ClockEvent event;
  event.at_realtime_ns = now.realtime_ns;
  const recording::TimeNs real_minus_boot = now.realtime_ns - now.boottime_ns;
  const recording::TimeNs boot_minus_mono = now.boottime_ns - now.monotonic_ns;
  if (have_prev_) {
    const recording::TimeNs suspended = boot_minus_mono - prev_boot_minus_mono_;
    const recording::TimeNs stepped = real_minus_boot - prev_real_minus_boot_;
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
