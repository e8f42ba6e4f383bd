// Small synthetic recordings for the analysis tests. Times are given in milliseconds after T0.
#pragma once

#include <limits>
#include <string>
#include <vector>

#include "diescope/analysis/analyze.hpp"
#include "diescope/recording/memory_recording.hpp"

namespace diescope::testing {

inline constexpr double kNaNv = std::numeric_limits<double>::quiet_NaN();

inline constexpr recording::TimeNs T0 = 1'750'000'000LL * recording::kNsPerSecond;
inline constexpr recording::TimeNs at_ms(double ms) {
  return T0 + static_cast<recording::TimeNs>(ms * 1e6);
}

inline recording::ColumnDef column(std::string key,
                                   recording::UnitSource source = recording::UnitSource::chip,
                                   bool counted = true, std::string unit = "pct") {
  recording::ColumnDef c;
  c.key = key;
  c.label = key;
  c.source = source;
  c.counted_by_gpu_util = counted;
  c.unit = std::move(unit);
  return c;
}

// A recording whose run is [0, end_ms) after T0, with the given columns.
struct Builder {
  recording::MemoryRecording rec;

  explicit Builder(std::vector<std::string> units, double end_ms = 1000) {
    rec.meta_data.start_ns = T0;
    for (auto& key : units) rec.meta_data.units.push_back(column(key));
    rec.side_records.end = recording::RunEnd{at_ms(end_ms), 0, recording::RunEnding::exit()};
    rec.side_records.last_ts_ns = at_ms(end_ms);
    // Counters go on at the run's start; the first sample after it (the setup sample) is dropped.
    rec.side_records.counters.push_back(recording::CountersEvent{at_ms(0), true, ""});
  }
  Builder& diagnostics(std::vector<std::string> keys) {
    for (auto& key : keys) rec.meta_data.diagnostics.push_back(column(key));
    return *this;
  }
  Builder& counts(std::vector<std::string> keys) {
    for (auto& key : keys)
      rec.meta_data.counts.push_back(column(key, recording::UnitSource::chip, true, "bytes"));
    return *this;
  }
  Builder& engines(std::vector<std::string> keys) {
    for (auto& key : keys)
      rec.meta_data.engines.push_back(column(key, recording::UnitSource::nvml_engine, false));
    return *this;
  }
  // One chip sample [from_ms, to_ms).
  Builder& sample(double from_ms, double to_ms, std::vector<double> units, std::vector<double> diags = {},
                  std::vector<double> counts = {}) {
    recording::OwnedChipSample s;
    s.start_ns = at_ms(from_ms);
    s.end_ns = at_ms(to_ms);
    s.units = std::move(units);
    s.diagnostics =
        diags.empty() ? std::vector<double>(rec.meta_data.diagnostics.size(), 0.0) : std::move(diags);
    s.counts = counts.empty() ? std::vector<double>(rec.meta_data.counts.size(), 0.0) : std::move(counts);
    rec.list<recording::ChipSample>().push_back(std::move(s));
    return *this;
  }
  // `n` back-to-back samples of `len_ms` from `from_ms`, all with the same unit values.
  Builder& samples(double from_ms, int n, double len_ms, std::vector<double> units) {
    for (int i = 0; i < n; ++i) sample(from_ms + i * len_ms, from_ms + (i + 1) * len_ms, units);
    return *this;
  }
  // The setup sample the collector's first read spans; always dropped.
  Builder& setup_sample(double from_ms = 0, double to_ms = 100) {
    return sample(from_ms, to_ms, std::vector<double>(rec.meta_data.units.size(), 50.0));
  }
  Builder& util(double ts_ms, double pct, recording::UtilSource source = recording::UtilSource::samples) {
    rec.list<recording::UtilSample>().push_back(recording::UtilSample{at_ms(ts_ms), pct, source});
    return *this;
  }
  // GPU-Util samples every `step_ms` from `from_ms` to `to_ms` inclusive.
  Builder& util_every(double from_ms, double to_ms, double step_ms, double pct) {
    for (double t = from_ms; t <= to_ms + 1e-9; t += step_ms) util(t, pct);
    return *this;
  }
  Builder& engine(double ts_ms, std::vector<double> values) {
    rec.list<recording::EngineReading>().push_back(
        recording::OwnedEngineReading{at_ms(ts_ms), std::move(values)});
    return *this;
  }
  Builder& mark(double ts_ms, recording::MarkKind kind) {
    rec.side_records.marks.push_back(recording::Mark{at_ms(ts_ms), kind});
    return *this;
  }
  Builder& note(double ts_ms, std::string topic, std::string text) {
    rec.side_records.notes.push_back(recording::Note{at_ms(ts_ms), std::move(topic), std::move(text)});
    return *this;
  }
  Builder& clock(double ts_ms, double sm, double mem) {
    rec.list<recording::ClockReading>().push_back(recording::ClockReading{at_ms(ts_ms), sm, mem});
    return *this;
  }
  Builder& throttle(double ts_ms, std::optional<std::uint64_t> mask) {
    rec.list<recording::ThrottleReading>().push_back(recording::ThrottleReading{at_ms(ts_ms), mask});
    return *this;
  }
  Builder& power(double ts_ms, double watts) {
    rec.list<recording::PowerLimitReading>().push_back(recording::PowerLimitReading{at_ms(ts_ms), watts});
    return *this;
  }
  // One power record: the limit and the draw in watts, the energy counter in millijoules.
  Builder& power_reading(double ts_ms, double limit_w, double draw_w, double energy_mj) {
    rec.list<recording::PowerLimitReading>().push_back(
        recording::PowerLimitReading{at_ms(ts_ms), limit_w, draw_w, energy_mj});
    return *this;
  }
  analysis::Analysis analyze(analysis::AnalysisOptions options = {}) const {
    return diescope::analysis::analyze(rec, options);
  }
};

inline const analysis::ColumnSummary& unit_named(const analysis::SpanResults& r, const std::string& key) {
  for (const auto& u : r.units)
    if (u.key == key) return u;
  throw std::runtime_error("no unit " + key);
}

}  // namespace diescope::testing
