#include "diescope/agent/clock.hpp"

#include <cstdlib>
#include <ctime>

namespace diescope::agent {

namespace {
TimeNs read_clock(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<TimeNs>(ts.tv_sec) * kNsPerSecond + ts.tv_nsec;
}
}  // namespace

ClockReadings SystemClock::read() {
  ClockReadings r;
  r.monotonic_ns = read_clock(CLOCK_MONOTONIC);
  r.boottime_ns = read_clock(CLOCK_BOOTTIME);
  r.realtime_ns = read_clock(CLOCK_REALTIME);
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
