#include "diescope/top/model.hpp"

#include <algorithm>
#include <cmath>
#include <span>

#include "diescope/analysis/analyze.hpp"
#include "diescope/collect/unit_tables.hpp"

namespace diescope::top {

namespace {

constexpr recording::TimeNs kSecond = recording::kNsPerSecond;
constexpr recording::TimeNs kHistoryNs = kHistorySeconds * kSecond;

recording::TimeNs overlap(recording::TimeNs a_lo, recording::TimeNs a_hi, recording::TimeNs b_lo,
                          recording::TimeNs b_hi) {
  return std::max<recording::TimeNs>(0, std::min(a_hi, b_hi) - std::max(a_lo, b_lo));
}

// A time-weighted mean over whatever part of a span its values covered.
struct Weighted {
  double sum = 0;  // value x ns
  recording::TimeNs ns = 0;
  void add(double value, recording::TimeNs weight) {
    if (weight <= 0 || !std::isfinite(value)) return;
    sum += value * static_cast<double>(weight);
    ns += weight;
  }
  double mean() const { return ns > 0 ? sum / static_cast<double>(ns) : kNaN; }
};

// docs/method.md#which-chip-samples-are-used: a unit or diagnostic that is not a finite number, is
// below 0 or above kMaxPctOfPeak breaks the sample (split samples come without values: NaN).
bool broken(std::span<const double> values) {
  for (double v : values)
    if (!std::isfinite(v) || v < 0 || v > analysis::kMaxPctOfPeak) return true;
  return false;
}

}  // namespace

recording::TimeNs stale_after_ns(double drain_ms) {
  return std::max<recording::TimeNs>(3 * kSecond, static_cast<recording::TimeNs>(3 * drain_ms * 1e6));
}

Model::Model(const ViewFeed& source, double drain_ms) : replay_(!source.live()), drain_ms_(drain_ms) {
  for (std::size_t i = 0; i < source.gpu_count(); ++i) {
    Gpu g;
    g.meta = source.meta(i);
    // A recording made with GPM has GPM's columns: replayed, it is titled GPM.
    const bool gpm_columns =
        std::any_of(g.meta.units.begin(), g.meta.units.end(),
                    [](const recording::ColumnDef& c) { return c.source == recording::UnitSource::gpm; });
    g.chip_source = gpm_columns ? collect::ChipSource::gpm : source.chip_source();
    // Every source asks for the counters from its start on a GPU with a unit table: until the
    // sampler says otherwise, they are starting.
    g.asked = !g.meta.units.empty();
    gpus_.push_back(std::move(g));
  }
}

void Model::absorb(std::size_t gpu, GpuUpdate& update, recording::TimeNs now) {
  Gpu& g = gpus_.at(gpu);
  collect::GpuBatch& b = update.records;
  // The first chip sample after each start of the counters spans their setup and is left out
  // (docs/method.md#which-chip-samples-are-used); a start may come in an earlier batch.
  std::vector<recording::TimeNs> starts;
  for (const recording::CountersEvent& e : b.counters) {
    g.asked = e.on;
    if (e.on) starts.push_back(e.ts_ns);
    if (!e.on && !e.reason.empty()) g.reason = e.reason;
  }
  std::sort(starts.begin(), starts.end());
  // The supervisor's own notes ("sampler") say why chip samples stop or fail; the child's notes it
  // passes on ("sampler <topic>", such as the size of its decode image) are information, not a reason.
  for (const recording::Note& n : b.notes)
    if (n.topic == "sampler") g.reason = n.text;
  std::size_t next_start = 0;
  for (auto& s : b.list<recording::ChipSample>()) {
    bool drop = g.first_after_on;
    for (; next_start < starts.size() && starts[next_start] <= s.end_ns; ++next_start) drop = true;
    g.first_after_on = false;
    if (drop) continue;
    if (s.end_ns <= s.start_ns || broken(s.units) || broken(s.diagnostics)) continue;
    if (!g.samples.empty() && s.end_ns <= g.samples.back().end_ns) continue;
    g.last_chip_ns = s.end_ns;
    g.reason.clear();
    g.samples.push_back(Sample{s.start_ns, s.end_ns, std::move(s.units)});
  }
  if (next_start < starts.size()) g.first_after_on = true;
  for (auto& e : b.list<recording::EngineReading>())
    g.engines.push_back(Engines{e.ts_ns, std::move(e.values)});
  for (const auto& u : b.list<recording::UtilSample>())
    if (g.util.empty() || u.ts_ns > g.util.back().ts_ns) g.util.push_back(Util{u.ts_ns, u.pct});
  if (!b.list<recording::ClockReading>().empty()) g.clock = b.list<recording::ClockReading>().back();
  if (!b.list<recording::PowerLimitReading>().empty())
    g.power_limit_w = b.list<recording::PowerLimitReading>().back().limit_w;
  if (!b.list<recording::ThrottleReading>().empty()) {
    g.throttle = b.list<recording::ThrottleReading>().back().mask;
    g.throttle_read = true;
  }
  if (!b.list<recording::ProcessReading>().empty()) {
    g.compute = b.list<recording::ProcessReading>().back().compute;
    g.graphics = b.list<recording::ProcessReading>().back().graphics;
  }
  if (update.ended_at) g.ended_at = update.ended_at;
  if (std::isfinite(update.power_draw_w)) g.power_w = update.power_draw_w;
  if (update.processes) g.processes = std::move(update.processes);
  // A new chip source (PM sampling to GPM or back) has other columns: the unit history starts again
  // from its first sample, which spans its start and is left out (docs/top.md#sources).
  if (update.new_meta) {
    g.meta = std::move(*update.new_meta);
    g.chip_source = update.new_chip_source;
    g.samples.clear();
    g.first_after_on = true;
    // The new source was asked for: it is starting, whatever the old one's stop said, until its
    // own first sample or failure (the old source's "off" often comes in the same batch).
    g.asked = !g.meta.units.empty();
    g.reason.clear();
    update.new_meta.reset();
  }
  b.clear();
  trim(g, now);
}

void Model::trim(Gpu& g, recording::TimeNs now) const {
  if (g.ended_at) now = std::min(now, *g.ended_at);  // an ended replay keeps its last minute
  // The history and the figure window, and a little more.
  const recording::TimeNs keep_from = now - kHistoryNs - 2 * kSecond - stale_after_ns(drain_ms_);
  while (!g.samples.empty() && g.samples.front().end_ns < keep_from) g.samples.pop_front();
  // One GPU-Util sample before the kept ones bounds the next one's booking.
  while (g.util.size() > 1 && g.util[1].ts_ns < keep_from) g.util.pop_front();
  while (g.engines.size() > 1 && g.engines[1].ts_ns < keep_from) g.engines.pop_front();
}

recording::TimeNs Model::shown_time(recording::TimeNs now) const {
  recording::TimeNs last = 0;
  for (const Gpu& g : gpus_) {
    if (!g.ended_at) return now;
    last = std::max(last, *g.ended_at);
  }
  return gpus_.empty() ? now : std::min(now, last);
}

std::vector<GpuFrame> Model::gpus(recording::TimeNs now) const {
  std::vector<GpuFrame> out;
  out.reserve(gpus_.size());
  for (const Gpu& g : gpus_) out.push_back(frame_of(g, now));
  return out;
}

GpuFrame Model::frame_of(const Gpu& g, recording::TimeNs now) const {
  GpuFrame f;
  // docs/top.md#sources: a replay that is over keeps the figures of its end, and says it is over.
  if (g.ended_at) {
    now = std::min(now, *g.ended_at);
    f.replay_over = true;
  }
  f.index = g.meta.gpu.index;
  f.model = g.meta.gpu.model;
  f.chip = g.meta.gpu.chip;
  f.chip_source = g.chip_source;
  f.interval_ms = g.meta.interval_ms;
  f.replay = replay_;
  f.sm_mhz = g.clock.sm_mhz;
  f.mem_mhz = g.clock.mem_mhz;
  f.power_w = g.power_w;
  f.power_limit_w = g.power_limit_w;
  f.throttle_mask = g.throttle;
  f.throttle_read = g.throttle_read;
  f.processes = g.processes;
  f.compute_processes = g.compute;
  f.graphics_processes = g.graphics;

  const bool chip_fresh = !g.samples.empty() && now - g.last_chip_ns <= stale_after_ns(drain_ms_);
  if (chip_fresh) {
    f.chip_status = ChipStatus::chip;
  } else if (g.asked && g.reason.empty()) {
    f.chip_status = ChipStatus::starting;
  } else {
    f.chip_status = ChipStatus::nvml_only;
    f.status_reason = g.reason;
    if (f.status_reason.empty() && g.meta.units.empty()) f.status_reason = "no unit table for this GPU";
  }

  // The span the current figures cover: the newest chip time (so GPU-Util and DIE-Util cover the
  // same time), else the newest GPU-Util sample.
  const recording::TimeNs window =
      std::max<recording::TimeNs>(kSecond, static_cast<recording::TimeNs>(drain_ms_ * 1e6));
  recording::TimeNs end = now;
  if (chip_fresh)
    end = g.last_chip_ns;
  else if (!g.util.empty())
    end = g.util.back().ts_ns;
  const recording::TimeNs lo = end - window;
  const recording::TimeNs hist_end = end / kSecond * kSecond;  // whole seconds: a steady sparkline
  const recording::TimeNs hist_lo = hist_end - kHistoryNs;

  // DIE-Util and units, per sample, into the figure window and the history's seconds.
  const std::size_t n_units = g.meta.units.size();
  const std::size_t n_engines = g.meta.engines.size();
  std::vector<Weighted> unit_mean(n_units + n_engines);
  std::vector<recording::TimeNs> unit_available(n_units + n_engines, 0);
  Weighted die;
  std::vector<Weighted> die_hist(kHistorySeconds);
  std::size_t engine_at = 0;
  std::vector<double> no_engines;
  if (chip_fresh || !g.samples.empty()) {
    for (const Sample& s : g.samples) {
      // The engine reading matched to a sample: the first at or after its end
      // (docs/method.md#die-util), else the newest there is so far.
      while (engine_at + 1 < g.engines.size() && g.engines[engine_at].ts_ns < s.end_ns) ++engine_at;
      const std::vector<double>& eng = g.engines.empty() ? no_engines : g.engines[engine_at].values;
      const double d = analysis::die_util_of_sample(s.units, eng);
      if (chip_fresh) {
        const recording::TimeNs in = overlap(s.start_ns, s.end_ns, lo, end);
        die.add(d, in);
        for (std::size_t u = 0; u < n_units && u < s.units.size(); ++u) {
          unit_mean[u].add(s.units[u], in);
          if (std::isfinite(s.units[u])) unit_available[u] += in;
        }
        for (std::size_t e = 0; e < n_engines && e < eng.size(); ++e) {
          unit_mean[n_units + e].add(eng[e], in);
          if (std::isfinite(eng[e])) unit_available[n_units + e] += in;
        }
      }
      if (s.end_ns <= hist_lo || s.start_ns >= hist_end) continue;
      const auto first = static_cast<int>(std::max<recording::TimeNs>(0, (s.start_ns - hist_lo) / kSecond));
      for (int k = first; k < kHistorySeconds; ++k) {
        const recording::TimeNs b_lo = hist_lo + k * kSecond;
        if (b_lo >= s.end_ns) break;
        die_hist[static_cast<std::size_t>(k)].add(d, overlap(s.start_ns, s.end_ns, b_lo, b_lo + kSecond));
      }
    }
  }
  if (chip_fresh) {
    f.die_util_pct = std::clamp(die.mean(), 0.0, 100.0);
    if (!std::isfinite(die.mean())) f.die_util_pct = kNaN;
    double best = -1;
    bool any_busy = false;
    for (std::size_t u = 0; u < n_units + n_engines; ++u) {
      const recording::ColumnDef& c = u < n_units ? g.meta.units[u] : g.meta.engines[u - n_units];
      UnitBar bar{c.label.empty() ? c.key : c.label, unit_mean[u].mean()};
      f.units.push_back(bar);
      // docs/method.md#column-summaries-and-the-limiting-unit: available over 90% of the chip time, and busy.
      const bool available =
          die.ns > 0 && static_cast<double>(unit_available[u]) >=
                            analysis::kMinLimitingAvailabilityPct / 100 * static_cast<double>(die.ns);
      if (!available || !(bar.pct >= analysis::kMinBusyPct)) continue;
      any_busy = true;
      if (bar.pct > best) {
        best = bar.pct;
        f.limiting_unit = bar.label;
      }
    }
    f.all_idle = !any_busy && die.ns > 0;
  } else {
    for (std::size_t u = 0; u < n_units + n_engines; ++u) {
      const recording::ColumnDef& c = u < n_units ? g.meta.units[u] : g.meta.engines[u - n_units];
      f.units.push_back(UnitBar{c.label.empty() ? c.key : c.label, kNaN});
    }
  }

  // GPU-Util: each sample booked to (max(previous sample, ts - 1 s), ts] (docs/method.md#gpu-util).
  Weighted gpu;
  std::vector<Weighted> gpu_hist(kHistorySeconds);
  for (std::size_t i = 0; i < g.util.size(); ++i) {
    const recording::TimeNs hi = g.util[i].ts_ns;
    recording::TimeNs b = hi - analysis::kMaxNvmlPeriodNs;
    if (i > 0) b = std::max(b, g.util[i - 1].ts_ns);
    gpu.add(g.util[i].pct, overlap(b, hi, lo, end));
    if (hi <= hist_lo || b >= hist_end) continue;
    for (int k = 0; k < kHistorySeconds; ++k) {
      const recording::TimeNs b_lo = hist_lo + k * kSecond;
      gpu_hist[static_cast<std::size_t>(k)].add(g.util[i].pct, overlap(b, hi, b_lo, b_lo + kSecond));
    }
  }
  f.gpu_util_pct = gpu.mean();
  for (int k = 0; k < kHistorySeconds; ++k) {
    f.gpu_util_history.push_back(gpu_hist[static_cast<std::size_t>(k)].mean());
    const double d = die_hist[static_cast<std::size_t>(k)].mean();
    f.die_util_history.push_back(std::isfinite(d) ? std::clamp(d, 0.0, 100.0) : kNaN);
  }
  return f;
}

}  // namespace diescope::top
