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

}  // namespace diescope::core
