#include "diescope/report/report.hpp"

#include <cmath>
#include <fstream>
#include <sstream>

#include "diescope/analysis/analyze.hpp"
#include "diescope/analysis/energy.hpp"
#include "diescope/core/error.hpp"
#include "diescope/core/version.hpp"
#include "diescope/recording/format.hpp"
#include "diescope/report/wording.hpp"
#include "json_fields.hpp"

namespace diescope::report {

using nlohmann::json;

namespace {

const char* kCalibrationReason = "no calibration file for this GPU model, driver and method";
const char* kCostReason =
    "run reports carry no cost estimate: the measured slowdowns cover counters run by the agent "
    "on one GPU model, at 10 ms, on mains power";
const char* kExpectedReason =
    "no measured result backs an expected value for this workload and architecture yet";

json recipe_json(const recording::UnitRecipe& recipe) {
  return json{{"combine", recording::combine_text(recipe.combine)}, {"counters", recipe.counters}};
}

json flags_json(const std::vector<recording::UnitFlag>& flags) {
  json out = json::array();
  for (recording::UnitFlag f : flags) out.push_back(recording::unit_flag_text(f));
  return out;
}

const recording::ColumnDef* find_column(const std::vector<recording::ColumnDef>& columns,
                                        const std::string& key) {
  for (const recording::ColumnDef& c : columns)
    if (c.key == key) return &c;
  return nullptr;
}

const recording::ColumnDef* find_unit(const recording::RecordingMeta& meta, const std::string& key) {
  if (const recording::ColumnDef* c = find_column(meta.units, key)) return c;
  return find_column(meta.engines, key);
}

json column_json(const analysis::ColumnSummary& s, const recording::ColumnDef* def) {
  json o;
  o["key"] = s.key;
  o["label"] = def ? def->label : s.key;
  o["metric"] = def ? def->metric : "";
  o["source"] = recording::unit_source_text(def ? def->source : recording::UnitSource::chip);
  o["counted_by_gpu_util"] = def ? def->counted_by_gpu_util : true;
  o["flags"] = def ? flags_json(def->flags) : json::array();
  o["note"] = def ? def->note : "";
  const char* never = s.available_s > 0 ? "no usable value in this span" : "never available in this span";
  put_number(o, "mean_pct", s.mean_pct, never);
  put_number(o, "available_s", s.available_s, "not computed");
  put_number(o, "availability_pct", s.availability_pct, "no usable chip-sampled time in this span");
  put_number(o, "max_sample_pct", s.max_sample_pct, never);
  return o;
}

json clock_json(const analysis::ClockStats& c) {
  json o;
  const char* none = "no reading of this clock in this span";
  put_number(o, "min", c.min_mhz, none);
  put_number(o, "max", c.max_mhz, none);
  put_number(o, "mean", c.mean_mhz, none);
  o["readings"] = c.readings;
  return o;
}

json hardware_json(const analysis::SpanResults& r, const char* covers) {
  json o;
  o["covers"] = covers;
  o["sm_clock_mhz"] = clock_json(r.sm_clock);
  o["mem_clock_mhz"] = clock_json(r.mem_clock);
  if (r.throttle_reasons) {
    o["throttle_reasons"] = *r.throttle_reasons;
  } else {
    o["throttle_reasons"] = nullptr;
    o["throttle_reasons_reason"] = "NVML could not say why the clocks were held";
  }
  json power;
  const char* none = "no power limit reading in this span";
  put_number(power, "min", r.power_limit_min_w, none);
  put_number(power, "max", r.power_limit_max_w, none);
  o["power_limit_w"] = power;
  return o;
}

std::string or_default(const std::string& s, const char* fallback) {
  return s.empty() ? fallback : s;
}

json headline_json(const analysis::SpanResults& r, double noise_floor_points) {
  const analysis::Headline& h = r.headline;
  json o;
  std::string gpu_reason = or_default(gpu_util_missing_words(r), "GPU-Util not available");
  std::string die_reason = or_default(die_util_missing_words(r), "DIE-Util not available");
  std::string gap_reason = or_default(gap_missing_words(r), "the gap needs both GPU-Util and DIE-Util");
  std::string split_reason = or_default(split_missing_words(r), gap_reason.c_str());
  put_tenths(o, "gpu_util_pct", h.gpu_util_tenths, gpu_reason);
  put_tenths(o, "die_util_pct", h.die_util_tenths, die_reason);
  put_tenths(o, "gap_points", h.gap_tenths, gap_reason);
  put_tenths(o, "stranded_points", h.stranded_tenths, die_reason);
  put_tenths(o, "idle_points", h.idle_tenths, split_reason);
  put_tenths(o, "active_points", h.active_tenths, split_reason);
  o["gap_within_noise_floor"] = h.gap_within_noise_floor;
  put_number(o, "noise_floor_points", noise_floor_points, "GPU-Util's resolution is not known");
  return o;
}

json idle_process_json(const std::optional<analysis::IdleProcess>& p) {
  if (!p) return nullptr;
  json o;
  o["pid"] = p->pid;
  o["name"] = p->name;
  put_number(o, "cores", p->cores, "no CPU reading while the GPU idled");
  put_number(o, "threads", p->threads, "no thread count while the GPU idled");
  put_number(o, "busiest_thread_pct", p->busiest_thread_pct, "no thread reading while the GPU idled");
  return o;
}

json idle_explained_json(const analysis::IdleExplanation& x, int gpu_index) {
  json o;
  const std::string code = idle_verdict_code(x.verdict);
  if (code.empty()) {
    o["verdict"] = nullptr;
    o["verdict_reason"] = or_default(idle_not_explained_words(x.why_not), "not explained");
  } else {
    o["verdict"] = code;
  }
  o["wording"] = idle_verdict_words(x, gpu_index);
  o["host"] = idle_host_words(x);
  const char* none = "the recording has no such host stream, or no reading while the GPU idled";
  put_number(o, "idle_points", x.idle_points, "no GPU-Util over the span");
  o["idle_observed_s"] = x.idle_observed_s;
  o["busy_observed_s"] = x.busy_observed_s;
  put_int(o, "logical_cpus", x.logical_cpus, x.logical_cpus > 0, "not recorded");
  put_number(o, "command_cores", x.command_cores, none);
  put_number(o, "command_cores_while_busy", x.command_cores_busy, none);
  put_number(o, "workers", x.workers, none);
  put_number(o, "worker_cores", x.worker_cores, none);
  put_number(o, "worker_cores_while_busy", x.worker_cores_busy, none);
  put_number(o, "worker_capacity_cores", x.worker_capacity_cores, "no worker processes");
  o["worker_names"] = x.worker_names;
  auto put_process = [&](const std::string& key, const std::optional<analysis::IdleProcess>& p) {
    if (p)
      o[key] = idle_process_json(p);
    else
      put_null(o, key, "no process of the command had a reading while the GPU idled");
  };
  put_process("root", x.root);
  put_process("busiest_process", x.busiest);
  put_process("busiest_thread_process", x.busiest_thread_owner);
  put_number(o, "host_cpu_busy_pct", x.host_cpu_busy_pct, none);
  put_number(o, "host_cpu_busy_pct_while_busy", x.host_cpu_busy_pct_busy, none);
  put_number(o, "iowait_pct", x.iowait_pct, none);
  put_number(o, "disk_read_bytes_per_s", x.disk_read_bytes_per_s, "no disk moved during the run");
  put_number(o, "disk_write_bytes_per_s", x.disk_write_bytes_per_s, "no disk moved during the run");
  put_number(o, "disk_busy_max_pct", x.disk_busy_max_pct, "no disk moved during the run");
  if (!x.busiest_disk.empty()) o["busiest_disk"] = x.busiest_disk;
  put_number(o, "memory_available_pct", x.memory_available_pct, none);
  const char* no_storage = "no process of the command had a storage read figure while the GPU idled";
  put_number(o, "own_read_share", x.own_read_share, no_storage);
  put_number(o, "own_read_bytes_per_s", x.own_read_bytes_per_s,
             "the command read no storage while the GPU idled");
  put_number(o, "own_io_cores", x.own_io_cores, "the command did no I/O while the GPU idled");
  put_number(o, "own_reader_cores", x.own_reader_cores, "the command did no I/O while the GPU idled");
  o["own_blocked_from"] =
      x.own_blocked_from == analysis::IdleExplanation::Blocked::delay_accounting ? "delay_accounting"
      : x.own_blocked_from == analysis::IdleExplanation::Blocked::thread_states  ? "thread_states"
                                                                                 : "not_seen";
  o["reader_names"] = x.reader_names;
  o["rules"] = json{{"own_read_min_bytes_per_s", analysis::kOwnReadMinBytesPerS},
                    {"own_blocked_min_threads", analysis::kOwnBlockedMinThreads},
                    {"own_read_min_idle_share", analysis::kOwnReadMinIdleShare},
                    {"own_io_min_cores", analysis::kOwnIoMinCores},
                    {"own_io_min_share", analysis::kOwnIoMinShare},
                    {"min_idle_points", analysis::kMinIdlePointsToExplain},
                    {"min_idle_observed_s", analysis::kMinIdleSecondsObserved},
                    {"loader_saturated_pct", analysis::kLoaderSaturatedPct},
                    {"one_thread_bound_pct", analysis::kOneThreadBoundPct},
                    {"host_cpu_saturated_pct", analysis::kHostCpuSaturatedPct},
                    {"iowait_bound_pct", analysis::kIoWaitBoundPct},
                    {"disk_busy_bound_pct", analysis::kDiskBusyBoundPct},
                    {"low_memory_available_pct", analysis::kLowMemoryAvailablePct}};
  return o;
}

// docs/energy.md: the span's energy, where it came from, and the part spent while DIE-Util was low.
json energy_json(const analysis::EnergyFigures& e) {
  json o;
  const std::string missing = or_default(energy_missing_words(e), "not available");
  put_number(o, "energy_j", e.energy_j, missing);
  o["energy_source"] = energy_source_code(e.source);
  if (e.counter_unused == analysis::CounterUnused::none) {
    o["counter_unused"] = nullptr;
    o["counter_unused_reason"] = e.source == analysis::EnergySource::counter
                                     ? "NVML's energy counter was used"
                                     : or_default(energy_missing_words(e), "not available");
  } else {
    o["counter_unused"] = counter_unused_code(e.counter_unused);
  }
  put_number(o, "covered_s", e.covered_s, "not computed");
  put_number(o, "coverage_pct", e.coverage_pct, "the span has no length");
  put_number(o, "mean_power_w", e.mean_power_w, missing);
  const std::string no_chip = std::isfinite(e.energy_j) ? "no usable chip sample in this span" : missing;
  put_number(o, "chip_sampled_j", e.chip_sampled_j, no_chip);
  put_number(o, "stranded_j", e.stranded_j, no_chip);
  put_number(o, "stranded_pct", e.stranded_pct, no_chip);
  o["stranded_rule"] = json{{"die_util_below_pct", analysis::kStrandedEnergyDieUtilPct}};
  o["wording"] = energy_words(e);
  // docs/energy.md#joules-per-tflop: only in reports of recordings that hold the program's FLOPs.
  if (e.flops_told) {
    put_number(o, "flops", e.flops, flops_missing_words(e));
    o["flops_source"] = e.flops_source == analysis::FlopsSource::program ? "program" : "none";
    put_number(o, "joules_per_tflop", e.joules_per_tflop, joules_per_tflop_missing_words(e));
    o["joules_per_tflop_wording"] = joules_per_tflop_words(e);
  }
  return o;
}

json span_json(const analysis::SpanResults& r, const analysis::Analysis& a) {
  const recording::RecordingMeta& meta = a.meta;
  json o;
  o["start_ns"] = r.start_ns;
  o["end_ns"] = r.end_ns;
  put_number(o, "span_s", r.span_s, "not computed");
  o["samples"] = json{{"read", r.samples_read},
                      {"used", r.samples_used},
                      {"dropped_first", r.dropped_first},
                      {"dropped_broken", r.dropped_broken}};

  // Chip coverage and its gate.
  put_number(o, "chip_covered_s", r.chip_covered_s, "not computed");
  put_number(o, "chip_coverage_pct", r.chip_coverage_pct, "the span has no length");
  bool duty = meta.duty_period_ms > 0 && meta.duty_on_ms > 0;
  put_number(
      o, "chip_scheduled_s", r.chip_scheduled_s,
      duty ? "the counters' schedule is not known" : "counters always on: coverage is of the whole span");
  json gate;
  gate["min_pct"] = analysis::kMinChipCoveragePct;
  gate["of"] = duty ? "scheduled counter time" : "span";
  gate["passed"] = !r.partial;
  gate["partial"] = r.partial;
  if (r.partial) gate["wording"] = partial_words(r);
  o["chip_coverage_gate"] = gate;

  // DIE-Util and its parts.
  put_number(o, "die_util_pct", r.die_util_pct,
             or_default(die_util_missing_words(r), "DIE-Util not available"));
  json units = json::array();
  json recipes = json::object();
  json flags = json::object();
  for (const analysis::ColumnSummary& s : r.units) {
    const recording::ColumnDef* def = find_unit(meta, s.key);
    units.push_back(column_json(s, def));
    if (def) {
      recipes[s.key] = recipe_json(def->recipe);
      flags[s.key] = flags_json(def->flags);
    }
  }
  o["units"] = units;
  o["unit_recipes"] = recipes;
  o["unit_flags"] = flags;
  json diagnostics = json::array();
  for (const analysis::ColumnSummary& s : r.diagnostics)
    diagnostics.push_back(column_json(s, find_column(meta.diagnostics, s.key)));
  o["diagnostics"] = diagnostics;

  if (r.limiting_unit) {
    o["limiting_unit"] = *r.limiting_unit;
    const recording::ColumnDef* def = find_unit(meta, *r.limiting_unit);
    o["limiting_unit_label"] = def ? def->label : *r.limiting_unit;
  } else {
    o["limiting_unit"] = nullptr;
    o["limiting_unit_reason"] = or_default(limiting_unit_missing_words(r), "no unit qualifies");
  }
  o["limiting_unit_rule"] = json{{"min_availability_pct", analysis::kMinLimitingAvailabilityPct},
                                 {"min_busy_pct", analysis::kMinBusyPct}};

  // GPU-Util over the same time, and its gate.
  std::string gpu_reason = or_default(gpu_util_missing_words(r), "GPU-Util not available");
  put_number(o, "gpu_util_pct", r.gpu_util_pct, gpu_reason);
  if (const std::string covers = gpu_util_covers_words(r); !covers.empty()) o["gpu_util_covers"] = covers;
  o["gpu_util_source"] = or_default(gpu_util_from_words(r.gpu_util_from), "none");
  // Standing alone over the whole span, GPU-Util has no chip-sampled time to cover a share of.
  put_number(
      o, "gpu_util_coverage_pct", r.gpu_util_coverage_pct,
      std::isfinite(r.gpu_util_pct) ? "no chip-sampled time: GPU-Util is over the whole span" : gpu_reason);
  o["gpu_util_coverage_gate"] =
      json{{"min_pct", analysis::kMinGpuUtilCoveragePct},
           {"passed", std::isfinite(r.gpu_util_coverage_pct) &&
                          r.gpu_util_coverage_pct >= analysis::kMinGpuUtilCoveragePct}};
  put_number(o, "gpu_util_whole_span_pct", r.gpu_util_whole_span_pct,
             r.partial ? "NVML covered less than 90% of the span" : "shown only beside a partial result");
  put_number(o, "gpu_util_whole_span_coverage_pct", r.gpu_util_whole_span_coverage_pct,
             r.partial ? "NVML's coverage of the span is not known" : "shown only beside a partial result");

  // Full-precision difference; the headline's gap follows the rounding and noise-floor rules.
  double raw_gap = r.gpu_util_pct - r.die_util_pct;
  put_number(o, "gap_points", r.headline.gap_tenths ? raw_gap : analysis::kNaN,
             or_default(gap_missing_words(r), "the gap needs both GPU-Util and DIE-Util"));
  o["headline"] = headline_json(r, meta.gpu_util_resolution_pct / 2);

  // What the host did while the GPU idled; only recordings with host probes have it
  // (docs/method.md#stranded-idle-explained).
  if (r.idle_explained.why_not != analysis::IdleNotExplained::no_host_streams)
    o["idle_explained"] = idle_explained_json(r.idle_explained, a.meta.gpu.index);

  o["energy"] = energy_json(r.energy);

  json rates = json::object();
  for (const auto& [key, value] : r.rates_per_s)
    put_number(rates, key, value, "no raw count in the usable samples");
  o["rates_per_s"] = rates;
  return o;
}

json gpu_json(const recording::GpuIdentity& g) {
  json o;
  put_int(o, "index", g.index, g.index >= 0, "the recording does not give the GPU's index");
  o["uuid"] = g.uuid;
  o["model"] = g.model;
  o["chip"] = g.chip;
  o["driver"] = g.driver;
  put_int(o, "compute_capability", g.compute_capability, g.compute_capability > 0, "not recorded");
  put_int(o, "sm_count", g.sm_count, g.sm_count > 0, "not recorded");
  put_int(o, "l2_bytes", g.l2_bytes, g.l2_bytes > 0, "not recorded");
  return o;
}

json collection_json(const analysis::Analysis& a) {
  const recording::RecordingMeta& m = a.meta;
  json o;
  o["unit_table"] = m.unit_table;
  put_number(o, "interval_ms", m.interval_ms, "not recorded");
  put_number(o, "drain_ms", m.drain_ms, "not recorded");
  put_number(o, "gpu_util_resolution_pct", m.gpu_util_resolution_pct, "not recorded");
  o["gpu_util_source"] = or_default(gpu_util_from_words(a.run.gpu_util_from), "none");
  json duty;
  const bool on = std::isfinite(m.duty_period_ms) && std::isfinite(m.duty_on_ms) && m.duty_period_ms > 0 &&
                  m.duty_on_ms > 0;
  duty["enabled"] = on;
  if (on) {
    duty["on_ms"] = m.duty_on_ms;
    duty["period_ms"] = m.duty_period_ms;
    duty["scheduled_pct"] = 100.0 * m.duty_on_ms / m.duty_period_ms;
  }
  o["duty"] = duty;
  return o;
}

std::string basename_of(const std::string& path) {
  auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

json workload_json(const analysis::Analysis& a, const ReportContext& ctx) {
  json o;
  if (!a.meta.command.empty()) {
    o["name"] = basename_of(a.meta.command.front());
  } else {
    o["name"] = nullptr;
    o["name_reason"] = "the recording names no measured command";
  }
  o["command"] = a.meta.command;
  if (ctx.run_end) {
    o["exit_code"] = ctx.run_end->exit_code;
    o["ended"] = run_ending_text(ctx.run_end->ending);  // as the recording's end line reads
  } else {
    o["exit_code"] = nullptr;
    o["exit_code_reason"] = a.truncated_input ? "the recording was cut off before the run ended"
                                              : "the recording does not say how the run ended";
  }
  return o;
}

json hygiene_json(const analysis::Hygiene& h, recording::TimeNs run_start_ns) {
  json o;
  const char* unread = "NVIDIA's process list could not be read";
  put_int(o, "compute_holders_max", h.compute_holders_max.value_or(0), h.compute_holders_max.has_value(),
          unread);
  put_int(o, "graphics_holders_max", h.graphics_holders_max.value_or(0), h.graphics_holders_max.has_value(),
          unread);
  o["exited_holders"] = h.exited_holders;
  if (h.holders_recorded) {
    json others = json::array();
    for (const analysis::OtherProcess& p : h.other_processes)
      others.push_back(json{{"pid", p.pid},
                            {"name", p.name},
                            {"first_s", static_cast<double>(p.first_ns - run_start_ns) * 1e-9}});
    o["other_processes"] = others;
    o["other_processes_max"] = h.other_processes_max;
  } else {
    const char* no_pids =
        "the recording keeps no pids of the processes on the GPU (an older recording, or the agent's)";
    put_null(o, "other_processes", no_pids);
    put_null(o, "other_processes_max", no_pids);
  }
  if (const std::string shared = shared_gpu_words(h); !shared.empty()) o["shared"] = shared;
  json jumps = json::array();
  for (const recording::ClockJump& j : h.clock_jumps)
    jumps.push_back(json{{"ts_ns", j.ts_ns}, {"step_ns", j.step_ns}});
  o["clock_jumps"] = jumps;
  json notes = json::array();
  for (const recording::ClockJump& j : h.clock_jumps) notes.push_back(clock_jump_words(j, run_start_ns));
  o["notes"] = notes;
  return o;
}

// Cut off: no end record, or a last record only half written (docs/report.md#the-terminal-headline). The
// headline says so first: every figure covers only what was written before the cut.
bool cut_off(const analysis::Analysis& a) {
  if (a.truncated_input) return true;
  for (const analysis::AnalysisFinding& f : a.findings)
    if (f.kind == analysis::AnalysisFinding::Kind::no_end_record) return true;
  return false;
}

}  // namespace

json build_report(const analysis::Analysis& a, const ReportContext& ctx) {
  json r;
  r["schema"] = core::kReportSchemaVersion;
  r["method"] = a.method;
  r["tool"] = json{{"name", "diescope"}, {"version", core::kToolVersion}};
  r["run_type"] = a.meta.run_type;
  r["source"] = json{{"recording", ctx.recording.empty() ? "<memory>" : ctx.recording},
                     {"format_version", a.meta.format_version},
                     {"recorded_by", a.meta.tool_version},
                     {"recorded_method", a.meta.method},
                     {"truncated", a.truncated_input},
                     {"cut_off", cut_off(a)}};
  r["host"] = a.meta.host;
  r["gpu"] = gpu_json(a.meta.gpu);
  r["collection"] = collection_json(a);
  r["die_util_algorithm"] = json{{"name", "max-unit"}, {"status", "experimental"}};
  r["results"] = span_json(a.run, a);

  json window;
  window["found"] = a.window.found;
  window["how"] = window_words(a.window.finding);
  if (a.window.found) {
    const analysis::SpanResults& w = a.window.results;
    window["start_ns"] = w.start_ns;
    window["end_ns"] = w.end_ns;
    window["start_s"] = static_cast<double>(w.start_ns - a.run.start_ns) / 1e9;
    window["end_s"] = static_cast<double>(w.end_ns - a.run.start_ns) / 1e9;
    window["results"] = span_json(w, a);
  }
  r["window"] = window;
  // The clocks cover the steady window when there is one (docs/method.md#the-steady-window).
  r["hardware"] = a.window.found ? hardware_json(a.window.results, "window") : hardware_json(a.run, "run");
  r["hygiene"] = hygiene_json(a.hygiene, a.meta.start_ns);

  json notes = json::array();
  for (const recording::Note& n : a.notes)
    notes.push_back(json{{"ts_ns", n.ts_ns}, {"topic", n.topic}, {"text", n.text}});
  for (const analysis::AnalysisFinding& f : a.findings)
    notes.push_back(json{{"ts_ns", f.ts_ns}, {"topic", "analysis"}, {"text", finding_words(f)}});
  if (a.truncated_input)
    notes.push_back(
        json{{"ts_ns", a.run.end_ns},
             {"topic", "recording"},
             {"text", "the recording was cut off mid-record; it was read up to its last complete record"}});
  if (a.meta.method != 0 && a.meta.method != a.method)
    notes.push_back(json{{"ts_ns", a.run.start_ns},
                         {"topic", "method"},
                         {"text", "recorded by a method " + std::to_string(a.meta.method) +
                                      " collector, analysed with method " + std::to_string(a.method)}});
  r["notes"] = notes;

  r["calibration"] =
      ctx.calibration ? *ctx.calibration : json{{"status", "unvalidated"}, {"reason", kCalibrationReason}};
  r["cost"] = json{{"estimate", nullptr}, {"reason", kCostReason}};
  r["workload"] = workload_json(a, ctx);
  r["expected"] = json{
      {"workload", r["workload"]["name"]}, {"architecture", a.meta.gpu.chip}, {"die_util_pct", nullptr},
      {"gpu_util_pct", nullptr},           {"gap_points", nullptr},           {"reason", kExpectedReason}};
  if (r["expected"]["workload"].is_null())
    r["expected"]["workload_reason"] = "the recording names no measured command";
  return r;
}

std::string dump_report(const json& report) {
  return report.dump(2) + "\n";
}

json load_report(const std::filesystem::path& path) {
  const std::string name = path.string();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw core::InputError(name, 0, "no such file",
                           "check the path; a report is the report.json that `diescope report` writes");
  if (std::filesystem::is_directory(path, ec))
    throw core::InputError(name, 0, "is a folder, not a report", "name the report.json inside it");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw core::InputError(name, 0, "cannot be opened", "check that it is readable");
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  json report;
  try {
    report = json::parse(text);
  } catch (const json::parse_error& e) {
    // Turn the byte offset into a line number for the message.
    long line = 1;
    std::size_t upto = std::min<std::size_t>(e.byte, text.size());
    for (std::size_t i = 0; i + 1 < upto; ++i)
      if (text[i] == '\n') ++line;
    throw core::InputError(name, line, "not valid JSON", "re-create it with `diescope report RECORDING`");
  }
  if (!report.is_object() || !report.contains("schema") || !report.contains("results"))
    throw core::InputError(name, 0, "JSON, but not a diescope report (no schema or results field)",
                           "pass a report.json written by `diescope report`, or the recording itself");
  if (!report["schema"].is_number_integer() || report["schema"].get<int>() != core::kReportSchemaVersion)
    throw core::InputError(name, 0,
                           "report schema " + report["schema"].dump() + ", this diescope reads schema " +
                               std::to_string(core::kReportSchemaVersion),
                           "re-analyse the recording with this diescope: `diescope report RECORDING`");
  return report;
}

std::string format_tenths(int tenths) {
  std::string sign = tenths < 0 ? "-" : "";
  int mag = tenths < 0 ? -tenths : tenths;
  return sign + std::to_string(mag / 10) + "." + std::to_string(mag % 10);
}

}  // namespace diescope::report
