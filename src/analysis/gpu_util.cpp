// Booking NVML GPU-Util samples to time (docs/method.md, "GPU-Util").
#include "diescope/analysis/analyze.hpp"
#include "diescope/core/error.hpp"
#include "internal.hpp"

namespace diescope::analysis::detail {

UtilBooker::UtilBooker(std::unique_ptr<recording::RecordStream<recording::UtilSample>> stream,
                       std::string source_name)
    : stream_(std::move(stream)), source_name_(std::move(source_name)) {}

bool UtilBooker::next(BookedUtil& out) {
  recording::UtilSample sample;
  if (!stream_ || !stream_->next(sample)) return false;
  ++index_;
  if (have_prev_ && sample.ts_ns < prev_ts_) {
    throw core::InputError(source_name_, 0,
                           "GPU-Util sample " + std::to_string(index_) + " is earlier than the one before it",
                           "recordings keep each record kind in time order; re-record or repair the file");
  }
  if (!std::isfinite(sample.pct)) {
    throw core::InputError(
        source_name_, 0, "GPU-Util sample " + std::to_string(index_) + " is not a number",
        "an unreadable GPU-Util poll must be left out of the recording, not written as NaN");
  }
  // A sample describes the time since the previous one, but never more than NVML's longest
  // averaging period; the first one has no previous and gets the longest period.
  const recording::TimeNs earliest = sample.ts_ns - kMaxNvmlPeriodNs;
  out.lo = have_prev_ ? std::max(prev_ts_, earliest) : earliest;
  out.hi = sample.ts_ns;
  out.pct = sample.pct;
  out.source = sample.source;
  have_prev_ = true;
  prev_ts_ = sample.ts_ns;
  return true;
}

UtilWindow::UtilWindow(UtilBooker booker, std::vector<Interval> whole_spans)
    : booker_(std::move(booker)),
      whole_spans_(std::move(whole_spans)),
      whole_weighted_(whole_spans_.size(), 0.0),
      whole_covered_(whole_spans_.size(), 0),
      whole_from_(whole_spans_.size()) {}

bool UtilWindow::load_next() {
  BookedUtil booked;
  if (!booker_.next(booked)) {
    done_ = true;
    return false;
  }
  for (std::size_t i = 0; i < whole_spans_.size(); ++i) {
    const recording::TimeNs o = overlap_ns(whole_spans_[i].lo, whole_spans_[i].hi, booked.lo, booked.hi);
    whole_weighted_[i] += booked.pct * static_cast<double>(o);
    whole_covered_[i] += o;
    if (o <= 0) continue;
    if (booked.source == recording::UtilSource::samples)
      whole_from_[i].from_samples = true;
    else
      whole_from_[i].from_polled = true;
  }
  live_.push_back(booked);
  return true;
}

void UtilWindow::prepare(recording::TimeNs lo, recording::TimeNs hi) {
  while (!live_.empty() && live_.front().hi <= lo) live_.pop_front();
  // Booked spans do not overlap and come in order, so once one ends at or after `hi` no later one
  // can start before it.
  while (!done_ && (live_.empty() || live_.back().hi < hi)) {
    if (!load_next()) break;
    if (live_.back().hi <= lo) live_.pop_back();  // entirely before the sample: never needed again
  }
}

void UtilWindow::overlap(recording::TimeNs lo, recording::TimeNs hi, Overlap& acc) const {
  for (const BookedUtil& booked : live_) {
    if (booked.lo >= hi) break;
    const recording::TimeNs o = overlap_ns(lo, hi, booked.lo, booked.hi);
    if (o <= 0) continue;
    acc.weighted += booked.pct * static_cast<double>(o);
    acc.covered_ns += o;
    if (booked.source == recording::UtilSource::samples)
      acc.from_samples = true;
    else
      acc.from_polled = true;
  }
}

std::vector<UtilOverSpan> UtilWindow::finish_whole_spans() {
  live_.clear();
  while (!done_) {
    if (load_next()) live_.clear();
  }
  std::vector<UtilOverSpan> result = whole_from_;
  for (std::size_t i = 0; i < whole_spans_.size(); ++i) {
    const recording::TimeNs length = whole_spans_[i].length();
    if (length <= 0) continue;
    result[i].coverage_pct = 100.0 * static_cast<double>(whole_covered_[i]) / static_cast<double>(length);
    if (whole_covered_[i] > 0) result[i].pct = whole_weighted_[i] / static_cast<double>(whole_covered_[i]);
  }
  return result;
}

}  // namespace diescope::analysis::detail

namespace diescope::analysis {

void for_each_booked_util(const recording::Recording& source,
                          const std::function<void(const BookedUtil&)>& visit) {
  detail::UtilBooker booker(source.stream<recording::UtilSample>(), source.name());
  BookedUtil booked;
  while (booker.next(booked)) visit(booked);
}

BookedUtilReader::BookedUtilReader(const recording::Recording& source)
    : booker_(std::make_unique<detail::UtilBooker>(source.stream<recording::UtilSample>(), source.name())) {}

BookedUtilReader::~BookedUtilReader() = default;

bool BookedUtilReader::next(BookedUtil& out) {
  return booker_->next(out);
}

}  // namespace diescope::analysis
