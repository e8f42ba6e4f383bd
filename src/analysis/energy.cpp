// Energy from the power records (docs/energy.md). Each rule works on the stretches between two
// consecutive power readings, so a span's figures are sums over its stretches and memory does not
// grow with the recording.
#include "diescope/analysis/energy.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "diescope/core/error.hpp"
#include "diescope/recording/format.hpp"

namespace diescope::analysis {

namespace {

constexpr double kMjPerJ = 1000.0;

void check_order(const std::string& name, recording::TimeNs ts, recording::TimeNs prev, bool any) {
  if (any && ts < prev)
    throw core::InputError(name, 0, "a power reading is earlier than the one before it",
                           "recordings keep each record kind in time order; re-record or repair the file");
}

}  // namespace

void EnergySums::add(const recording::PowerLimitReading& p, const recording::PowerLimitReading& q,
                     recording::TimeNs lo, recording::TimeNs hi) {
  if (hi <= lo || q.ts_ns <= p.ts_ns) return;
  covered_ns += hi - lo;
  const double stretch = static_cast<double>(q.ts_ns - p.ts_ns);
  // docs/energy.md#the-rules: the counter is linear between two readings, so [lo, hi) gets the
  // share (hi - lo) / stretch of their difference.
  if (!std::isfinite(p.energy_mj) || !std::isfinite(q.energy_mj)) {
    counter_absent = true;
  } else if (q.energy_mj < p.energy_mj) {
    counter_went_back = true;
  } else {
    counter_j += (q.energy_mj - p.energy_mj) / kMjPerJ * static_cast<double>(hi - lo) / stretch;
  }
  // The draw is linear between two readings too: the trapezoid over [lo, hi).
  if (!std::isfinite(p.draw_w) || !std::isfinite(q.draw_w)) {
    draw_absent = true;
  } else {
    const auto draw_at = [&](recording::TimeNs t) {
      return p.draw_w + (q.draw_w - p.draw_w) * static_cast<double>(t - p.ts_ns) / stretch;
    };
    draw_j += 0.5 * (draw_at(lo) + draw_at(hi)) * static_cast<double>(hi - lo) * 1e-9;
  }
}

void EnergySums::add(const EnergySums& o) {
  covered_ns += o.covered_ns;
  counter_j += o.counter_j;
  draw_j += o.draw_j;
  counter_absent = counter_absent || o.counter_absent;
  counter_went_back = counter_went_back || o.counter_went_back;
  draw_absent = draw_absent || o.draw_absent;
}

EnergyFigures energy_figures(const EnergySums& span, const EnergySums& chip_sampled,
                             const EnergySums& stranded, recording::TimeNs span_ns, int format_version) {
  EnergyFigures e;
  e.missing = EnergyMissing::none;
  e.covered_s = static_cast<double>(span.covered_ns) * 1e-9;
  if (span_ns > 0)
    e.coverage_pct = 100.0 * static_cast<double>(span.covered_ns) / static_cast<double>(span_ns);
  if (span.covered_ns <= 0) {
    e.missing = EnergyMissing::no_readings;
    return e;
  }
  e.counter_unused = span.counter_absent      ? CounterUnused::absent
                     : span.counter_went_back ? CounterUnused::went_back
                                              : CounterUnused::none;
  // The chip-sampled stretches lie inside the span, so the source usable over the span is usable
  // over them.
  const auto pick = [&](const EnergySums& s) {
    return e.source == EnergySource::counter ? s.counter_j : s.draw_j;
  };
  if (e.counter_unused == CounterUnused::none) {
    e.source = EnergySource::counter;
  } else if (!span.draw_absent) {
    e.source = EnergySource::power_draw;
  } else {
    // A file before format 4 held neither; in memory the readings say for themselves.
    e.missing = format_version < 4 ? EnergyMissing::not_recorded : EnergyMissing::unreadable;
    return e;
  }
  e.energy_j = pick(span);
  e.mean_power_w = e.energy_j / e.covered_s;
  if (chip_sampled.covered_ns > 0) {
    e.chip_sampled_j = pick(chip_sampled);
    e.stranded_j = stranded.covered_ns > 0 ? pick(stranded) : 0.0;
    if (e.chip_sampled_j > 0) e.stranded_pct = 100.0 * e.stranded_j / e.chip_sampled_j;
  }
  return e;
}

double joules_per_tflop(double energy_j, double flops) {
  if (!(std::isfinite(energy_j) && energy_j >= 0) || !(std::isfinite(flops) && flops > 0)) return kNaN;
  return energy_j / (flops / 1e12);
}

bool ProgramFlops::any() const {
  return std::isfinite(window) || std::isfinite(run);
}

ProgramFlops program_flops(const std::vector<recording::Note>& notes) {
  ProgramFlops out;
  for (const recording::Note& note : notes) {
    if (note.topic != recording::kFlopsNoteTopic) continue;
    const std::optional<recording::FlopsNote> f = recording::parse_flops_note(note.text);
    if (!f) continue;
    double& slot = f->scope == recording::FlopsScope::run ? out.run : out.window;
    if (std::isnan(slot)) slot = f->flops;
  }
  return out;
}

void set_span_flops(EnergyFigures& e, double flops, FlopsMissing missing) {
  e.flops_told = true;
  e.flops = flops;
  e.flops_source = std::isfinite(flops) ? FlopsSource::program : FlopsSource::none;
  e.flops_missing = std::isfinite(flops) ? FlopsMissing::none : missing;
  e.joules_per_tflop = joules_per_tflop(e.energy_j, flops);
}

PowerTimeline::PowerTimeline(const recording::Recording& source)
    : stream_(source.stream<recording::PowerLimitReading>()), done_(!stream_), name_(source.name()) {}

void PowerTimeline::load_until(recording::TimeNs t) {
  while (!done_ && (held_.empty() || held_.back().ts_ns < t)) {
    recording::PowerLimitReading r;
    if (!stream_->next(r)) {
      done_ = true;
      break;
    }
    check_order(name_, r.ts_ns, held_.empty() ? 0 : held_.back().ts_ns, !held_.empty());
    held_.push_back(r);
  }
}

void PowerTimeline::advance(recording::TimeNs t) {
  load_until(t);
  // A stretch that ends at or before t cannot overlap a span that starts at t or later.
  while (held_.size() >= 2 && held_[1].ts_ns <= t) held_.pop_front();
}

void PowerTimeline::add(recording::TimeNs lo, recording::TimeNs hi, EnergySums& sums) {
  if (hi <= lo) return;
  load_until(hi);
  for (std::size_t i = 0; i + 1 < held_.size(); ++i) {
    const recording::PowerLimitReading& p = held_[i];
    const recording::PowerLimitReading& q = held_[i + 1];
    if (p.ts_ns >= hi) break;
    const recording::TimeNs a = std::max(lo, p.ts_ns);
    const recording::TimeNs b = std::min(hi, q.ts_ns);
    if (b > a) sums.add(p, q, a, b);
  }
}

EnergySums energy_sums_over(const recording::Recording& source, recording::TimeNs lo, recording::TimeNs hi) {
  EnergySums sums;
  auto stream = source.stream<recording::PowerLimitReading>();
  recording::PowerLimitReading prev, r;
  bool any = false;
  while (stream && stream->next(r)) {
    check_order(source.name(), r.ts_ns, prev.ts_ns, any);
    if (any) {
      const recording::TimeNs a = std::max(lo, prev.ts_ns);
      const recording::TimeNs b = std::min(hi, r.ts_ns);
      if (b > a) sums.add(prev, r, a, b);
    }
    if (r.ts_ns >= hi) break;
    prev = r;
    any = true;
  }
  return sums;
}

EnergyFigures energy_over(const recording::Recording& source, recording::TimeNs lo, recording::TimeNs hi) {
  EnergyFigures e = energy_figures(energy_sums_over(source, lo, hi), {}, {}, hi > lo ? hi - lo : 0,
                                   source.meta().format_version);
  e.chip_sampled_j = kNaN;
  e.stranded_j = kNaN;
  return e;
}

}  // namespace diescope::analysis
