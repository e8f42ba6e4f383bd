// Hardware state over a span (clocks, throttle reasons, power limits) and hygiene.
#include <cstdio>
#include <limits>

#include "diescope/analysis/analyze.hpp"
#include "diescope/core/error.hpp"
#include "diescope/recording/format.hpp"
#include "internal.hpp"

namespace diescope {

namespace analysis_detail {
namespace {

void check_order(const RecordSource& source, const char* kind, long index, TimeNs ts, TimeNs prev) {
  if (index > 1 && ts < prev) {
    throw InputError(source.name(), 0,
                     std::string(kind) + " reading " + std::to_string(index) + " is earlier than the one before it",
                     "recordings keep each record kind in time order; re-record or repair the file");
  }
}

// A reading holds until the next one, the last until the span's end. Statistics over a span take
// every reading that holds for part of it (including the last one at or before its start); when
// none does, the nearest reading after the span stands in. NaN readings are skipped entirely.
class HeldStats {
 public:
  explicit HeldStats(Interval span) : span_(span) {}

  void add(TimeNs ts, double value) {
    if (!std::isfinite(value)) return;
    if (ts > span_.hi) {
      if (!have_after_) {
        have_after_ = true;
        after_ = value;
      }
      return;
    }
    if (have_prev_ && ts > span_.lo) close_prev(ts);
    have_prev_ = true;
    prev_ts_ = ts;
    prev_ = value;
  }

  ClockStats finish() {
    if (have_prev_) close_prev(span_.hi);
    if (readings_ == 0 && have_after_) include(after_);
    ClockStats stats;
    stats.readings = readings_;
    if (readings_ == 0) return stats;
    stats.min_mhz = min_;
    stats.max_mhz = max_;
    stats.mean_mhz = held_ns_ > 0 ? weighted_ / static_cast<double>(held_ns_) : plain_sum_ / readings_;
    return stats;
  }

 private:
  void close_prev(TimeNs until) {
    const TimeNs from = std::max(prev_ts_, span_.lo);
    if (until > from) {
      weighted_ += prev_ * static_cast<double>(until - from);
      held_ns_ += until - from;
    }
    include(prev_);
    have_prev_ = false;
  }
  void include(double value) {
    min_ = std::min(min_, value);
    max_ = std::max(max_, value);
    plain_sum_ += value;
    ++readings_;
  }

  Interval span_;
  bool have_prev_ = false;
  TimeNs prev_ts_ = 0;
  double prev_ = 0;
  bool have_after_ = false;
  double after_ = 0;
  double weighted_ = 0;
  TimeNs held_ns_ = 0;
  double min_ = std::numeric_limits<double>::infinity();
  double max_ = -std::numeric_limits<double>::infinity();
  double plain_sum_ = 0;
  int readings_ = 0;
};

// Throttle reasons are what NVML said at each read: the union of the reads inside the span, or the
// nearest read when none falls inside it.
class ThrottleUnion {
 public:
  explicit ThrottleUnion(Interval span) : span_(span) {}
  void add(const ThrottleReading& reading) {
    if (reading.ts_ns < span_.lo) {
      before_ = reading;
    } else if (reading.ts_ns <= span_.hi) {
      any_inside_ = true;
      if (reading.mask) {
        known_ = true;
        mask_ |= *reading.mask;
      }
    } else if (!after_) {
      after_ = reading;
    }
  }
  std::optional<std::vector<std::string>> finish() {
    if (!any_inside_) {
      const ThrottleReading* nearest = nullptr;
      if (before_ && after_) {
        nearest = (span_.lo - before_->ts_ns) <= (after_->ts_ns - span_.hi) ? &*before_ : &*after_;
      } else if (before_) {
        nearest = &*before_;
      } else if (after_) {
        nearest = &*after_;
      }
      if (nearest && nearest->mask) {
        known_ = true;
        mask_ = *nearest->mask;
      }
    }
    if (!known_) return std::nullopt;
    return throttle_reason_names(mask_);
  }

 private:
  Interval span_;
  bool any_inside_ = false;
  bool known_ = false;
  std::uint64_t mask_ = 0;
  std::optional<ThrottleReading> before_, after_;
};

}  // namespace

void hardware_over(const RecordSource& source, const std::vector<HardwareSpan>& spans) {
  if (spans.empty()) return;
  // Only the first reading after the latest span's end can matter.
  TimeNs last_end = spans.front().span.hi;
  for (const HardwareSpan& h : spans) last_end = std::max(last_end, h.span.hi);
  {
    std::vector<HeldStats> sm, mem;
    for (const HardwareSpan& h : spans) {
      sm.emplace_back(h.span);
      mem.emplace_back(h.span);
    }
    auto stream = source.clocks();
    ClockReading reading;
    long index = 0;
    TimeNs prev = 0;
    while (stream && stream->next(reading)) {
      check_order(source, "clock", ++index, reading.ts_ns, prev);
      prev = reading.ts_ns;
      for (std::size_t i = 0; i < spans.size(); ++i) {
        sm[i].add(reading.ts_ns, reading.sm_mhz);
        mem[i].add(reading.ts_ns, reading.mem_mhz);
      }
      if (reading.ts_ns > last_end) break;
    }
    for (std::size_t i = 0; i < spans.size(); ++i) {
      spans[i].out->sm_clock = sm[i].finish();
      spans[i].out->mem_clock = mem[i].finish();
    }
  }
  {
    std::vector<HeldStats> power;
    for (const HardwareSpan& h : spans) power.emplace_back(h.span);
    auto stream = source.power_limits();
    PowerLimitReading reading;
    long index = 0;
    TimeNs prev = 0;
    while (stream && stream->next(reading)) {
      check_order(source, "power limit", ++index, reading.ts_ns, prev);
      prev = reading.ts_ns;
      for (HeldStats& p : power) p.add(reading.ts_ns, reading.limit_w);
      if (reading.ts_ns > last_end) break;
    }
    for (std::size_t i = 0; i < spans.size(); ++i) {
      const ClockStats stats = power[i].finish();
      spans[i].out->power_limit_min_w = stats.min_mhz;
      spans[i].out->power_limit_max_w = stats.max_mhz;
    }
  }
  {
    std::vector<ThrottleUnion> unions;
    for (const HardwareSpan& h : spans) unions.emplace_back(h.span);
    auto stream = source.throttles();
    ThrottleReading reading;
    long index = 0;
    TimeNs prev = 0;
    while (stream && stream->next(reading)) {
      check_order(source, "throttle", ++index, reading.ts_ns, prev);
      prev = reading.ts_ns;
      for (ThrottleUnion& u : unions) u.add(reading);
      if (reading.ts_ns > last_end) break;
    }
    for (std::size_t i = 0; i < spans.size(); ++i) spans[i].out->throttle_reasons = unions[i].finish();
  }
}

Hygiene hygiene_of(const RecordSource& source) {
  Hygiene hygiene;
  auto stream = source.processes();
  ProcessReading reading;
  long index = 0;
  TimeNs prev = 0;
  while (stream && stream->next(reading)) {
    check_order(source, "process", ++index, reading.ts_ns, prev);
    prev = reading.ts_ns;
    // -1 means the list could not be read at that time: it says nothing about the count.
    if (reading.compute >= 0)
      hygiene.compute_holders_max = std::max(hygiene.compute_holders_max.value_or(0), reading.compute);
    if (reading.graphics >= 0)
      hygiene.graphics_holders_max = std::max(hygiene.graphics_holders_max.value_or(0), reading.graphics);
    hygiene.exited_holders = std::max(hygiene.exited_holders, reading.exited);
  }
  const RecordingMeta& meta = source.meta();
  for (const ClockJump& jump : source.side().clock_jumps) {
    hygiene.clock_jumps.push_back(jump);
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "the wall clock stepped by %+.3f s at %.3f s into the run; figures over spans that "
                  "cross it may be wrong",
                  seconds(jump.step_ns), seconds(jump.ts_ns - meta.start_ns));
    hygiene.notes.emplace_back(buf);
  }
  return hygiene;
}

}  // namespace analysis_detail
}  // namespace diescope
