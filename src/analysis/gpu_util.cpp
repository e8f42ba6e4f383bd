// Booking NVML GPU-Util samples to time (docs/method.md, "GPU-Util").
#include "diescope/analysis/analyze.hpp"
#include "diescope/core/error.hpp"
#include "internal.hpp"

namespace diescope::analysis_detail {

UtilBooker::UtilBooker(std::unique_ptr<RecordStream<UtilSample>> stream, std::string source_name)
    : stream_(std::move(stream)), source_name_(std::move(source_name)) {}

bool UtilBooker::next(BookedUtil& out) {
  UtilSample sample;
  if (!stream_ || !stream_->next(sample)) return false;
  ++index_;
  if (have_prev_ && sample.ts_ns < prev_ts_) {
    throw InputError(source_name_, 0,
                     "GPU-Util sample " + std::to_string(index_) + " is earlier than the one before it",
                     "recordings keep each record kind in time order; re-record or repair the file");
  }
  if (!std::isfinite(sample.pct)) {
    throw InputError(source_name_, 0, "GPU-Util sample " + std::to_string(index_) + " is not a number",
                     "an unreadable GPU-Util poll must be left out of the recording, not written as NaN");
  }
  // A sample describes the time since the previous one, but never more than NVML's longest
  // averaging period; the first one has no previous and gets the longest period.
  const TimeNs earliest = sample.ts_ns - kMaxNvmlPeriodNs;
  out.lo = have_prev_ ? std::max(prev_ts_, earliest) : earliest;
  out.hi = sample.ts_ns;
  out.pct = sample.pct;
  out.source = sample.source;
  have_prev_ = true;
  prev_ts_ = sample.ts_ns;
  return true;
}

void UtilWindow::prepare(TimeNs lo, TimeNs hi) {
  while (!live_.empty() && live_.front().hi <= lo) live_.pop_front();
  // Booked spans do not overlap and come in order, so once one ends at or after `hi` no later one
  // can start before it.
  while (!done_ && (live_.empty() || live_.back().hi < hi)) {
    BookedUtil booked;
    if (!booker_.next(booked)) {
      done_ = true;
      break;
    }
    if (booked.hi <= lo) continue;  // entirely before the sample: never needed again
    live_.push_back(booked);
  }
}

void UtilWindow::overlap(TimeNs lo, TimeNs hi, Overlap& acc) const {
  for (const BookedUtil& booked : live_) {
    if (booked.lo >= hi) break;
    const TimeNs o = overlap_ns(lo, hi, booked.lo, booked.hi);
    if (o <= 0) continue;
    acc.weighted += booked.pct * static_cast<double>(o);
    acc.covered_ns += o;
    if (booked.source == UtilSource::samples) acc.from_samples = true;
    else acc.from_polled = true;
  }
}

UtilOverSpan util_over_span(const RecordSource& source, Interval span) {
  UtilOverSpan result;
  if (span.length() <= 0) return result;
  UtilBooker booker(source.util_samples(), source.name());
  BookedUtil booked;
  double weighted = 0;
  TimeNs covered = 0;
  while (booker.next(booked)) {
    if (booked.lo >= span.hi) break;
    const TimeNs o = overlap_ns(span.lo, span.hi, booked.lo, booked.hi);
    weighted += booked.pct * static_cast<double>(o);
    covered += o;
  }
  result.coverage_pct = 100.0 * static_cast<double>(covered) / static_cast<double>(span.length());
  if (covered > 0) result.pct = weighted / static_cast<double>(covered);
  return result;
}

}  // namespace diescope::analysis_detail
