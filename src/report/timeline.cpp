#include "timeline.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>

#include "diescope/analysis/analyze.hpp"
#include "diescope/core/error.hpp"
#include "diescope/metrics/catalog.hpp"
#include "diescope/recording/format.hpp"
#include "diescope/recording/host_streams.hpp"

namespace diescope::report::detail {

using nlohmann::json;

namespace {

// The descriptor of a recording column: its metric-model name when it parses (docs/metrics.md),
// else the column's key as the entity; percents of peak have a peak of 100.
metrics::MetricDescriptor column_descriptor(const recording::ColumnDef& c, int gpu_index) {
  metrics::MetricDescriptor d;
  auto name = metrics::parse_metric_name(c.metric);
  if (name) {
    d.name = *name;
  } else {
    d.name.entity = c.key;
    d.name.counter = c.key;
  }
  d.scope = metrics::Scope::gpu(gpu_index);
  if (c.unit == "pct") {
    d.unit = metrics::Unit::pct;
    d.peak = 100.0;
  } else if (c.unit == "bytes") {
    d.unit = metrics::Unit::bytes;
    d.no_peak_reason = "a raw count";
  } else {
    d.unit = metrics::Unit::count;
    d.no_peak_reason = "a raw count";
  }
  return d;
}

metrics::MetricDescriptor gpu_descriptor(std::string_view full_name, metrics::Unit unit,
                                         std::optional<double> peak, int gpu_index) {
  metrics::MetricDescriptor d;
  auto name = metrics::parse_metric_name(full_name);
  if (name) d.name = *name;
  d.unit = unit;
  d.peak = peak;
  if (!peak) d.no_peak_reason = "none";
  d.scope = metrics::Scope::gpu(gpu_index);
  return d;
}

std::string label_of(const recording::ColumnDef& c) {
  return c.label.empty() ? c.key : c.label;
}

// What people call a metric: the catalog's label, else its full name.
std::string metric_label(const metrics::MetricDescriptor& d) {
  const metrics::CatalogEntry* e = metrics::find_metric(d.full_name());
  return e ? std::string(e->label) : d.full_name();
}

std::string entity_title(const std::string& entity) {
  if (entity == "cpu") return "Host CPU";
  if (entity == "mem") return "Memory";
  if (entity == "disk") return "Disk";
  if (entity == "proc") return "The command's processes";
  return entity;
}

}  // namespace

std::vector<HostPanel> host_panels(const Timeline& timeline, std::size_t max_lines) {
  const std::vector<std::size_t> host = timeline.of(Role::host);
  std::vector<metrics::TaggedSeries> tagged;
  tagged.reserve(host.size());
  for (std::size_t i : host) tagged.push_back({timeline.series[i].descriptor, {}});
  auto mean_of = [&](std::size_t i) {
    double sum = 0;
    double n = 0;
    for (double v : timeline.series[i].envelope.mean)
      if (std::isfinite(v)) {
        sum += v;
        n += 1;
      }
    return n > 0 ? sum / n : -1.0;
  };
  std::vector<HostPanel> out;
  for (const metrics::Panel& panel : metrics::group_into_panels(tagged)) {
    HostPanel hp;
    const metrics::Unit unit = panel.unit;
    const std::string symbol = unit == metrics::Unit::pct ? "%" : metrics::display_scale(unit, 1).symbol;
    hp.title = entity_title(panel.entity) + (symbol.empty() ? "" : " (" + symbol + ")");
    hp.peak = panel.peak;
    std::vector<std::size_t> members;
    for (const metrics::PanelSeries& ps : panel.series) members.push_back(host[ps.index]);
    std::set<std::string> names, scopes;
    for (std::size_t i : members) {
      names.insert(timeline.series[i].key);
      scopes.insert(timeline.series[i].scope);
    }
    if (members.size() > max_lines) {
      std::vector<std::size_t> by_mean = members;
      std::stable_sort(by_mean.begin(), by_mean.end(),
                       [&](std::size_t a, std::size_t b) { return mean_of(a) > mean_of(b); });
      by_mean.resize(max_lines);
      std::vector<std::size_t> kept;  // in the panel's own order
      for (std::size_t i : members)
        if (std::find(by_mean.begin(), by_mean.end(), i) != by_mean.end()) kept.push_back(i);
      hp.left_out = members.size() - kept.size();
      members = kept;
    }
    for (std::size_t i : members) {
      const TimelineSeries& s = timeline.series[i];
      hp.series.push_back(i);
      if (names.size() > 1 && scopes.size() > 1)
        hp.legends.push_back(s.label + " · " + s.scope);
      else if (scopes.size() > 1)
        hp.legends.push_back(s.scope);
      else
        hp.legends.push_back(s.label);
    }
    out.push_back(std::move(hp));
  }
  return out;
}

std::vector<std::size_t> Timeline::of(Role role) const {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < series.size(); ++i)
    if (series[i].role == role) out.push_back(i);
  return out;
}

std::vector<int> Timeline::limiting_per_bin() const {
  const std::vector<std::size_t> shares = of(Role::limiting_share);
  const std::vector<std::size_t> die = of(Role::die_util);
  std::vector<int> out(grid.bins, -1);
  for (std::size_t k = 0; k < grid.bins; ++k) {
    // As for the run's limiting unit, a bin whose busiest unit stayed under kMinBusyPct of its peak
    // has none (docs/report.md#reporthtml).
    if (die.empty() || !(series[die.front()].envelope.mean[k] >= analysis::kMinBusyPct)) continue;
    double best = 0;
    for (std::size_t i = 0; i < shares.size(); ++i) {
      const double v = series[shares[i]].envelope.mean[k];
      if (std::isfinite(v) && (out[k] < 0 || v > best)) {
        best = v;
        out[k] = static_cast<int>(i);
      }
    }
  }
  return out;
}

std::size_t TimelineBuilder::add(Role role, std::string key, std::string label,
                                 const metrics::MetricDescriptor& d, const metrics::StreamSteps& steps) {
  auto id = pipelines_.front().add(d, steps);
  if (!id) throw std::logic_error("cannot draw " + label + ": " + id.reason());
  added_.push_back({role, std::move(key), std::move(label), {}, d, steps});
  return *id;
}

metrics::Pipeline TimelineBuilder::make_pipeline(const ReportInput& input, const TimelineOptions& options) {
  const json& results = input.report.at("results");
  const recording::TimeNs lo = results.at("start_ns").get<recording::TimeNs>();
  const recording::TimeNs hi = std::max(lo + 1, results.at("end_ns").get<recording::TimeNs>());
  const recording::RecordingMeta& meta = input.recording->meta();
  const std::int64_t min_step =
      options.no_finer_than_samples ? std::max<std::int64_t>(1, std::llround(meta.interval_ms * 1e6)) : 1;
  auto grid = metrics::Grid::covering(lo, hi, options.max_bins, std::min(min_step, hi - lo));
  if (!grid) throw std::logic_error("cannot draw the run: " + grid.reason());
  auto pipeline = metrics::Pipeline::make(*grid, options.smooth_s);
  if (!pipeline) {
    throw core::UsageError("--smooth: " + pipeline.reason(),
                           "give the smoothing kernel in milliseconds, above 0 (--smooth 100)");
  }
  return *pipeline;
}

void TimelineBuilder::add_streams(metrics::Pipeline& p) {
  for (const Added& a : added_) {
    auto id = p.add(a.descriptor, a.steps);
    if (!id) throw std::logic_error("cannot draw " + a.label + ": " + id.reason());
  }
  in_row_.push_back(p.set_row(row_ids_));
}

std::size_t TimelineBuilder::add_grid(const ReportInput& input, const TimelineOptions& options) {
  if (fed_) throw std::logic_error("timeline: a grid added after the first sample");
  metrics::Pipeline p = make_pipeline(input, options);
  add_streams(p);
  pipelines_.push_back(std::move(p));
  return pipelines_.size() - 1;
}

TimelineBuilder::TimelineBuilder(const ReportInput& input, const TimelineOptions& options) {
  const recording::RecordingMeta& meta = input.recording->meta();
  pipelines_.push_back(make_pipeline(input, options));

  const int gpu = meta.gpu.index;
  metrics::StreamSteps share;
  share.smooth = false;  // a state's share of time is not a measurement to smooth
  die_ = add(Role::die_util, "die_util", "DIE-Util", gpu_descriptor("", metrics::Unit::pct, 100.0, gpu));
  gpu_ = add(Role::gpu_util, "gpu_util", "GPU-Util", gpu_descriptor("", metrics::Unit::pct, 100.0, gpu));
  for (const recording::ColumnDef& c : meta.units)
    units_.push_back(add(Role::unit, c.key, label_of(c), column_descriptor(c, gpu)));
  for (const recording::ColumnDef& c : meta.engines)
    engines_.push_back(add(Role::engine, c.key, label_of(c), column_descriptor(c, gpu)));
  for (const recording::ColumnDef& c : meta.diagnostics)
    diags_.push_back(add(Role::diagnostic, c.key, label_of(c), column_descriptor(c, gpu)));
  metrics::StreamSteps rate;
  rate.to_rate = true;
  for (const recording::ColumnDef& c : meta.counts)
    rates_.push_back(add(Role::rate, c.key, label_of(c), column_descriptor(c, gpu), rate));
  for (const recording::ColumnDef& c : meta.units)
    shares_.push_back(add(Role::limiting_share, c.key, label_of(c),
                          gpu_descriptor("", metrics::Unit::pct, 100.0, gpu), share));
  for (const recording::ColumnDef& c : meta.engines)
    shares_.push_back(add(Role::limiting_share, c.key, label_of(c),
                          gpu_descriptor("", metrics::Unit::pct, 100.0, gpu), share));
  // sample() hands each kind's columns to consecutive streams in one call.
  for (const std::vector<std::size_t>* ids : {&units_, &engines_, &diags_, &shares_})
    for (std::size_t i = 1; i < ids->size(); ++i)
      if ((*ids)[i] != (*ids)[0] + i)
        throw std::logic_error("timeline: a kind's streams are not consecutive");
  sm_clock_ = add(Role::sm_clock, "sm_clock", "SM clock",
                  gpu_descriptor("gpu__clock_sm", metrics::Unit::mhz, std::nullopt, gpu));
  mem_clock_ = add(Role::mem_clock, "mem_clock", "memory clock",
                   gpu_descriptor("gpu__clock_mem", metrics::Unit::mhz, std::nullopt, gpu));
  power_ = add(Role::power_limit, "power_limit", "power limit",
               gpu_descriptor("gpu__power_limit", metrics::Unit::watts, std::nullopt, gpu));
  power_draw_ = add(Role::power_draw, "power_draw", "power draw",
                    gpu_descriptor("gpu__power_draw", metrics::Unit::watts, std::nullopt, gpu));
  for (int b = 0; b < 64; ++b) {
    const std::uint64_t bit = std::uint64_t{1} << b;
    const std::vector<std::string> names = recording::throttle_reason_names(bit);
    if (names.empty() || names.front().rfind("0x", 0) == 0) continue;  // bits NVML does not define
    throttle_bits_.push_back(bit);
    throttle_.push_back(add(Role::throttle, names.front(), names.front(),
                            gpu_descriptor("", metrics::Unit::pct, 100.0, gpu), share));
  }
  // Host streams: whatever the recording declares, drawn from each descriptor alone.
  recording::HostData names;
  names.tasks = input.recording->side().host_tasks;
  for (const recording::HostStream& h : input.recording->side().host_streams) {
    host_[h.id] = add(Role::host, h.descriptor.full_name(), metric_label(h.descriptor), h.descriptor);
    added_.back().scope = names.scope_label(h.descriptor.scope);
  }
  share_values_.assign(shares_.size(), 0.0);
  row_ids_.push_back(die_);
  for (const std::vector<std::size_t>* ids : {&units_, &engines_, &diags_, &shares_})
    row_ids_.insert(row_ids_.end(), ids->begin(), ids->end());
  row_values_.assign(row_ids_.size(), 0.0);
  in_row_.push_back(pipelines_.front().set_row(row_ids_));
  others_ = std::make_unique<Others>(*input.recording);
}

void TimelineBuilder::sample(const WalkedSample& w) {
  fed_ = true;
  take_until(w.sample->start_ns);
  if (w.verdict.use != SampleUse::used) return;
  const recording::ChipSample& s = *w.sample;
  const recording::TimeNs a = s.start_ns, b = s.end_ns;
  std::size_t busiest = shares_.size();
  double busiest_value = 0;
  for (std::size_t i = 0; i < s.units.size() && i < units_.size(); ++i) {
    if (std::isfinite(s.units[i]) && (busiest == shares_.size() || s.units[i] > busiest_value)) {
      busiest = i;
      busiest_value = s.units[i];
    }
  }
  for (std::size_t i = 0; i < w.engines.size() && i < engines_.size(); ++i) {
    if (std::isfinite(w.engines[i]) && (busiest == shares_.size() || w.engines[i] > busiest_value)) {
      busiest = units_.size() + i;
      busiest_value = w.engines[i];
    }
  }
  // The row's values: what a sample lacks is NaN, which reaches no bin, as a column not handed over.
  bool row_filled = false;
  auto fill_row = [&]() {
    if (row_filled) return;
    row_filled = true;
    double* v = row_values_.data();
    std::fill(row_values_.begin(), row_values_.end(), analysis::kNaN);
    *v++ = w.die_util_pct;
    auto put = [&](std::span<const double> values, std::size_t n) {
      std::copy_n(values.begin(), std::min(values.size(), n), v);
      v += n;
    };
    put(s.units, units_.size());
    put(w.engines, engines_.size());
    put(s.diagnostics, diags_.size());
    // Every share is 0 between samples; only the busiest unit's is 100 while it is handed over.
    if (busiest < shares_.size()) {
      std::fill_n(v, shares_.size(), 0.0);
      v[busiest] = 100.0;
    }
  };
  for (std::size_t g = 0; g < pipelines_.size(); ++g) {
    metrics::Pipeline& p = pipelines_[g];
    for (std::size_t i = 0; i < s.counts.size() && i < rates_.size(); ++i)
      p.span(rates_[i], a, b, s.counts[i]);
    if (in_row_[g]) {
      fill_row();
      p.row(a, b, row_values_);
      continue;
    }
    // The streams of each kind of column were added one after another, so their ids run on: one
    // spans() call takes a kind's columns.
    auto columns = [&](const std::vector<std::size_t>& ids, std::span<const double> values) {
      const std::size_t n = std::min(values.size(), ids.size());
      if (n > 0) p.spans(ids.front(), a, b, values.first(n));
    };
    p.span(die_, a, b, w.die_util_pct);
    columns(units_, s.units);
    columns(engines_, w.engines);
    columns(diags_, s.diagnostics);
    if (busiest < shares_.size()) {
      share_values_[busiest] = 100.0;
      columns(shares_, share_values_);
      share_values_[busiest] = 0.0;
    }
  }
}

// GPU-Util, clocks, power, throttle reasons and host streams, taken in one time order: opened with
// the analysis's streams and taken along with the chip samples, they share one read of a recording
// file (docs/recording-format.md#reading-a-recording) where one after another each would read it
// whole. Each stream goes to its own series, so the order between streams, and between them and the
// chip samples' series, changes no value.
struct TimelineBuilder::Others {
  explicit Others(const recording::Recording& source)
      : util(source),
        clocks(source.stream<recording::ClockReading>()),
        power(source.stream<recording::PowerLimitReading>()),
        throttle(source.stream<recording::ThrottleReading>()),
        host(source.stream<recording::HostSample>()) {}
  analysis::BookedUtilReader util;
  recording::StreamPtr<recording::ClockReading> clocks;
  recording::StreamPtr<recording::PowerLimitReading> power;
  recording::StreamPtr<recording::ThrottleReading> throttle;
  recording::StreamPtr<recording::HostSample> host;
  analysis::BookedUtil booked;
  recording::ClockReading c;
  recording::PowerLimitReading r;
  recording::ThrottleReading t;
  recording::HostSample h;
  bool started = false;
  bool have_util = false, have_clock = false, have_power = false, have_throttle = false, have_host = false;
  // A reason holds from one reading to the next (at most a second, as GPU-Util's samples are booked).
  std::optional<recording::ThrottleReading> previous_throttle;
  // A rate covers the time since its stream's previous value; a level is a point.
  std::map<std::int64_t, recording::TimeNs> previous_host;
};

TimelineBuilder::~TimelineBuilder() = default;

void TimelineBuilder::take(recording::TimeNs until) {
  Others& o = *others_;
  if (!o.started) {
    o.have_util = o.util.next(o.booked);
    o.have_clock = o.clocks->next(o.c);
    o.have_power = o.power->next(o.r);
    o.have_throttle = o.throttle->next(o.t);
    o.have_host = o.host->next(o.h);
    o.started = true;
  }
  auto book = [&](const recording::ThrottleReading& from, recording::TimeNs to) {
    const recording::TimeNs end = std::min(to, from.ts_ns + recording::kNsPerSecond);
    for (std::size_t i = 0; i < throttle_.size(); ++i) {
      const double v = from.mask ? ((*from.mask & throttle_bits_[i]) != 0 ? 100.0 : 0.0) : analysis::kNaN;
      if (end > from.ts_ns) each([&](metrics::Pipeline& p) { p.span(throttle_[i], from.ts_ns, end, v); });
    }
  };
  auto take_host = [&]() {
    for (const recording::HostValue& v : o.h.values) {
      auto it = host_.find(v.id);
      if (it == host_.end()) continue;
      const std::size_t id = it->second;
      if (metrics::value_covers_interval(pipelines_.front().descriptor(id))) {
        auto prev = o.previous_host.find(v.id);
        if (prev != o.previous_host.end() && prev->second < o.h.ts_ns) {
          const recording::TimeNs from = prev->second;
          each([&](metrics::Pipeline& p) { p.span(id, from, o.h.ts_ns, v.value); });
        } else {
          each([&](metrics::Pipeline& p) { p.point(id, o.h.ts_ns, v.value); });
        }
        o.previous_host[v.id] = o.h.ts_ns;
      } else {
        each([&](metrics::Pipeline& p) { p.point(id, o.h.ts_ns, v.value); });
      }
    }
  };
  constexpr recording::TimeNs kNone = std::numeric_limits<recording::TimeNs>::max();
  for (;;) {
    const recording::TimeNs next =
        std::min({o.have_util ? o.booked.hi : kNone, o.have_clock ? o.c.ts_ns : kNone,
                  o.have_power ? o.r.ts_ns : kNone, o.have_throttle ? o.t.ts_ns : kNone,
                  o.have_host ? o.h.ts_ns : kNone});
    next_ns_ = next;
    if (!(o.have_util || o.have_clock || o.have_power || o.have_throttle || o.have_host) || next > until)
      break;
    if (o.have_util && o.booked.hi == next) {
      each([&](metrics::Pipeline& p) { p.span(gpu_, o.booked.lo, o.booked.hi, o.booked.pct); });
      o.have_util = o.util.next(o.booked);
    } else if (o.have_clock && o.c.ts_ns == next) {
      each([&](metrics::Pipeline& p) {
        p.point(sm_clock_, o.c.ts_ns, o.c.sm_mhz);
        p.point(mem_clock_, o.c.ts_ns, o.c.mem_mhz);
      });
      o.have_clock = o.clocks->next(o.c);
    } else if (o.have_power && o.r.ts_ns == next) {
      each([&](metrics::Pipeline& p) {
        p.point(power_, o.r.ts_ns, o.r.limit_w);
        p.point(power_draw_, o.r.ts_ns, o.r.draw_w);
      });
      o.have_power = o.power->next(o.r);
    } else if (o.have_throttle && o.t.ts_ns == next) {
      if (o.previous_throttle) book(*o.previous_throttle, o.t.ts_ns);
      o.previous_throttle = o.t;
      o.have_throttle = o.throttle->next(o.t);
    } else {
      take_host();
      o.have_host = o.host->next(o.h);
    }
  }
  if (until == kNone && o.previous_throttle)
    book(*o.previous_throttle, o.previous_throttle->ts_ns + 100 * recording::kNsPerMs);
}

Timeline TimelineBuilder::finish(const ReportInput& input) {
  return std::move(finish_all(input).front());
}

std::vector<Timeline> TimelineBuilder::finish_all(const ReportInput&) {
  take(std::numeric_limits<recording::TimeNs>::max());
  others_.reset();
  next_ns_ = std::numeric_limits<recording::TimeNs>::max();

  std::vector<Timeline> timelines;
  for (metrics::Pipeline& p : pipelines_) {
    Timeline out;
    out.grid = p.grid();
    std::vector<metrics::EnvelopeSeries> all = p.finish();
    for (std::size_t i = 0; i < all.size(); ++i) {
      const metrics::Envelope& e = all[i].envelope;
      const Role role = added_[i].role;
      const bool any = std::any_of(e.mean.begin(), e.mean.end(), [](double v) { return std::isfinite(v); });
      // Keep every column of the recording, even one without a value (its panel says so); leave out
      // what is optional by nature.
      const bool optional_series = role == Role::sm_clock || role == Role::mem_clock ||
                                   role == Role::power_limit || role == Role::power_draw;
      if (role == Role::throttle &&
          std::none_of(e.max.begin(), e.max.end(), [](double v) { return std::isfinite(v) && v > 0; }))
        continue;
      if (optional_series && !any) continue;
      out.series.push_back({role, added_[i].key, added_[i].label, added_[i].scope, all[i].descriptor, e});
    }
    timelines.push_back(std::move(out));
  }
  pipelines_.clear();
  return timelines;
}

std::size_t SharedTimeline::join(const ReportInput& input, const TimelineOptions& options) {
  if (!builder_)
    builder_ = std::make_unique<TimelineBuilder>(input, options);
  else
    builder_->add_grid(input, options);
  return joined_++;
}

Timeline SharedTimeline::finish(std::size_t who, const ReportInput& input) {
  if (taken_ == 0) {
    done_ = builder_->finish_all(input);
    builder_.reset();
  }
  Timeline out = std::move(done_.at(who));
  if (++taken_ == joined_) {  // every renderer has its own: ready for another walk
    done_.clear();
    joined_ = taken_ = 0;
  }
  return out;
}

}  // namespace diescope::report::detail
