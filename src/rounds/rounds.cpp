#include "diescope/rounds/rounds.hpp"

#include <cmath>

#include "diescope/report/wording.hpp"

namespace diescope::rounds {

namespace {

const recording::ColumnDef* find_column(const std::vector<recording::ColumnDef>& columns,
                                        const std::string& key) {
  for (const recording::ColumnDef& c : columns)
    if (c.key == key) return &c;
  return nullptr;
}

std::string label_of(const std::vector<recording::ColumnDef>& columns, const std::string& key) {
  const recording::ColumnDef* def = find_column(columns, key);
  return def && !def->label.empty() ? def->label : key;
}

}  // namespace

Verdict judge_round(const analysis::Analysis& analysis) {
  if (!analysis.window.found)
    return {false, "no steady window (" + report::window_words(analysis.window.finding) + ")"};
  const analysis::SpanResults& w = analysis.window.results;
  if (w.partial) return {false, "window " + report::partial_words(w)};
  return {true, {}};
}

std::vector<Figure> figures_of(const analysis::Analysis& analysis, const analysis::SpanResults& span) {
  const recording::RecordingMeta& meta = analysis.meta;
  const analysis::Headline& h = span.headline;
  std::vector<Figure> out;

  const double gpu = span.gpu_util_pct;
  const double die = span.die_util_pct;
  const bool have_gap = h.gap_tenths.has_value();
  const double gap = have_gap ? gpu - die : analysis::kNaN;
  const double stranded = std::isfinite(die) ? 100.0 - die : analysis::kNaN;
  double idle = analysis::kNaN, active = analysis::kNaN;
  if (have_gap && h.gap_within_noise_floor) {
    idle = stranded;
    active = 0;
  } else if (have_gap && *h.gap_tenths > 0) {
    idle = 100.0 - gpu;
    active = gap;
  }
  out.push_back({"gpu_util_pct", "GPU-Util", "%", "headline", gpu});
  out.push_back({"die_util_pct", "DIE-Util", "%", "headline", die});
  out.push_back({"gap_points", "Gap", "points", "headline", gap});
  out.push_back({"stranded_points", "Stranded", "points", "headline", stranded});
  out.push_back({"idle_points", "Stranded idle", "points", "headline", idle});
  out.push_back({"active_points", "Stranded active", "points", "headline", active});

  out.push_back({"span_s", "Window length", "s", "window", span.span_s});
  out.push_back({"chip_coverage_pct", "Chip coverage", "%", "window", span.chip_coverage_pct});
  out.push_back({"sm_clock_mhz", "SM clock", "MHz", "clock", span.sm_clock.mean_mhz});
  out.push_back({"mem_clock_mhz", "Memory clock", "MHz", "clock", span.mem_clock.mean_mhz});

  for (const analysis::ColumnSummary& s : span.units) {
    const std::string label =
        find_column(meta.units, s.key) ? label_of(meta.units, s.key) : label_of(meta.engines, s.key);
    out.push_back({"unit." + s.key, label, "%", "unit", s.mean_pct});
  }
  for (const analysis::ColumnSummary& s : span.diagnostics)
    out.push_back({"diagnostic." + s.key, label_of(meta.diagnostics, s.key), "%", "diagnostic", s.mean_pct});
  // Rates in the recording's column order (rates_per_s is a map); any the meta does not name after.
  std::vector<std::string> rate_keys;
  for (const recording::ColumnDef& c : meta.counts)
    if (span.rates_per_s.count(c.key)) rate_keys.push_back(c.key);
  for (const auto& [key, value] : span.rates_per_s)
    if (!find_column(meta.counts, key)) rate_keys.push_back(key);
  for (const std::string& key : rate_keys) {
    const recording::ColumnDef* def = find_column(meta.counts, key);
    const std::string unit = (def && !def->unit.empty() ? def->unit : std::string("count")) + "/s";
    out.push_back({"rate." + key, label_of(meta.counts, key), unit, "rate", span.rates_per_s.at(key)});
  }
  return out;
}

std::optional<std::string> limiting_label(const analysis::Analysis& analysis,
                                          const analysis::SpanResults& span) {
  if (!span.limiting_unit) return std::nullopt;
  const std::string& key = *span.limiting_unit;
  if (find_column(analysis.meta.units, key)) return label_of(analysis.meta.units, key);
  return label_of(analysis.meta.engines, key);
}

}  // namespace diescope::rounds
