// The analysis of one recording (docs/method.md). Memory does not grow with the number of chip
// samples: one pass over the chip stream feeds running sums for the run and for the steady window,
// while cursors over the GPU-Util and engine streams advance in lockstep with it.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "diescope/analysis/analyze.hpp"
#include "diescope/analysis/energy.hpp"
#include "diescope/core/error.hpp"
#include "diescope/core/version.hpp"
#include "internal.hpp"

namespace diescope::analysis {

using detail::Interval;
using detail::overlap_ns;
using detail::seconds;

double die_util_of_sample(std::span<const double> units, std::span<const double> engines) {
  double busiest = -std::numeric_limits<double>::infinity();
  bool any = false;
  for (double v : units)
    if (std::isfinite(v)) {
      busiest = std::max(busiest, v);
      any = true;
    }
  for (double v : engines)
    if (std::isfinite(v)) {
      busiest = std::max(busiest, v);
      any = true;
    }
  return any ? busiest : kNaN;
}

namespace {

// Running sums of one column over one span.
struct ColumnSums {
  double weighted = 0;  // value x ns
  recording::TimeNs available_ns = 0;
  double max_value = -std::numeric_limits<double>::infinity();

  void add(double value, recording::TimeNs ns) {
    if (!std::isfinite(value)) return;
    weighted += value * static_cast<double>(ns);
    available_ns += ns;
    max_value = std::max(max_value, value);
  }
};

// Running sums over one span (the run or the steady window).
struct SpanSums {
  Interval span;
  std::int64_t samples_read = 0;
  std::int64_t samples_used = 0;
  std::int64_t dropped_first = 0;
  std::int64_t dropped_broken = 0;
  recording::TimeNs covered_ns = 0;
  double die_weighted = 0;
  recording::TimeNs die_ns = 0;
  std::vector<ColumnSums> units;  // chip units, then engines
  std::vector<ColumnSums> diagnostics;
  std::vector<double> count_sum;            // share-weighted counts
  std::vector<recording::TimeNs> count_ns;  // time covered by samples that had the count
  detail::UtilWindow::Overlap util;
  // Energy over the usable chip samples' time, and over those under the stranded threshold
  // (docs/energy.md#energy-stranded).
  EnergySums energy_chip;
  EnergySums energy_stranded;
  // docs/method.md#gpm-as-a-second-chip-source: in a window over GPM samples, the time before its
  // start that a sample's reading can describe; such a window uses only samples wholly inside it
  // that start at least this long after its start. 0: every sample that overlaps it.
  recording::TimeNs lead_ns = 0;

  SpanSums(Interval s, const recording::RecordingMeta& meta)
      : span(s),
        units(meta.units.size() + meta.engines.size()),
        diagnostics(meta.diagnostics.size()),
        count_sum(meta.counts.size(), 0.0),
        count_ns(meta.counts.size(), 0) {}

  // Whether a sample belongs to this span: it overlaps it, or (empty sample) starts inside it.
  bool touches(const recording::ChipSample& s) const {
    if (lead_ns > 0 && s.end_ns > s.start_ns) return s.start_ns >= span.lo + lead_ns && s.end_ns <= span.hi;
    if (s.end_ns > s.start_ns) return s.start_ns < span.hi && s.end_ns > span.lo;
    return s.start_ns >= span.lo && s.start_ns < span.hi;
  }
};

// Which chip sample is the first after a counters start (docs/method.md, "Drops").
class FirstSampleRule {
 public:
  explicit FirstSampleRule(const std::vector<recording::CountersEvent>& events) {
    for (const recording::CountersEvent& e : events)
      if (e.on) on_times_.push_back(e.ts_ns);
    std::sort(on_times_.begin(), on_times_.end());
    // With no counters events the recording's own first sample spans the setup.
    pending_ = on_times_.empty();
  }
  bool is_first(const recording::ChipSample& s) {
    const recording::TimeNs end = std::max(s.start_ns, s.end_ns);
    while (next_ < on_times_.size() && on_times_[next_] < end) {
      pending_ = true;
      ++next_;
    }
    if (!pending_) return false;
    pending_ = false;
    return true;
  }

 private:
  std::vector<recording::TimeNs> on_times_;
  std::size_t next_ = 0;
  bool pending_ = false;
};

// Matches each chip sample to the first engine reading at or after its end.
class EngineMatcher {
 public:
  EngineMatcher(const recording::Recording& source, std::size_t columns)
      : source_name_(source.name()), columns_(columns) {
    if (columns_ > 0) stream_ = source.stream<recording::EngineReading>();
    done_ = !stream_;
  }
  std::span<const double> match(recording::TimeNs sample_end) {
    while (!done_ && (!have_ || ts_ < sample_end)) {
      recording::EngineReading reading;
      if (!stream_->next(reading)) {
        done_ = true;
        have_ = false;
        break;
      }
      ++index_;
      if (have_ && reading.ts_ns < ts_) {
        throw core::InputError(
            source_name_, 0,
            "engine reading " + std::to_string(index_) + " is earlier than the one before it",
            "recordings keep each record kind in time order; re-record or repair the file");
      }
      if (reading.values.size() != columns_) {
        throw core::InputError(source_name_, 0,
                               "engine reading " + std::to_string(index_) + " has " +
                                   std::to_string(reading.values.size()) + " values for " +
                                   std::to_string(columns_) + " engine columns",
                               "each engine reading needs one value per engine column of the metadata");
      }
      ts_ = reading.ts_ns;
      values_.assign(reading.values.begin(), reading.values.end());
      // An engine value no reading can take is unavailable, as NaN is (docs/method.md#die-util).
      for (double& v : values_)
        if (v < 0 || v > kMaxPctOfPeak) v = kNaN;
      have_ = true;
    }
    if (!have_) return {};
    return values_;
  }

 private:
  std::string source_name_;
  std::size_t columns_;
  std::unique_ptr<recording::RecordStream<recording::EngineReading>> stream_;
  std::vector<double> values_;
  recording::TimeNs ts_ = 0;
  bool have_ = false;
  bool done_ = true;
  long index_ = 0;
};

// Scheduled counter time inside a span: the union of counters-on intervals (on until the next off).
recording::TimeNs scheduled_ns(const std::vector<recording::CountersEvent>& events, Interval span) {
  recording::TimeNs total = 0;
  bool on = false;
  recording::TimeNs since = 0;
  for (const recording::CountersEvent& e : events) {
    if (e.on && !on) {
      on = true;
      since = e.ts_ns;
    } else if (!e.on && on) {
      on = false;
      total += overlap_ns(since, e.ts_ns, span.lo, span.hi);
    }
  }
  if (on) total += overlap_ns(since, span.hi, span.lo, span.hi);
  return total;
}

ColumnSummary summarize_column(const recording::ColumnDef& def, const ColumnSums& sums,
                               recording::TimeNs covered_ns) {
  ColumnSummary summary;
  summary.key = def.key;
  summary.available_s = seconds(sums.available_ns);
  if (covered_ns > 0)
    summary.availability_pct =
        100.0 * static_cast<double>(sums.available_ns) / static_cast<double>(covered_ns);
  if (sums.available_ns > 0) {
    summary.mean_pct = sums.weighted / static_cast<double>(sums.available_ns);
    summary.max_sample_pct = sums.max_value;
  }
  return summary;
}

// The unit with the highest time-weighted mean among those busy (>= 1% of peak) and available for
// at least 90% of the usable chip time.
void choose_limiting_unit(SpanResults& r) {
  bool any_busy = false;
  const ColumnSummary* best = nullptr;
  for (const ColumnSummary& unit : r.units) {
    if (!(unit.mean_pct >= kMinBusyPct)) continue;
    any_busy = true;
    if (!(unit.availability_pct >= kMinLimitingAvailabilityPct)) continue;
    if (!best || unit.mean_pct > best->mean_pct) best = &unit;
  }
  if (best) {
    r.limiting_unit = best->key;
    return;
  }
  if (r.samples_used == 0) {
    r.limiting_unit_missing = LimitingUnitMissing::no_usable_samples;
  } else if (!any_busy) {
    r.limiting_unit_missing = LimitingUnitMissing::no_busy_unit;
  } else {
    r.limiting_unit_missing = LimitingUnitMissing::busy_units_sparse;
  }
}

const recording::ColumnDef* column_of_unit(const recording::RecordingMeta& meta, const std::string& key) {
  for (const recording::ColumnDef& c : meta.units)
    if (c.key == key) return &c;
  for (const recording::ColumnDef& c : meta.engines)
    if (c.key == key) return &c;
  return nullptr;
}

SpanResults finish_span(const SpanSums& sums, const detail::UtilOverSpan& whole,
                        const recording::Recording& source, bool is_window) {
  const recording::RecordingMeta& meta = source.meta();
  const recording::SideRecords& side = source.side();
  SpanResults r;
  r.is_window = is_window;
  r.start_ns = sums.span.lo;
  r.end_ns = sums.span.hi;
  r.span_s = seconds(sums.span.length());
  r.samples_read = sums.samples_read;
  r.samples_used = sums.samples_used;
  r.dropped_first = sums.dropped_first;
  r.dropped_broken = sums.dropped_broken;
  r.chip_covered_s = seconds(sums.covered_ns);
  const recording::TimeNs covered = sums.covered_ns;

  // Chip coverage: of the span, or of the time the counters were scheduled to run under duty cycling.
  const bool duty = meta.duty_on_ms > 0 && meta.duty_period_ms > 0;
  // A GPM window's samples can only cover the time after its lead
  // (docs/method.md#gpm-as-a-second-chip-source).
  double basis_ns = static_cast<double>(std::max<recording::TimeNs>(0, sums.span.length() - sums.lead_ns));
  if (duty) {
    bool has_on_event = false;
    for (const recording::CountersEvent& e : side.counters) has_on_event = has_on_event || e.on;
    basis_ns = has_on_event ? static_cast<double>(scheduled_ns(side.counters, sums.span))
                            : basis_ns * std::min(1.0, meta.duty_on_ms / meta.duty_period_ms);
    r.chip_scheduled_s = basis_ns * 1e-9;
  }
  if (basis_ns > 0) {
    r.chip_coverage_pct = 100.0 * static_cast<double>(covered) / basis_ns;
    if (r.chip_coverage_pct < kMinChipCoveragePct) {
      r.partial = true;
      r.partial_cause = PartialCause::low_coverage;
    }
  } else if (sums.span.length() > 0) {
    r.partial = true;
    r.partial_cause = PartialCause::not_scheduled;
  }

  // Columns.
  const std::size_t chip_units = meta.units.size();
  for (std::size_t i = 0; i < sums.units.size(); ++i) {
    const recording::ColumnDef& def = i < chip_units ? meta.units[i] : meta.engines[i - chip_units];
    r.units.push_back(summarize_column(def, sums.units[i], covered));
  }
  for (std::size_t i = 0; i < sums.diagnostics.size(); ++i)
    r.diagnostics.push_back(summarize_column(meta.diagnostics[i], sums.diagnostics[i], covered));

  // DIE-Util: the time-weighted busiest unit; only the mean is clamped.
  if (sums.span.length() <= 0) {
    r.die_util_missing = DieUtilMissing::empty_span;
  } else if (sums.samples_used == 0) {
    r.die_util_missing = DieUtilMissing::no_usable_samples;
  } else if (sums.die_ns == 0) {
    r.die_util_missing = DieUtilMissing::no_unit_value;
  } else {
    r.die_util_pct = std::clamp(sums.die_weighted / static_cast<double>(sums.die_ns), 0.0, 100.0);
  }
  choose_limiting_unit(r);

  // GPU-Util over the same time as the usable chip samples. With no usable chip time (the counters
  // held by another tool, or never scheduled) it is NVML's GPU-Util over the whole span, under the
  // whole-span coverage rule (docs/method.md#gpu-util-without-chip-samples).
  bool from_samples = sums.util.from_samples;
  bool from_polled = sums.util.from_polled;
  if (covered > 0) {
    r.gpu_util_coverage_pct =
        100.0 * static_cast<double>(sums.util.covered_ns) / static_cast<double>(covered);
    if (sums.util.covered_ns > 0) {
      r.gpu_util_pct = sums.util.weighted / static_cast<double>(sums.util.covered_ns);
    } else {
      r.gpu_util_missing = GpuUtilMissing::not_covered;
    }
  } else if (whole.coverage_pct >= kMinWholeSpanGpuUtilCoveragePct) {
    r.gpu_util_pct = whole.pct;
    from_samples = whole.from_samples;
    from_polled = whole.from_polled;
  } else {
    r.gpu_util_missing = GpuUtilMissing::no_usable_samples;
  }
  if (from_samples && from_polled)
    r.gpu_util_from = GpuUtilFrom::samples_and_polled;
  else if (from_samples)
    r.gpu_util_from = GpuUtilFrom::samples;
  else if (from_polled)
    r.gpu_util_from = GpuUtilFrom::polled;

  // A partial result also gets GPU-Util over the whole span, when NVML covered enough of it.
  r.gpu_util_whole_span_coverage_pct = whole.coverage_pct;
  if (r.partial && whole.coverage_pct >= kMinWholeSpanGpuUtilCoveragePct)
    r.gpu_util_whole_span_pct = whole.pct;

  // Counted rates: share-weighted counts over the time the samples that had them cover.
  for (std::size_t i = 0; i < meta.counts.size(); ++i) {
    r.rates_per_s[meta.counts[i].key] =
        sums.count_ns[i] > 0 ? sums.count_sum[i] / seconds(sums.count_ns[i]) : kNaN;
  }

  // Headline.
  HeadlineInputs in;
  in.gpu_util_pct = r.gpu_util_pct;
  in.gpu_util_coverage_pct = r.gpu_util_coverage_pct;
  in.die_util_pct = r.die_util_pct;
  in.gpu_util_resolution_pct = meta.gpu_util_resolution_pct;
  if (r.limiting_unit) {
    const recording::ColumnDef* def = column_of_unit(meta, *r.limiting_unit);
    if (def && !def->counted_by_gpu_util)
      in.uncounted_limiting_unit = def->label.empty() ? def->key : def->label;
  }
  r.headline = make_headline(in);
  return r;
}

// The first value no counter can produce (docs/method.md#which-chip-samples-are-used): not a finite
// number, below 0, or above kMaxPctOfPeak of the counter's peak.
SampleBreak first_impossible(SampleBreak::Part part, std::span<const double> values) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double v = values[i];
    if (!std::isfinite(v)) return {part, i, SampleBreak::Value::not_finite};
    if (v < 0) return {part, i, SampleBreak::Value::negative, v};
    if (v > kMaxPctOfPeak) return {part, i, SampleBreak::Value::above_peak, v};
  }
  return {};
}

// Where a chip sample is broken (docs/method.md#which-chip-samples-are-used): an empty span, or a
// unit or diagnostic that is not a finite number, is negative or is above kMaxPctOfPeak.
SampleBreak breakage_of(const recording::ChipSample& s) {
  if (s.end_ns <= s.start_ns) return {SampleBreak::Part::empty_span};
  if (SampleBreak b = first_impossible(SampleBreak::Part::unit, s.units)) return b;
  return first_impossible(SampleBreak::Part::diagnostic, s.diagnostics);
}

// The steady window from marks: the first start and the first stop after it.
WindowResults find_window(const recording::SideRecords& side, Interval run, std::optional<Interval>& window) {
  WindowResults w;
  if (side.marks.empty()) {
    w.finding = WindowFinding::no_markers;
    return w;
  }
  const recording::Mark* start = nullptr;
  for (const recording::Mark& m : side.marks)
    if (m.kind == recording::MarkKind::start) {
      start = &m;
      break;
    }
  if (!start) {
    w.finding = WindowFinding::stop_without_start;
    return w;
  }
  const recording::Mark* stop = nullptr;
  bool stop_earlier = false;
  for (const recording::Mark& m : side.marks) {
    if (m.kind != recording::MarkKind::stop) continue;
    if (m.ts_ns > start->ts_ns) {
      stop = &m;
      break;
    }
    stop_earlier = true;
  }
  if (!stop) {
    w.finding = stop_earlier ? WindowFinding::stop_before_start : WindowFinding::start_without_stop;
    return w;
  }
  Interval clipped{std::max(start->ts_ns, run.lo), std::min(stop->ts_ns, run.hi)};
  if (clipped.length() <= 0) {
    w.finding = WindowFinding::outside_run;
    return w;
  }
  w.found = true;
  w.finding = WindowFinding::markers;
  window = clipped;
  return w;
}

}  // namespace

std::string_view window_mode_name(WindowMode mode) {
  return mode == WindowMode::markers ? "markers" : "none";
}

std::optional<WindowMode> window_mode_from_name(std::string_view name) {
  for (WindowMode mode : {WindowMode::none, WindowMode::markers})
    if (window_mode_name(mode) == name) return mode;
  return std::nullopt;
}

Analysis analyze(const recording::Recording& source, const AnalysisOptions& options) {
  const recording::RecordingMeta& meta = source.meta();
  const recording::SideRecords& side = source.side();
  Analysis analysis;
  analysis.method = core::kMethodVersion;
  analysis.meta = meta;
  analysis.notes = side.notes;
  analysis.truncated_input = side.truncated;

  using Finding = AnalysisFinding::Kind;

  // The run: from the command's start to its end, or to the last record when it was cut off.
  Interval run{meta.start_ns, side.end ? side.end->ts_ns : side.last_ts_ns};
  if (!side.end) analysis.findings.push_back({Finding::no_end_record, run.hi, seconds(run.hi - run.lo)});
  if (side.truncated) analysis.findings.push_back({Finding::truncated, side.last_ts_ns});

  std::optional<Interval> window;
  if (options.window == WindowMode::markers) {
    analysis.window = find_window(side, run, window);
  } else {
    analysis.window.finding = WindowFinding::not_asked;
  }

  std::vector<SpanSums> spans;
  spans.emplace_back(run, meta);
  if (window) {
    spans.emplace_back(*window, meta);
    // docs/method.md#gpm-as-a-second-chip-source: a GPM reading describes the driver's refresh
    // interval, which can begin up to one refresh before its sample does.
    const bool gpm = std::any_of(meta.units.begin(), meta.units.end(), [](const recording::ColumnDef& c) {
      return c.source == recording::UnitSource::gpm;
    });
    if (gpm) spans.back().lead_ns = kGpmReadingLeadNs;
  }

  // The observers open their streams first: every stream opened before any is read shares the chip
  // samples' read of a recording file (docs/recording-format.md#reading-a-recording).
  if (options.before_samples) {
    Analysis bounds = analysis;
    bounds.run.start_ns = run.lo;
    bounds.run.end_ns = run.hi;
    if (window) {
      bounds.window.results.start_ns = window->lo;
      bounds.window.results.end_ns = window->hi;
    }
    options.before_samples(bounds);
  }

  // One pass over the chip samples, the hardware state's streams taken along with them.
  FirstSampleRule first_rule(side.counters);
  EngineMatcher engines(source, meta.engines.size());
  std::vector<Interval> span_intervals;
  span_intervals.reserve(spans.size());
  for (const SpanSums& sums : spans) span_intervals.push_back(sums.span);
  detail::HardwareReader hardware_reader(source, span_intervals);
  detail::UtilWindow util(detail::UtilBooker(source.stream<recording::UtilSample>(), source.name()),
                          span_intervals);
  const std::size_t n_units = meta.units.size();
  const std::size_t n_diags = meta.diagnostics.size();
  const std::size_t n_counts = meta.counts.size();

  const auto& observe = options.observe_sample;
  ObservedSample observed;

  PowerTimeline power(source);
  auto chip = source.stream<recording::ChipSample>();
  recording::ChipSample s;
  observed.sample = &s;
  long index = 0;
  recording::TimeNs prev_start = std::numeric_limits<recording::TimeNs>::min();
  std::int64_t outside = 0;
  std::int64_t impossible = 0;  // in the run, left out for a value no counter can produce
  while (chip && chip->next(s)) {
    ++index;
    if (s.start_ns < prev_start) {
      throw core::InputError(source.name(), 0,
                             "chip sample " + std::to_string(index) + " starts before the one before it",
                             "recordings keep each record kind in time order; re-record or repair the file");
    }
    prev_start = s.start_ns;
    hardware_reader.take_until(s.start_ns);
    if (s.units.size() != n_units || s.diagnostics.size() != n_diags || s.counts.size() != n_counts) {
      throw core::InputError(
          source.name(), 0, "chip sample " + std::to_string(index) + " has the wrong number of columns",
          "each chip sample needs one value per unit, diagnostic and count column of the metadata");
    }
    // The first sample after a counters start is dropped whether or not it is broken.
    const bool first = first_rule.is_first(s);
    const SampleBreak breakage = first ? SampleBreak{} : breakage_of(s);
    const bool broken = static_cast<bool>(breakage);

    bool in_any = false;
    for (SpanSums& sums : spans) {
      if (!sums.touches(s)) continue;
      in_any = true;
      ++sums.samples_read;
      if (first)
        ++sums.dropped_first;
      else if (broken)
        ++sums.dropped_broken;
      else
        ++sums.samples_used;
    }

    // An observer also sees samples outside the run matched to engines. That cannot move a match
    // the analysis makes: such a sample ends no later than the run starts, or starts after every
    // sample in it, and engine readings are matched in time order.
    const bool kept = !first && !broken;
    std::span<const double> engine_values;
    if (kept && (in_any || observe)) engine_values = engines.match(s.end_ns);
    const double die = die_util_of_sample(s.units, engine_values);
    if (observe) {
      observed.index = index - 1;
      observed.drop = first ? SampleDrop::first : broken ? SampleDrop::broken : SampleDrop::none;
      observed.broken = breakage;
      observed.in_run = in_any;
      observed.engines = engine_values;
      observed.die_util_pct = die;
      observe(observed);
    }
    if (!in_any) {
      ++outside;
      continue;
    }
    if (broken && breakage.part != SampleBreak::Part::empty_span &&
        breakage.value != SampleBreak::Value::not_finite)
      ++impossible;
    if (first || broken) continue;
    util.prepare(s.start_ns, s.end_ns);
    power.advance(s.start_ns);
    const bool stranded = std::isfinite(die) && die < kStrandedEnergyDieUtilPct;
    const double duration = static_cast<double>(s.end_ns - s.start_ns);

    for (SpanSums& sums : spans) {
      if (!sums.touches(s)) continue;
      const recording::TimeNs lo = std::max(s.start_ns, sums.span.lo);
      const recording::TimeNs hi = std::min(s.end_ns, sums.span.hi);
      if (hi <= lo) continue;
      const recording::TimeNs dt = hi - lo;
      sums.covered_ns += dt;
      if (std::isfinite(die)) {
        sums.die_weighted += die * static_cast<double>(dt);
        sums.die_ns += dt;
      }
      for (std::size_t u = 0; u < n_units; ++u) sums.units[u].add(s.units[u], dt);
      for (std::size_t e = 0; e < engine_values.size(); ++e)
        sums.units[n_units + e].add(engine_values[e], dt);
      for (std::size_t d = 0; d < n_diags; ++d) sums.diagnostics[d].add(s.diagnostics[d], dt);
      // A sample cut by the span counts for the share of it inside.
      const double share = static_cast<double>(dt) / duration;
      for (std::size_t c = 0; c < n_counts; ++c) {
        if (!std::isfinite(s.counts[c])) continue;
        sums.count_sum[c] += s.counts[c] * share;
        sums.count_ns[c] += dt;
      }
      util.overlap(lo, hi, sums.util);
      EnergySums energy;
      power.add(lo, hi, energy);
      sums.energy_chip.add(energy);
      if (stranded) sums.energy_stranded.add(energy);
    }
  }
  if (outside > 0) analysis.findings.push_back({Finding::samples_outside_run, run.lo, 0, outside});
  if (impossible > 0) analysis.findings.push_back({Finding::impossible_values, run.lo, 0, impossible});

  const std::vector<detail::UtilOverSpan> whole = util.finish_whole_spans();
  analysis.run = finish_span(spans[0], whole[0], source, false);
  std::vector<detail::HardwareSpan> hardware{{run, &analysis.run}};
  if (window) {
    analysis.window.results = finish_span(spans[1], whole[1], source, true);
    hardware.push_back({*window, &analysis.window.results});
  }
  hardware_reader.finish(hardware);
  for (std::size_t i = 0; i < hardware.size(); ++i) {
    const Interval span = hardware[i].span;
    hardware[i].out->energy = energy_figures(energy_sums_over(source, span.lo, span.hi), spans[i].energy_chip,
                                             spans[i].energy_stranded, span.length(), meta.format_version);
  }
  // docs/energy.md#joules-per-tflop: the FLOPs the program printed, each over the span it named.
  if (const ProgramFlops flops = program_flops(side.notes); flops.any()) {
    set_span_flops(analysis.run.energy, flops.run, FlopsMissing::window_only);
    if (window) set_span_flops(analysis.window.results.energy, flops.window, FlopsMissing::run_only);
  }
  analysis.hygiene = detail::hygiene_of(source);
  // What the host did while the GPU idled (docs/method.md#stranded-idle-explained).
  for (const detail::HardwareSpan& h : hardware) {
    const std::optional<int> idle = h.out->headline.idle_tenths;
    h.out->idle_explained = explain_idle(source, h.span.lo, h.span.hi, idle ? *idle / 10.0 : kNaN);
  }
  return analysis;
}

}  // namespace diescope::analysis
