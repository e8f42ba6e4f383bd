#include "diescope/core/clock.hpp"

#include <cstdlib>
#include <ctime>

namespace diescope::core {

namespace {

std::int64_t read_clock(clockid_t id) {
  timespec ts{};
  ::clock_gettime(id, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

std::int64_t realtime_ns() {
  return read_clock(CLOCK_REALTIME);
}
std::int64_t monotonic_ns() {
  return read_clock(CLOCK_MONOTONIC);
}
std::int64_t boottime_ns() {
  return read_clock(CLOCK_BOOTTIME);
}
std::int64_t monotonic_raw_ns() {
  return read_clock(CLOCK_MONOTONIC_RAW);
}
std::int64_t thread_cpu_ns() {
  return read_clock(CLOCK_THREAD_CPUTIME_ID);
}

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
  const std::int64_t real_minus_boot = now.realtime_ns - now.boottime_ns;
  const std::int64_t boot_minus_mono = now.boottime_ns - now.monotonic_ns;
  if (have_prev_) {
    const std::int64_t suspended = boot_minus_mono - prev_boot_minus_mono_;
    const std::int64_t stepped = real_minus_boot - prev_real_minus_boot_;
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

}  // namespace diescope::core
