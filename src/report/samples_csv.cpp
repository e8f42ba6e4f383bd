#include "diescope/report/samples_csv.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

#include "diescope/analysis/analyze.hpp"

namespace diescope {

namespace {

std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

void append_number(std::string& line, double v) {
  line += ',';
  if (std::isnan(v))
    line += "NaN";
  else if (std::isinf(v))
    line += v > 0 ? "inf" : "-inf";
  else
    fmt::format_to(std::back_inserter(line), "{}", v);  // shortest form that reads back exactly
}

const char* use_name(SampleUse use) {
  switch (use) {
    case SampleUse::used: return "used";
    case SampleUse::dropped_first: return "dropped_first";
    case SampleUse::dropped_broken: return "dropped_broken";
    case SampleUse::outside_run: return "outside_run";
  }
  return "unknown";
}

}  // namespace

SampleClassifier::SampleClassifier(const RecordSource& source, TimeNs run_lo, TimeNs run_hi)
    : meta_(source.meta()), run_lo_(run_lo), run_hi_(run_hi) {
  for (const CountersEvent& e : source.side().counters)
    if (e.on) starts_.push_back(e.ts_ns);
  std::sort(starts_.begin(), starts_.end());
  // With no counters events the recording's own first sample spans the setup.
  expect_first_ = starts_.empty();
}

SampleVerdict SampleClassifier::classify(const ChipSample& s) {
  // A counters start before this sample ends makes it the first after that start.
  const TimeNs end = std::max(s.start_ns, s.end_ns);
  while (next_start_ < starts_.size() && starts_[next_start_] < end) {
    expect_first_ = true;
    ++next_start_;
  }
  const bool first = expect_first_;
  expect_first_ = false;
  if (run_lo_ < run_hi_) {
    const bool touches = s.end_ns > s.start_ns ? (s.start_ns < run_hi_ && s.end_ns > run_lo_)
                                               : (s.start_ns >= run_lo_ && s.start_ns < run_hi_);
    if (!touches) return {SampleUse::outside_run, "outside the run"};
  }
  if (first) return {SampleUse::dropped_first, "first sample after the counters started: it spans their setup"};
  if (s.end_ns <= s.start_ns) return {SampleUse::dropped_broken, "empty span: end is not after start"};
  for (std::size_t i = 0; i < s.units.size(); ++i)
    if (!std::isfinite(s.units[i]))
      return {SampleUse::dropped_broken,
              "unit " + (i < meta_.units.size() ? meta_.units[i].key : std::to_string(i)) + " is not a number"};
  for (std::size_t i = 0; i < s.diagnostics.size(); ++i)
    if (!std::isfinite(s.diagnostics[i]))
      return {SampleUse::dropped_broken,
              "diagnostic " + (i < meta_.diagnostics.size() ? meta_.diagnostics[i].key : std::to_string(i)) +
                  " is not a number"};
  return {};
}

void walk_samples(const RecordSource& source, const Analysis* analysis,
                  const std::function<void(const WalkedSample&)>& visit) {
  const RecordingMeta& meta = source.meta();
  SampleClassifier classifier(source, analysis ? analysis->run.start_ns : 0, analysis ? analysis->run.end_ns : 0);
  auto chips = source.chip_samples();
  // A used sample takes the first engine reading at or after its end (seed 000, "Video engines"),
  // as the analysis matches them. Dropped samples are not matched.
  auto engines = meta.engines.empty() ? nullptr : source.engines();
  EngineReading reading;
  bool have_reading = engines && engines->next(reading);
  std::vector<double> matched(meta.engines.size(), kNaN);
  const std::vector<double> unmatched(meta.engines.size(), kNaN);

  ChipSample s;
  WalkedSample w;
  w.sample = &s;
  for (w.index = 0; chips->next(s); ++w.index) {
    w.verdict = classifier.classify(s);
    w.engines = unmatched;
    std::span<const double> engine_die;  // what die_util_of_sample sees: the matched reading, or none
    if (w.verdict.use == SampleUse::used && engines) {
      while (have_reading && reading.ts_ns < s.end_ns) have_reading = engines->next(reading);
      if (have_reading) {
        std::fill(matched.begin(), matched.end(), kNaN);
        std::copy_n(reading.values.begin(), std::min(reading.values.size(), matched.size()), matched.begin());
        w.engines = matched;
        engine_die = matched;
      }
    }
    w.die_util_pct = die_util_of_sample(s.units, engine_die);
    visit(w);
  }
}

SamplesCsvStats write_samples_csv(const RecordSource& source, const Analysis* analysis,
                                  const std::function<void(std::string_view)>& sink) {
  const RecordingMeta& meta = source.meta();
  std::string header = "index,start_ns,end_ns,duration_ms";
  for (const ColumnDef& c : meta.units) header += "," + csv_field("unit." + c.key);
  for (const ColumnDef& c : meta.diagnostics) header += "," + csv_field("diag." + c.key);
  for (const ColumnDef& c : meta.counts) header += "," + csv_field("count." + c.key);
  for (const ColumnDef& c : meta.engines) header += "," + csv_field("engine." + c.key);
  header += ",die_util_pct,use,drop_reason,window_share\n";
  sink(header);

  const bool window = analysis && analysis->window.found;
  const TimeNs window_start = window ? analysis->window.results.start_ns : 0;
  const TimeNs window_end = window ? analysis->window.results.end_ns : 0;

  SamplesCsvStats stats;
  std::string out;
  std::string line;
  walk_samples(source, analysis, [&](const WalkedSample& w) {
    const ChipSample& s = *w.sample;
    line.clear();
    fmt::format_to(std::back_inserter(line), "{},{},{}", w.index, s.start_ns, s.end_ns);
    append_number(line, static_cast<double>(s.end_ns - s.start_ns) / 1e6);
    for (double v : s.units) append_number(line, v);
    for (double v : s.diagnostics) append_number(line, v);
    for (double v : s.counts) append_number(line, v);
    for (double v : w.engines) append_number(line, v);
    append_number(line, w.die_util_pct);
    line += ',';
    line += use_name(w.verdict.use);
    line += ',' + csv_field(w.verdict.reason);
    double share = kNaN;
    if (window && s.end_ns > s.start_ns) {
      TimeNs overlap = std::min(s.end_ns, window_end) - std::max(s.start_ns, window_start);
      share = overlap > 0 ? static_cast<double>(overlap) / static_cast<double>(s.end_ns - s.start_ns) : 0.0;
    }
    append_number(line, share);
    line += '\n';
    out += line;
    if (out.size() > (1 << 16)) {
      sink(out);
      out.clear();
    }

    ++stats.rows;
    switch (w.verdict.use) {
      case SampleUse::used: ++stats.used; break;
      case SampleUse::dropped_first: ++stats.dropped_first; break;
      case SampleUse::dropped_broken: ++stats.dropped_broken; break;
      case SampleUse::outside_run: ++stats.outside_run; break;
    }
  });
  if (!out.empty()) sink(out);
  return stats;
}

}  // namespace diescope
