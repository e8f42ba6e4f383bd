// Hardware state over a span (clocks, throttle reasons, power limits) and hygiene.
#include <algorithm>
#include <limits>
#include <memory>
#include <set>

#include "diescope/analysis/analyze.hpp"
#include "diescope/core/error.hpp"
#include "diescope/recording/format.hpp"
#include "internal.hpp"

namespace diescope::analysis {

namespace detail {
namespace {

void check_order(const recording::Recording& source, const char* kind, long index, recording::TimeNs ts,
                 recording::TimeNs prev) {
  if (index > 1 && ts < prev) {
    throw core::InputError(
        source.name(), 0,
        std::string(kind) + " reading " + std::to_string(index) + " is earlier than the one before it",
        "recordings keep each record kind in time order; re-record or repair the file");
  }
}

// Lowest, highest and time-weighted mean of a reading over a span, in the reading's own unit
// (MHz for clocks, W for power limits).
struct RangeStats {
  double min = kNaN;
  double max = kNaN;
  double mean = kNaN;
  int readings = 0;
};

ClockStats clock_stats(const RangeStats& r) {
  return ClockStats{r.min, r.max, r.mean, r.readings};
}

// One stream read in time order, checking that order, one reading ahead; done after the first
// reading past `last_needed`: nothing later can matter.
template <typename Reading>
class InOrder {
 public:
  InOrder(const recording::Recording& source, std::unique_ptr<recording::RecordStream<Reading>> stream,
          const char* kind, recording::TimeNs last_needed)
      : source_(source), stream_(std::move(stream)), kind_(kind), last_needed_(last_needed) {}
  // Reads the first reading (the constructor reads nothing, so that the streams of one reader are
  // all opened before any is read).
  void start() { advance(); }
  bool done() const { return !have_; }
  recording::TimeNs ts() const { return reading_.ts_ns; }
  // Hands the reading at hand to `take` and reads the next.
  template <typename Take>
  void take(Take&& take_reading) {
    take_reading(reading_);
    if (reading_.ts_ns > last_needed_) {
      have_ = false;
      stream_.reset();
      return;
    }
    advance();
  }

 private:
  void advance() {
    have_ = stream_ && stream_->next(reading_);
    if (!have_) {
      stream_.reset();
      return;
    }
    check_order(source_, kind_, ++index_, reading_.ts_ns, prev_);
    prev_ = reading_.ts_ns;
  }

  const recording::Recording& source_;
  std::unique_ptr<recording::RecordStream<Reading>> stream_;
  const char* kind_;
  recording::TimeNs last_needed_;
  Reading reading_;
  bool have_ = false;
  long index_ = 0;
  recording::TimeNs prev_ = 0;
};

// Reads one stream in time order, checking that order, and hands each reading to `take`. Stops
// after the first reading past `last_needed`: nothing later can matter.
template <typename Reading, typename Take>
void read_in_order(const recording::Recording& source,
                   std::unique_ptr<recording::RecordStream<Reading>> stream, const char* kind,
                   recording::TimeNs last_needed, Take take) {
  InOrder<Reading> in(source, std::move(stream), kind, last_needed);
  in.start();
  while (!in.done()) in.take(take);
}

// A reading holds until the next one, the last until the span's end. Statistics over a span take
// every reading that holds for part of it (including the last one at or before its start); when
// none does, the nearest reading after the span stands in. NaN readings are skipped entirely.
class HeldStats {
 public:
  explicit HeldStats(Interval span) : span_(span) {}

  void add(recording::TimeNs ts, double value) {
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

  RangeStats finish() {
    if (have_prev_) close_prev(span_.hi);
    if (readings_ == 0 && have_after_) include(after_);
    RangeStats stats;
    stats.readings = readings_;
    if (readings_ == 0) return stats;
    stats.min = min_;
    stats.max = max_;
    stats.mean = held_ns_ > 0 ? weighted_ / static_cast<double>(held_ns_) : plain_sum_ / readings_;
    return stats;
  }

 private:
  void close_prev(recording::TimeNs until) {
    const recording::TimeNs from = std::max(prev_ts_, span_.lo);
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
  recording::TimeNs prev_ts_ = 0;
  double prev_ = 0;
  bool have_after_ = false;
  double after_ = 0;
  double weighted_ = 0;
  recording::TimeNs held_ns_ = 0;
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
  void add(const recording::ThrottleReading& reading) {
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
      const recording::ThrottleReading* nearest = nullptr;
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
    return recording::throttle_reason_names(mask_);
  }

 private:
  Interval span_;
  bool any_inside_ = false;
  bool known_ = false;
  std::uint64_t mask_ = 0;
  std::optional<recording::ThrottleReading> before_, after_;
};

}  // namespace

struct HardwareReader::State {
  State(const recording::Recording& source, const std::vector<Interval>& spans, recording::TimeNs last_end)
      : clocks(source, source.stream<recording::ClockReading>(), "clock", last_end),
        power(source, source.stream<recording::PowerLimitReading>(), "power limit", last_end),
        throttles(source, source.stream<recording::ThrottleReading>(), "throttle", last_end) {
    for (const Interval& span : spans) {
      sm_clock.emplace_back(span);
      mem_clock.emplace_back(span);
      power_limit.emplace_back(span);
      throttle.emplace_back(span);
    }
  }
  std::vector<HeldStats> sm_clock, mem_clock, power_limit;
  std::vector<ThrottleUnion> throttle;
  InOrder<recording::ClockReading> clocks;
  InOrder<recording::PowerLimitReading> power;
  InOrder<recording::ThrottleReading> throttles;
  bool started = false;
};

namespace {

// Only the first reading after the latest span's end can matter.
recording::TimeNs latest_end(const std::vector<Interval>& spans) {
  recording::TimeNs last_end = spans.empty() ? 0 : spans.front().hi;
  for (const Interval& span : spans) last_end = std::max(last_end, span.hi);
  return last_end;
}

}  // namespace

HardwareReader::HardwareReader(const recording::Recording& source, const std::vector<Interval>& spans)
    : state_(std::make_unique<State>(source, spans, latest_end(spans))),
      next_ns_(std::numeric_limits<recording::TimeNs>::min()) {}

HardwareReader::~HardwareReader() = default;

void HardwareReader::take(recording::TimeNs until) {
  State& s = *state_;
  if (!s.started) {
    s.clocks.start();
    s.power.start();
    s.throttles.start();
    s.started = true;
  }
  const auto take_clock = [&](const recording::ClockReading& r) {
    for (std::size_t i = 0; i < s.sm_clock.size(); ++i) {
      s.sm_clock[i].add(r.ts_ns, r.sm_mhz);
      s.mem_clock[i].add(r.ts_ns, r.mem_mhz);
    }
  };
  const auto take_power = [&](const recording::PowerLimitReading& r) {
    for (HeldStats& p : s.power_limit) p.add(r.ts_ns, r.limit_w);
  };
  const auto take_throttle = [&](const recording::ThrottleReading& r) {
    for (ThrottleUnion& u : s.throttle) u.add(r);
  };
  // The three streams in one time order.
  constexpr recording::TimeNs kNone = std::numeric_limits<recording::TimeNs>::max();
  for (;;) {
    const recording::TimeNs c = s.clocks.done() ? kNone : s.clocks.ts();
    const recording::TimeNs p = s.power.done() ? kNone : s.power.ts();
    const recording::TimeNs t = s.throttles.done() ? kNone : s.throttles.ts();
    next_ns_ = std::min({c, p, t});
    if (next_ns_ == kNone || next_ns_ > until) return;
    if (!s.clocks.done() && c <= p && c <= t)
      s.clocks.take(take_clock);
    else if (!s.power.done() && p <= t)
      s.power.take(take_power);
    else
      s.throttles.take(take_throttle);
  }
}

void HardwareReader::finish(const std::vector<HardwareSpan>& spans) {
  take(std::numeric_limits<recording::TimeNs>::max());
  State& s = *state_;
  for (std::size_t i = 0; i < spans.size() && i < s.sm_clock.size(); ++i) {
    SpanResults& out = *spans[i].out;
    out.sm_clock = clock_stats(s.sm_clock[i].finish());
    out.mem_clock = clock_stats(s.mem_clock[i].finish());
    const RangeStats limit = s.power_limit[i].finish();
    out.power_limit_min_w = limit.min;
    out.power_limit_max_w = limit.max;
    out.throttle_reasons = s.throttle[i].finish();
  }
  state_.reset();
  next_ns_ = std::numeric_limits<recording::TimeNs>::max();
}

Hygiene hygiene_of(const recording::Recording& source) {
  Hygiene hygiene;
  // Every process reading counts, however late.
  read_in_order(
      source, source.stream<recording::ProcessReading>(), "process",
      std::numeric_limits<recording::TimeNs>::max(), [&](const recording::ProcessReading& reading) {
        // -1 means the list could not be read at that time: it says nothing about the count.
        if (reading.compute >= 0)
          hygiene.compute_holders_max = std::max(hygiene.compute_holders_max.value_or(0), reading.compute);
        if (reading.graphics >= 0)
          hygiene.graphics_holders_max = std::max(hygiene.graphics_holders_max.value_or(0), reading.graphics);
        hygiene.exited_holders = std::max(hygiene.exited_holders, reading.exited);
      });
  hygiene.clock_jumps = source.side().clock_jumps;
  // Who held the GPU: replay the holder records (written at each change of the lists, in time order)
  // and keep the most "other" pids present at once.
  // No holder record at all: an older recording, the agent's (it keeps counts only), or lists that
  // never held anyone; the counts above say all there is.
  hygiene.holders_recorded = !source.side().holders.empty();
  std::set<std::int64_t> present;
  for (const recording::GpuHolder& h : source.side().holders) {
    if (h.role == recording::HolderRole::gone) {
      present.erase(h.pid);
      continue;
    }
    if (h.role != recording::HolderRole::other) continue;
    present.insert(h.pid);
    hygiene.other_processes_max = std::max(hygiene.other_processes_max, static_cast<int>(present.size()));
    const bool known = std::any_of(hygiene.other_processes.begin(), hygiene.other_processes.end(),
                                   [&](const OtherProcess& p) { return p.pid == h.pid; });
    if (!known) hygiene.other_processes.push_back({h.pid, h.name, h.ts_ns});
  }
  return hygiene;
}

}  // namespace detail
}  // namespace diescope::analysis
