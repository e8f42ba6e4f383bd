#include "diescope/agent/record.hpp"

#include <cmath>
#include <nlohmann/json.hpp>

#include "diescope/collect/unit_tables.hpp"
#include "diescope/core/version.hpp"
#include "diescope/recording/format.hpp"
#include "diescope/report/wording.hpp"

namespace diescope::agent {

namespace {

using nlohmann::json;

double tenths_to_pct(const std::optional<int>& tenths) {
  return tenths ? *tenths / 10.0 : analysis::kNaN;
}

const recording::ColumnDef* find_column(const recording::RecordingMeta& meta, const std::string& key) {
  for (const recording::ColumnDef& c : meta.units)
    if (c.key == key) return &c;
  for (const recording::ColumnDef& c : meta.engines)
    if (c.key == key) return &c;
  return nullptr;
}

// NaN has no JSON form: it becomes null, and its reason travels in the field beside it.
json number(double value) {
  return std::isfinite(value) ? json(value) : json(nullptr);
}

json clock_json(const analysis::ClockStats& c) {
  return json{{"min_mhz", number(c.min_mhz)},
              {"max_mhz", number(c.max_mhz)},
              {"mean_mhz", number(c.mean_mhz)},
              {"readings", c.readings}};
}

template <typename T>
json optional_json(const std::optional<T>& value) {
  return value ? json(*value) : json(nullptr);
}

}  // namespace

AgentRecord make_record(const analysis::Analysis& analysis, const RecordContext& context) {
  const recording::RecordingMeta& meta = analysis.meta;
  AgentRecord r;
  r.gpu_index = meta.gpu.index;
  r.gpu_uuid = meta.gpu.uuid;
  r.gpu_model = meta.gpu.model;
  r.chip = meta.gpu.chip;
  r.unit_table = meta.unit_table;
  r.source = context.source;
  r.period_start_ns = analysis.run.start_ns;
  r.period_end_ns = analysis.run.end_ns;
  r.counters_on_s = context.counters_on_s;
  r.duty_on_ms = meta.duty_on_ms;
  r.duty_period_ms = meta.duty_period_ms;
  r.interval_ms = meta.interval_ms;
  r.poll_ms = context.poll_ms;

  const bool windowed = analysis.window.found;
  const analysis::SpanResults& s = windowed ? analysis.window.results : analysis.run;
  if (windowed) {
    r.window_start_ns = s.start_ns;
    r.window_end_ns = s.end_ns;
  }
  r.die_util_pct = s.die_util_pct;
  r.die_util_reason = report::die_util_missing_words(s);
  for (const analysis::ColumnSummary& unit : s.units) {
    UnitFigure figure;
    figure.key = unit.key;
    figure.mean_pct = unit.mean_pct;
    figure.availability_pct = unit.availability_pct;
    if (const recording::ColumnDef* def = find_column(meta, unit.key)) {
      figure.label = def->label;
      for (recording::UnitFlag flag : def->flags) figure.flags.emplace_back(recording::unit_flag_text(flag));
    }
    r.units.push_back(std::move(figure));
  }
  r.limiting_unit = s.limiting_unit;
  r.limiting_reason = report::limiting_unit_missing_words(s);
  r.chip_coverage_pct = s.chip_coverage_pct;
  r.chip_scheduled_s = s.chip_scheduled_s;
  r.chip_coverage_gate = s.partial ? analysis::CoverageGate::partial : analysis::CoverageGate::pass;
  r.partial_wording = report::partial_words(s);
  r.samples_read = s.samples_read;
  r.samples_used = s.samples_used;

  r.gpu_util_pct = s.gpu_util_pct;
  r.gpu_util_coverage_pct = s.gpu_util_coverage_pct;
  r.gpu_util_reason = report::gpu_util_missing_words(s);
  r.gpu_util_source = report::gpu_util_from_words(s.gpu_util_from);
  r.gap_pct = tenths_to_pct(s.headline.gap_tenths);
  r.stranded_pct = tenths_to_pct(s.headline.stranded_tenths);
  r.stranded_idle_pct = tenths_to_pct(s.headline.idle_tenths);
  r.stranded_active_pct = tenths_to_pct(s.headline.active_tenths);
  r.gap_within_noise_floor = s.headline.gap_within_noise_floor;
  r.gap_reason = report::gap_missing_words(s);
  r.split_reason = report::split_missing_words(s);

  r.sm_clock = s.sm_clock;
  r.mem_clock = s.mem_clock;
  r.throttle_reasons = s.throttle_reasons;
  r.power_limit_min_w = s.power_limit_min_w;
  r.power_limit_max_w = s.power_limit_max_w;
  // Energy over the whole period (every period's joules, counters on or off); stranded over the chip
  // window, where DIE-Util is known (docs/energy.md#in-the-agent).
  const analysis::EnergyFigures& e = analysis.run.energy;
  r.energy_j = e.energy_j;
  r.energy_source = std::string(report::energy_source_code(e.source));
  r.energy_reason = std::isfinite(e.energy_j) ? "" : report::energy_missing_words(e);
  r.mean_power_w = e.mean_power_w;
  r.stranded_energy_j = s.energy.stranded_j;
  r.stranded_energy_pct = s.energy.stranded_pct;

  const CostVerdict cost = cost_for(
      meta.gpu.model, meta.interval_ms, meta.duty_on_ms, meta.duty_period_ms, context.power,
      context.cost_table,
      meta.unit_table == collect::gpm_unit_table().name ? collect::ChipSource::gpm : collect::ChipSource::pm);
  r.cost = cost.estimate;
  r.cost_reason = cost.reason;

  r.restart = context.restart;
  for (const recording::Note& note : analysis.notes) r.notes.push_back(note.topic + ": " + note.text);
  for (const analysis::AnalysisFinding& finding : analysis.findings)
    r.notes.push_back("analysis: " + report::finding_words(finding));
  for (const recording::ClockJump& jump : analysis.hygiene.clock_jumps)
    r.notes.push_back("hygiene: " + report::clock_jump_words(jump, meta.start_ns));
  for (const std::string& note : context.extra_notes) r.notes.push_back(note);

  r.method = analysis.method;
  r.schema = kAgentRecordSchema;
  r.tool_version = core::kToolVersion;
  return r;
}

nlohmann::json record_to_json(const AgentRecord& r) {
  json units = json::array();
  for (const UnitFigure& u : r.units) {
    units.push_back(json{{"key", u.key},
                         {"label", u.label},
                         {"mean_pct", number(u.mean_pct)},
                         {"availability_pct", number(u.availability_pct)},
                         {"flags", u.flags}});
  }
  json cost;
  if (r.cost) {
    cost = json{{"slowdown_lo_pct", r.cost->slowdown_lo_pct},
                {"slowdown_hi_pct", r.cost->slowdown_hi_pct},
                {"within_noise", r.cost->within_noise()},
                {"gpu_model", r.cost->gpu_model},
                {"interval_ms", r.cost->interval_ms},
                {"rounds", r.cost->rounds},
                {"round_s", r.cost->round_s},
                {"workload", r.cost->workload},
                {"measured", r.cost->measured},
                {"reason", nullptr}};
  } else {
    cost = json{{"reason", r.cost_reason}};
  }
  json restart = nullptr;
  if (r.restart) {
    restart = json{{"kind", r.restart->kind},
                   {"step_ns", r.restart->step_ns},
                   {"at_ns", r.restart->at_ns},
                   {"text", r.restart->text}};
  }
  json out{
      {"schema", r.schema},
      {"method", r.method},
      {"tool_version", r.tool_version},
      {"gpu", json{{"index", r.gpu_index},
                   {"uuid", r.gpu_uuid},
                   {"model", r.gpu_model},
                   {"chip", r.chip},
                   {"unit_table", r.unit_table}}},
      {"source", r.source},
      {"period", json{{"start_ns", r.period_start_ns}, {"end_ns", r.period_end_ns}}},
      {"window",
       json{{"start_ns", optional_json(r.window_start_ns)}, {"end_ns", optional_json(r.window_end_ns)}}},
      {"counters_on_s", r.counters_on_s},
      {"settings", json{{"duty_on_ms", r.duty_on_ms},
                        {"duty_period_ms", r.duty_period_ms},
                        {"interval_ms", r.interval_ms},
                        {"poll_ms", r.poll_ms}}},
      {"chip", json{{"die_util_pct", number(r.die_util_pct)},
                    {"die_util_reason", r.die_util_reason},
                    {"units", units},
                    {"limiting_unit", optional_json(r.limiting_unit)},
                    {"limiting_reason", r.limiting_reason},
                    {"coverage_pct", number(r.chip_coverage_pct)},
                    {"scheduled_s", number(r.chip_scheduled_s)},
                    {"coverage_gate", std::string(report::coverage_gate_code(r.chip_coverage_gate))},
                    {"partial_wording", r.partial_wording},
                    {"samples_read", r.samples_read},
                    {"samples_used", r.samples_used}}},
      {"gpu_util", json{{"pct", number(r.gpu_util_pct)},
                        {"coverage_pct", number(r.gpu_util_coverage_pct)},
                        {"reason", r.gpu_util_reason},
                        {"source", r.gpu_util_source}}},
      {"headline", json{{"gap_pct", number(r.gap_pct)},
                        {"stranded_pct", number(r.stranded_pct)},
                        {"stranded_idle_pct", number(r.stranded_idle_pct)},
                        {"stranded_active_pct", number(r.stranded_active_pct)},
                        {"gap_within_noise_floor", r.gap_within_noise_floor},
                        {"gap_reason", r.gap_reason},
                        {"split_reason", r.split_reason}}},
      {"clocks", json{{"sm", clock_json(r.sm_clock)}, {"mem", clock_json(r.mem_clock)}}},
      {"throttle_reasons", optional_json(r.throttle_reasons)},
      {"power_limit_w", json{{"min", number(r.power_limit_min_w)}, {"max", number(r.power_limit_max_w)}}},
      {"energy", json{{"j", number(r.energy_j)},
                      {"source", r.energy_source},
                      {"reason", r.energy_reason},
                      {"mean_power_w", number(r.mean_power_w)},
                      {"stranded_j", number(r.stranded_energy_j)},
                      {"stranded_pct", number(r.stranded_energy_pct)}}},
      {"cost", cost},
      {"restart", restart},
      {"notes", r.notes},
  };
  json holders = json::array();
  for (const RecordHolder& h : r.holders) {
    json labels = json::object();
    for (const auto& [k, v] : h.labels) labels[k] = v;
    holders.push_back(
        json{{"kind", h.kind}, {"key", h.key}, {"name", h.name}, {"labels", labels}, {"pids", h.pids}});
  }
  out["holders"] = holders;
  if (r.id > 0) out["id"] = r.id;
  return out;
}

std::string record_to_ndjson(const AgentRecord& record) {
  // A label's invalid UTF-8 is replaced rather than thrown on.
  return record_to_json(record).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace diescope::agent
