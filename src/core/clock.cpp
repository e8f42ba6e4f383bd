#include "diescope/core/clock.hpp"

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

}  // namespace diescope::core
