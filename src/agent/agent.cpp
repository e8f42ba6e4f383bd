#include "diescope/agent/agent.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

#include "diescope/analysis/analyze.hpp"
#include "diescope/collect/duty.hpp"
#include "diescope/core/error.hpp"

namespace diescope::agent {

namespace {

recording::TimeNs ms_to_ns(double ms) {
  return static_cast<recording::TimeNs>(std::llround(ms * 1e6));
}

// Records from the source are trusted only inside [period start, now + this]: anything else was
// timed before a clock step (or by a sampler child still draining from before one).
constexpr recording::TimeNs kFutureSlackNs = core::kMaxClockSkewNs;

template <typename R>
void sort_by_ts(std::vector<R>& v) {
  std::stable_sort(v.begin(), v.end(), [](const R& a, const R& b) { return a.ts_ns < b.ts_ns; });
}

// Moves the readings timed after `end` to `next`; keeps the last one at or before `end` in both,
// so the next period knows what held at its start (GPU-Util booking, clocks that did not change).
template <typename R>
void split_readings(std::vector<R>& current, std::vector<R>& next, recording::TimeNs end) {
  sort_by_ts(current);
  auto first_after = std::find_if(current.begin(), current.end(), [&](const R& r) { return r.ts_ns > end; });
  if (first_after != current.begin()) next.push_back(*(first_after - 1));
  next.insert(next.end(), std::make_move_iterator(first_after), std::make_move_iterator(current.end()));
  current.erase(first_after, current.end());
}

std::string seconds_text(recording::TimeNs ns) {
  return fmt::format("{:+.3f} s", static_cast<double>(ns) * 1e-9);
}

}  // namespace

// docs/agent.md#what-a-capture-holds: a record's chip samples keep the session's interval while a
// capture samples at a shorter one.
void fold_short_samples(std::vector<recording::OwnedChipSample>& samples, recording::TimeNs interval_ns) {
  if (interval_ns <= 0 || samples.empty()) return;
  std::vector<recording::OwnedChipSample> out;
  out.reserve(samples.size());
  std::optional<recording::OwnedChipSample> acc;
  std::vector<double> weights;  // per unit and diagnostic column: the time its values covered
  auto add = [&](const recording::OwnedChipSample& s) {
    const auto span = static_cast<double>(s.end_ns - s.start_ns);
    if (!acc) {
      acc = recording::OwnedChipSample{s.start_ns, s.end_ns, std::vector<double>(s.units.size(), 0.0),
                                       std::vector<double>(s.diagnostics.size(), 0.0),
                                       std::vector<double>(s.counts.size(), 0.0)};
      weights.assign(s.units.size() + s.diagnostics.size(), 0.0);
    }
    acc->end_ns = s.end_ns;
    auto mean_part = [&](const std::vector<double>& from, std::vector<double>& to, std::size_t offset) {
      for (std::size_t i = 0; i < from.size() && i < to.size(); ++i)
        if (std::isfinite(from[i])) {
          to[i] += from[i] * span;
          weights[offset + i] += span;
        }
    };
    mean_part(s.units, acc->units, 0);
    mean_part(s.diagnostics, acc->diagnostics, acc->units.size());
    for (std::size_t i = 0; i < s.counts.size() && i < acc->counts.size(); ++i) acc->counts[i] += s.counts[i];
  };
  auto flush = [&] {
    if (!acc) return;
    for (std::size_t i = 0; i < acc->units.size(); ++i)
      acc->units[i] = weights[i] > 0 ? acc->units[i] / weights[i] : analysis::kNaN;
    for (std::size_t i = 0; i < acc->diagnostics.size(); ++i) {
      const double w = weights[acc->units.size() + i];
      acc->diagnostics[i] = w > 0 ? acc->diagnostics[i] / w : analysis::kNaN;
    }
    out.push_back(std::move(*acc));
    acc.reset();
  };
  for (recording::OwnedChipSample& s : samples) {
    const recording::TimeNs span = s.end_ns - s.start_ns;
    const bool same_shape =
        !acc || (s.units.size() == acc->units.size() && s.diagnostics.size() == acc->diagnostics.size() &&
                 s.counts.size() == acc->counts.size());
    if (span * 2 >= interval_ns || span <= 0) {  // a sample at the session's interval (or a setup) stays
      flush();
      out.push_back(std::move(s));
      continue;
    }
    // Only back-to-back samples fold together: a gap (a lost stretch, a restart) ends the span.
    if (acc && (!same_shape || s.start_ns < acc->end_ns || s.start_ns - acc->end_ns > span)) flush();
    add(s);
    if (acc->end_ns - acc->start_ns >= interval_ns) flush();
  }
  flush();
  samples = std::move(out);
}

void validate_settings(const AgentSettings& s) {
  if (!(s.poll_ms >= 10) || !std::isfinite(s.poll_ms)) {
    throw core::UsageError("--drain-ms must be at least 10 ms", "e.g. --drain-ms 1000 (the default)");
  }
  if (!(s.duty_period_ms > 0) || !std::isfinite(s.duty_period_ms)) {
    throw core::UsageError("--duty-period-ms must be a positive number of milliseconds",
                           "e.g. --duty-period-ms 60000");
  }
  if (!(s.duty_on_ms > 0) || !std::isfinite(s.duty_on_ms)) {
    throw core::UsageError("--duty-on-ms must be a positive number of milliseconds",
                           "e.g. --duty-on-ms 2000; set it to the period for counters always on");
  }
  if (s.duty_period_ms < s.poll_ms) {
    throw core::UsageError(
        "the duty period (--duty-period-ms) is shorter than the drain interval (--drain-ms)",
        "make the period at least one drain long, e.g. --duty-period-ms 60000 --drain-ms 1000");
  }
}

struct Agent::GpuState {
  std::size_t index = 0;
  recording::RecordingMeta meta;  // the source's, with the agent's duty settings
  std::unique_ptr<recording::MemoryRecording> period;
  std::unique_ptr<recording::MemoryRecording> staged;  // records already timed in the next period
  recording::TimeNs period_start = 0;
  recording::TimeNs period_end = 0;

  bool requested_on = false;  // the agent asked for the counters and has not asked them off
  bool window_done = false;   // this period's window has been switched off
  std::optional<recording::TimeNs> window_start;  // the first confirmed start in this period
  std::optional<recording::TimeNs> window_end;    // when the agent switched them off

  bool hot = false;  // the counters may be on: from the agent's request to the confirmed stop
  recording::TimeNs hot_since = 0;
  recording::TimeNs on_ns = 0;  // measured on-time inside this period

  recording::TimeNs hold_until = 0;  // a capture keeps the counters on until then
  bool window_observed = false;      // this period's window figures are in status().last_window
  // A capture restarted the sampler at another interval: its confirmed stop does not end the on-time
  // (the next confirmed start, or a stop with a reason, clears it).
  bool restart_bridge = false;

  std::optional<PowerOverPeriod> power;  // the host's power source over this period so far
  std::optional<Restart> restart;        // for the next record
  std::vector<std::string> notes;        // for this period's record
};

Agent::Agent(collect::Feed& source, core::Clock& clock, AgentSettings settings)
    : source_(source), clock_(clock), settings_(std::move(settings)) {
  validate_settings(settings_);
  const core::ClockReadings c = clock_.read();
  watch_.check(c);
  now_ns_ = source_.now_ns(c);
  read_power();
  batches_.resize(source_.gpu_count());
  for (std::size_t i = 0; i < source_.gpu_count(); ++i) {
    auto g = std::make_unique<GpuState>();
    g->index = i;
    g->meta = source_.meta(i);
    g->meta.run_type = "sustained";
    if (always_on()) {
      g->meta.duty_on_ms = 0;
      g->meta.duty_period_ms = 0;
    } else {
      g->meta.duty_on_ms = settings_.duty_on_ms;
      g->meta.duty_period_ms = settings_.duty_period_ms;
    }
    g->meta.drain_ms = settings_.poll_ms;
    GpuStatus st;
    st.index = g->meta.gpu.index;
    st.uuid = g->meta.gpu.uuid;
    st.model = g->meta.gpu.model;
    st.hostname = g->meta.host;
    st.pci_bus_id = g->meta.gpu.pci_bus_id;
    for (const recording::ColumnDef& c2 : g->meta.units) {
      st.unit_keys.push_back(c2.key);
      st.unit_labels.push_back(c2.label.empty() ? c2.key : c2.label);
    }
    for (const recording::ColumnDef& c2 : g->meta.engines) {
      st.unit_keys.push_back(c2.key);
      st.unit_labels.push_back(c2.label.empty() ? c2.key : c2.label);
    }
    status_.push_back(std::move(st));
    start_period(*g, now_ns_);
    gpus_.push_back(std::move(g));
  }
  for (auto& g : gpus_) schedule(*g, now_ns_);
  next_poll_ns_ = now_ns_ + ms_to_ns(settings_.poll_ms);
}

Agent::~Agent() = default;

void Agent::read_power() {
  if (settings_.read_power) {
    last_power_ = settings_.read_power();
    return;
  }
  if (!power_reader_) power_reader_ = std::make_unique<PowerSourceReader>();
  last_power_ = power_reader_->read();
}

bool Agent::always_on() const {
  return !collect::DutyCycle{settings_.duty_on_ms, settings_.duty_period_ms}.cycles();
}

void Agent::start_period(GpuState& g, recording::TimeNs start) {
  g.period = g.staged ? std::move(g.staged) : std::make_unique<recording::MemoryRecording>();
  g.staged.reset();
  g.period->meta_data = g.meta;
  g.period->meta_data.start_ns = start;
  g.period_start = start;
  g.period_end = start + ms_to_ns(settings_.duty_period_ms);
  g.window_done = false;
  g.window_start.reset();
  g.window_end.reset();
  g.window_observed = false;
  g.on_ns = 0;
  g.power.reset();
  if (last_power_) g.power = fold_power(std::nullopt, *last_power_);
  if (g.hot) g.hot_since = start;
  // Counters left on across the boundary (always on, or held for a capture) keep their window going
  // from the start.
  if (g.requested_on && (always_on() || g.hold_until > start)) g.window_start = start;
}

void Agent::absorb(GpuState& g, collect::GpuBatch& batch) {
  const recording::TimeNs lo = g.period_start;
  const recording::TimeNs hi = now_ns_ + kFutureSlackNs;
  recording::MemoryRecording& p = *g.period;
  fold_short_samples(batch.list<recording::ChipSample>(), ms_to_ns(g.meta.interval_ms));
  auto inside = [&](recording::TimeNs ts) { return ts >= lo && ts <= hi; };
  recording::for_each_kind<recording::StreamKinds>([&]<typename Record>(std::type_identity<Record>) {
    for (auto& r : batch.list<Record>()) {
      bool keep = false;
      if constexpr (std::is_same_v<Record, recording::ChipSample>)
        keep = r.end_ns > lo && r.end_ns <= hi;  // by its end
      else
        keep = inside(r.ts_ns);
      if (keep) p.list<Record>().push_back(std::move(r));
    }
  });
  for (const recording::CountersEvent& e : batch.counters) {
    if (!e.on && g.restart_bridge && e.reason.empty() && g.hot) {
      g.restart_bridge = false;  // the sampler stopped to start again at a capture's interval
      continue;
    }
    if (e.on) g.restart_bridge = false;
    if (e.on) {
      if (!g.hot) {  // a start the agent did not ask for in this stretch (a sampler restart)
        g.hot = true;
        g.hot_since = std::max(e.ts_ns, lo);
      }
      if (!g.requested_on || g.window_done || !inside(e.ts_ns)) continue;
      if (!g.window_start) g.window_start = e.ts_ns;
      p.side_records.counters.push_back(e);  // the sample after it spans a setup and is dropped
    } else {
      if (g.hot) {
        const recording::TimeNs from = std::max(g.hot_since, lo);
        const recording::TimeNs to = std::min(std::max(e.ts_ns, from), std::max(now_ns_, from));
        g.on_ns += to - from;
        g.hot = false;
      }
      // A stop the agent did not ask for (a crash) stays out of the schedule, so the lost time
      // lowers the chip coverage instead of shrinking what the counters were scheduled to cover.
      // Only such a stop has a reason.
      if (!e.reason.empty()) g.notes.push_back("counters: stopped: " + e.reason);
    }
  }
  for (auto& n : batch.notes) {
    if (n.ts_ns < lo) n.ts_ns = lo;
    p.side_records.notes.push_back(std::move(n));
  }
  batch.clear();
}

std::optional<AgentRecord> Agent::close_period(GpuState& g, recording::TimeNs end,
                                               const std::vector<std::string>& extra_notes) {
  recording::MemoryRecording& p = *g.period;
  auto next = std::make_unique<recording::MemoryRecording>();

  // Chip samples: those that start at or after the end belong to the next period; one that
  // straddles it goes to both (each analysis counts the part inside its own span).
  auto& chip = p.list<recording::ChipSample>();
  auto& next_chip = next->list<recording::ChipSample>();
  std::stable_sort(chip.begin(), chip.end(),
                   [](const recording::OwnedChipSample& a, const recording::OwnedChipSample& b) {
                     return a.start_ns < b.start_ns;
                   });
  std::vector<recording::OwnedChipSample> keep;
  keep.reserve(chip.size());
  for (auto& s : chip) {
    if (s.start_ns >= end) {
      next_chip.push_back(std::move(s));
    } else {
      if (s.end_ns > end) next_chip.push_back(s);
      keep.push_back(std::move(s));
    }
  }
  chip = std::move(keep);
  // Every other stream: readings, of which the next period also keeps the one that held at its start.
  recording::for_each_kind<recording::StreamKinds>([&]<typename Record>(std::type_identity<Record>) {
    if constexpr (!std::is_same_v<Record, recording::ChipSample>)
      split_readings(p.list<Record>(), next->list<Record>(), end);
  });
  // Except the process lists: the next period counts only the holders seen inside it (hygiene takes
  // the most over every reading).
  auto& next_process = next->list<recording::ProcessReading>();
  if (!next_process.empty() && next_process.front().ts_ns <= end) next_process.erase(next_process.begin());
  sort_by_ts(p.side_records.counters);
  {
    auto& ev = p.side_records.counters;
    auto it =
        std::find_if(ev.begin(), ev.end(), [&](const recording::CountersEvent& e) { return e.ts_ns > end; });
    next->side_records.counters.assign(it, ev.end());
    ev.erase(it, ev.end());
  }
  sort_by_ts(p.side_records.notes);
  {
    auto& nv = p.side_records.notes;
    auto it = std::find_if(nv.begin(), nv.end(), [&](const recording::Note& n) { return n.ts_ns > end; });
    next->side_records.notes.assign(std::make_move_iterator(it), std::make_move_iterator(nv.end()));
    nv.erase(it, nv.end());
  }

  // Measured on-time up to the end; counters still on carry into the next period.
  if (g.hot) {
    const recording::TimeNs from = std::max(g.hot_since, g.period_start);
    if (end > from) g.on_ns += end - from;
    g.hot_since = end;
  }

  // The chip window is the analysis's steady window.
  const bool had_window = g.window_start.has_value();
  if (had_window) {
    const recording::TimeNs stop = g.window_end ? std::min(*g.window_end, end) : end;
    p.side_records.marks.push_back(recording::Mark{*g.window_start, recording::MarkKind::start});
    p.side_records.marks.push_back(
        recording::Mark{std::max(stop, *g.window_start), recording::MarkKind::stop});
    if (g.window_end && *g.window_end <= end)
      p.side_records.counters.push_back(recording::CountersEvent{*g.window_end, false, ""});
    sort_by_ts(p.side_records.counters);
  }
  p.side_records.end = recording::RunEnd{end, 0, recording::RunEnding::period_end()};
  p.side_records.last_ts_ns = end;
  p.meta_data.start_ns = g.period_start;

  RecordContext ctx;
  ctx.counters_on_s = static_cast<double>(g.on_ns) * 1e-9;
  ctx.poll_ms = settings_.poll_ms;
  ctx.source = source_.kind();
  ctx.restart = g.restart;
  ctx.cost_table = settings_.cost_table;
  ctx.power = g.power.value_or(PowerOverPeriod::unreadable);
  ctx.extra_notes = g.notes;
  if (!had_window) ctx.extra_notes.emplace_back("counters: they did not come on in this period");
  for (const auto& n : extra_notes) ctx.extra_notes.push_back(n);

  const analysis::Analysis analysis = analysis::analyze(p);
  AgentRecord record = make_record(analysis, ctx);
  if (had_window && !g.window_observed) {
    // Always on (or a window cut short by the period's end): the record is the window's figures.
    WindowFigures w;
    w.start_ns = *g.window_start;
    w.end_ns = std::max(g.window_end ? std::min(*g.window_end, end) : end, *g.window_start);
    w.die_util_pct = record.die_util_pct;
    w.gpu_util_pct = record.gpu_util_pct;
    w.gap_pct = record.gap_pct;
    w.stranded_pct = record.stranded_pct;
    w.stranded_idle_pct = record.stranded_idle_pct;
    GpuStatus& s = status_[g.index];
    w.seq = s.last_window ? s.last_window->seq + 1 : 1;
    s.last_window = w;
    g.window_observed = true;
  }

  GpuStatus& st = status_[g.index];
  st.counters_on_total_s += record.counters_on_s;
  // A period without a figure adds nothing: the counters stay monotonic (docs/energy.md#in-the-agent).
  if (std::isfinite(record.energy_j)) st.energy_total_j += record.energy_j;
  if (std::isfinite(record.stranded_energy_j)) st.stranded_energy_total_j += record.stranded_energy_j;
  g.restart.reset();
  g.notes.clear();
  g.staged = std::move(next);
  return record;
}

void Agent::restart_all(const core::ClockEvent& event, recording::TimeNs now) {
  for (auto& gp : gpus_) {
    GpuState& g = *gp;
    if (g.requested_on) {
      source_.set_counters(g.index, false, now);
      g.requested_on = false;
    }
    Restart r;
    r.step_ns = event.step_ns;
    r.at_ns = event.at_realtime_ns;
    if (event.kind == core::ClockEvent::Kind::suspend) {
      r.kind = "suspend";
      r.text = "the machine was suspended for " + seconds_text(event.step_ns).substr(1) +
               "; the record in progress was abandoned and this one started afresh";
    } else {
      r.kind = "wall_clock_step";
      r.text =
          "the wall clock stepped by " + seconds_text(event.step_ns) +
          " against the monotonic clock; the record in progress was abandoned and this one started afresh";
    }
    g.restart = r;
    g.notes.clear();
    g.staged.reset();
    g.hot = false;
    ++status_[g.index].clock_restarts;
    start_period(g, now);
  }
}

// The source's chip columns changed (PM sampling <-> NVML GPM): the period so far becomes a record
// with the old columns, and a new one starts with the new (docs/agent.md#beside-other-profilers).
void Agent::switch_columns(GpuState& g, recording::TimeNs at, const std::string& why,
                           std::vector<AgentRecord>& records) {
  if (at > g.period_start) {
    if (auto r = close_period(g, at, {"agent: the chip source changes at the end of this record: " + why})) {
      ++status_[g.index].records;
      status_[g.index].last = *r;
      records.push_back(std::move(*r));
    }
  }
  // Nothing with the old columns may reach the new record.
  if (g.staged) g.staged->list<recording::ChipSample>().clear();
  const recording::RecordingMeta& fresh = source_.meta(g.index);
  g.meta.unit_table = fresh.unit_table;
  g.meta.units = fresh.units;
  g.meta.diagnostics = fresh.diagnostics;
  g.meta.counts = fresh.counts;
  g.meta.interval_ms = fresh.interval_ms;
  GpuStatus& st = status_[g.index];
  st.unit_keys.clear();
  st.unit_labels.clear();
  for (const auto* columns : {&g.meta.units, &g.meta.engines}) {
    for (const recording::ColumnDef& c : *columns) {
      st.unit_keys.push_back(c.key);
      st.unit_labels.push_back(c.label.empty() ? c.key : c.label);
    }
  }
  // Keep the duty grid: the new record runs to the end of the period it interrupted.
  const recording::TimeNs period_end = g.period_end;
  const bool window_done = g.window_done;
  start_period(g, at);
  g.period_end = std::max(period_end, at + 1);
  g.window_done = window_done;
  if (g.requested_on && !g.window_done) g.window_start = at;  // the window goes on with the new source
  g.notes.push_back("agent: " + why);
}

void Agent::schedule(GpuState& g, recording::TimeNs now) {
  const recording::TimeNs window_end = g.period_start + ms_to_ns(settings_.duty_on_ms);
  // The period's start moves when the chip source switches (start_period), so the phase is taken
  // from this period's own start rather than the schedule's.
  const collect::DutyPhase phase =
      always_on() || (!g.window_done && now < window_end) ? collect::DutyPhase::on : collect::DutyPhase::off;
  const bool duty_on = phase == collect::DutyPhase::on;
  // The record's window ends on the duty schedule even while a capture holds the counters on.
  if (!duty_on && !g.window_done) {
    if (g.requested_on) g.window_end = now;
    g.window_done = true;
  }
  const bool want = duty_on || now < g.hold_until;
  if (want && !g.requested_on) {
    source_.set_counters(g.index, true, now);
    g.requested_on = true;
    if (!g.hot) {
      g.hot = true;
      g.hot_since = now;
    }
  } else if (!want && g.requested_on) {
    source_.set_counters(g.index, false, now);
    g.requested_on = false;
  }
  status_[g.index].counters_on = g.requested_on;
}

void Agent::hold_counters(std::size_t gpu, recording::TimeNs until_ns) {
  GpuState& g = *gpus_.at(gpu);
  g.hold_until = until_ns;
  if (!ended_) schedule(g, now_ns_);
}

bool Agent::sample_interval(std::size_t gpu, double interval_ms) {
  GpuState& g = *gpus_.at(gpu);
  if (ended_ || !source_.set_interval(gpu, interval_ms, now_ns_)) return false;
  // A sampler running now is restarted by the source: the counters stay wanted throughout.
  if (g.requested_on && g.hot) g.restart_bridge = true;
  return true;
}

// A window's figures once its counters are off and one more drain has brought its last samples: the
// period so far analysed over the window, as its record will be.
void Agent::observe_window(GpuState& g) {
  if (g.window_observed || !g.window_done || !g.window_start || !g.window_end) return;
  if (now_ns_ < *g.window_end + ms_to_ns(settings_.poll_ms)) return;
  recording::MemoryRecording w;
  w.meta_data = g.period->meta_data;
  recording::for_each_kind<recording::StreamKinds>(
      [&]<typename Record>(std::type_identity<Record>) { w.list<Record>() = g.period->list<Record>(); });
  const recording::TimeNs start = *g.window_start;
  const recording::TimeNs stop = std::max(*g.window_end, start);
  for (const recording::CountersEvent& e : g.period->side_records.counters)
    if (e.ts_ns <= stop) w.side_records.counters.push_back(e);
  w.side_records.counters.push_back(recording::CountersEvent{stop, false, ""});
  sort_by_ts(w.side_records.counters);
  w.side_records.marks.push_back(recording::Mark{start, recording::MarkKind::start});
  w.side_records.marks.push_back(recording::Mark{stop, recording::MarkKind::stop});
  w.side_records.end = recording::RunEnd{stop, 0, recording::RunEnding::period_end()};
  w.side_records.last_ts_ns = stop;
  RecordContext ctx;
  ctx.poll_ms = settings_.poll_ms;
  ctx.source = source_.kind();
  ctx.cost_table = settings_.cost_table;
  const AgentRecord r = make_record(analysis::analyze(w), ctx);
  WindowFigures f;
  f.start_ns = start;
  f.end_ns = stop;
  f.die_util_pct = r.die_util_pct;
  f.gpu_util_pct = r.gpu_util_pct;
  f.gap_pct = r.gap_pct;
  f.stranded_pct = r.stranded_pct;
  f.stranded_idle_pct = r.stranded_idle_pct;
  GpuStatus& s = status_[g.index];
  f.seq = s.last_window ? s.last_window->seq + 1 : 1;
  s.last_window = f;
  g.window_observed = true;
}

std::vector<AgentRecord> Agent::step() {
  std::vector<AgentRecord> records;
  if (ended_) return records;
  const core::ClockReadings c = clock_.read();
  const core::ClockEvent event = watch_.check(c);
  if (event.kind != core::ClockEvent::Kind::none) source_.rebase(c);
  recording::TimeNs now = source_.now_ns(c);
  now_ns_ = now;
  if (event.kind != core::ClockEvent::Kind::none) restart_all(event, now);
  read_power();
  for (auto& g : gpus_) g->power = fold_power(g->power, *last_power_);

  // A period that ends at this step needs NVML's power line read now, after its end, for its energy
  // (docs/agent.md#nvml-reads); the source reads it anyway while the counters are wanted.
  for (auto& g : gpus_)
    if (now >= g->period_end || event.kind != core::ClockEvent::Kind::none) source_.power_due(g->index);
  source_.collect(now, batches_);
  for (auto& gp : gpus_) {
    GpuState& g = *gp;
    const std::optional<recording::TimeNs> changed = batches_[g.index].columns_changed_at;
    const std::string why = batches_[g.index].columns_change_why;
    if (settings_.on_batch) settings_.on_batch(g.index, batches_[g.index]);
    absorb(g, batches_[g.index]);
    if (changed) switch_columns(g, std::max(*changed, g.period_start), why, records);
  }

  const recording::TimeNs period = ms_to_ns(settings_.duty_period_ms);
  const bool over = source_.ended(now);
  const recording::TimeNs close_until = over ? std::min(now, source_.end_ns()) : now;
  for (auto& gp : gpus_) {
    GpuState& g = *gp;
    while (close_until >= g.period_end) {
      const recording::TimeNs end = g.period_end;
      if (auto r = close_period(g, end, {})) {
        ++status_[g.index].records;
        status_[g.index].last = *r;
        records.push_back(std::move(*r));
      }
      recording::TimeNs next_start = end;
      if (close_until >= end + period) {
        // The agent did not run for at least a whole period (stopped, or starved of CPU).
        g.notes.push_back("agent: it did not run from " + seconds_text(end - g.meta.start_ns).substr(1) +
                          " to " + seconds_text(close_until - g.meta.start_ns).substr(1) +
                          " after its start; the periods in between have no record");
        g.staged.reset();
        next_start = close_until;
      }
      if (g.requested_on && !always_on() && !(g.hold_until > end)) {
        // Still on from a window that should have ended: switch off before the next window starts.
        source_.set_counters(g.index, false, end);
        g.requested_on = false;
      }
      start_period(g, next_start);
    }
    if (!over) schedule(g, now);
    if (!over) observe_window(g);
    status_[g.index].sampler_restarts = source_.sampler_restarts(g.index);
  }
  if (over) {
    // The recording is over: close what is left of each period at its end, with a note.
    const recording::TimeNs end = std::min(now, source_.end_ns());
    for (auto& g : gpus_) {
      if (g->requested_on) source_.set_counters(g->index, false, end);
      g->requested_on = false;
      status_[g->index].counters_on = false;
      if (!g->window_start || end <= g->period_start) continue;
      if (auto r = close_period(*g, end, {"replay: the recording ended; this period is cut short"})) {
        ++status_[g->index].records;
        status_[g->index].last = *r;
        records.push_back(std::move(*r));
      }
    }
    ended_ = true;
    return records;
  }
  while (next_poll_ns_ <= now) next_poll_ns_ += ms_to_ns(settings_.poll_ms);
  return records;
}

std::vector<AgentRecord> Agent::finish(const std::string& why) {
  std::vector<AgentRecord> records;
  if (ended_) return records;
  const core::ClockReadings c = clock_.read();
  now_ns_ = source_.now_ns(c);
  for (auto& g : gpus_) {
    if (g->requested_on) {
      g->window_end = now_ns_;
      g->window_done = true;
    }
    g->requested_on = false;
  }
  source_.collect(now_ns_, batches_);
  source_.shutdown(now_ns_, batches_);
  for (auto& g : gpus_) {
    if (settings_.on_batch) settings_.on_batch(g->index, batches_[g->index]);
    absorb(*g, batches_[g->index]);
  }
  for (auto& g : gpus_) {
    status_[g->index].counters_on = false;
    if (!g->window_start || now_ns_ <= g->period_start) continue;
    if (auto r = close_period(
            *g, now_ns_,
            {"agent: stopped (" + why + ") before the period ended; this period is cut short"})) {
      ++status_[g->index].records;
      status_[g->index].last = *r;
      records.push_back(std::move(*r));
    }
  }
  ended_ = true;
  return records;
}

recording::TimeNs Agent::next_due_ns() const {
  if (ended_) return std::numeric_limits<recording::TimeNs>::max();
  recording::TimeNs due = std::min(next_poll_ns_, source_.next_due_ns());
  for (const auto& g : gpus_) {
    due = std::min(due, g->period_end);
    if (g->requested_on && !always_on() && !g->window_done)
      due = std::min(due, g->period_start + ms_to_ns(settings_.duty_on_ms));
    if (g->hold_until > now_ns_) due = std::min(due, g->hold_until);
    // A window's figures are due one drain after it ends (observe_window).
    if (g->window_done && !g->window_observed && g->window_start && g->window_end)
      due = std::min(due, std::max(now_ns_, *g->window_end + ms_to_ns(settings_.poll_ms)));
  }
  return due;
}

}  // namespace diescope::agent
