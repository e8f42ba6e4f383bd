#include "diescope/calibrate/calibration_file.hpp"

#include <cmath>
#include <cstdlib>
#include <ctime>
#include <type_traits>

#include <fmt/core.h>

#include "diescope/core/atomic_file.hpp"
#include "diescope/core/error.hpp"

#ifndef DIESCOPE_BUILD_COMMIT
#define DIESCOPE_BUILD_COMMIT "unknown"
#endif

namespace diescope::calibrate {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// NaN (not available) is null in the file, never 0.
json num(double x) {
  return std::isfinite(x) ? json(x) : json(nullptr);
}
json opt_num(const std::optional<double>& x) {
  return x ? num(*x) : json(nullptr);
}
// Sets o[key]; a value that is not available is null with "<key>_reason" beside it.
void set_num(json& o, const std::string& key, double x, const std::string& reason) {
  o[key] = num(x);
  if (!std::isfinite(x)) o[key + "_reason"] = reason;
}
void set_opt(json& o, const std::string& key, const std::optional<double>& x, const std::string& reason) {
  set_num(o, key, x ? *x : std::nan(""), reason);
}

// ---- reading, with a reason for every way a field can be wrong ----

[[noreturn]] void bad_field(const std::string& path, const char* want) {
  throw CalibrationFormatError(fmt::format("field {} is missing or not {}", path, want));
}

// The member, or null when it is absent (or `object` is no object).
const json& field(const json& object, const char* key) {
  static const json kNull;
  if (!object.is_object() || !object.contains(key)) return kNull;
  return object.at(key);
}

std::string get_string(const json& object, const char* key, const std::string& prefix, bool required = true) {
  const std::string path = prefix + key;
  const json& v = field(object, key);
  if (v.is_null() && !required) return {};
  if (!v.is_string()) bad_field(path, "a string");
  return v.get<std::string>();
}

template <typename Int>
Int get_int(const json& object, const char* key, const std::string& prefix, bool required = true) {
  const std::string path = prefix + key;
  const json& v = field(object, key);
  if (v.is_null() && !required) return 0;
  if (!v.is_number_integer()) bad_field(path, "an integer");
  return v.get<Int>();
}

bool get_bool(const json& object, const char* key, const std::string& prefix) {
  const json& v = field(object, key);
  if (!v.is_boolean()) bad_field(prefix + key, "true or false");
  return v.get<bool>();
}

recording::UnitRecipe parse_recipe(const json& j, const std::string& path) {
  if (!j.is_object()) bad_field(path, "an object");
  recording::UnitRecipe r;
  const std::string combine = get_string(j, "combine", path + ".");
  if (combine == "counter")
    r.combine = recording::UnitRecipe::Combine::counter;
  else if (combine == "mean")
    r.combine = recording::UnitRecipe::Combine::mean;
  else
    throw CalibrationFormatError(
        fmt::format("field {}.combine is \"{}\", not \"counter\" or \"mean\"", path, combine));
  const json& counters = field(j, "counters");
  if (!counters.is_array()) bad_field(path + ".counters", "an array");
  for (const json& c : counters) {
    if (!c.is_string() || c.get<std::string>().empty()) bad_field(path + ".counters[]", "a counter name");
    r.counters.push_back(c.get<std::string>());
  }
  const std::size_t want = r.combine == recording::UnitRecipe::Combine::mean ? 2 : 1;
  if (r.counters.size() != want)
    throw CalibrationFormatError(fmt::format("field {}.counters has {} name(s); \"{}\" takes {}", path,
                                             r.counters.size(), combine, want));
  return r;
}

// ---- writing the checks and the device model ----

const char* check_kind_name(CheckKind k) {
  return k == CheckKind::expected_reading ? "expected_reading" : "proportional";
}

const char* steady_clock_name(SteadyClock c) {
  switch (c) {
    case SteadyClock::none:
      return "none";
    case SteadyClock::sm:
      return "sm";
    case SteadyClock::memory:
      return "memory";
  }
  return "none";
}

json rule_json(const UnitRule& r) {
  json j{{"kind", check_kind_name(r.kind)}, {"work", r.work}};
  if (r.kind == CheckKind::expected_reading) {
    j["relative_tolerance"] = r.relative_tolerance;
    j["min_tolerance_points"] = r.min_tolerance_points;
  } else {
    j["implied_peak_spread"] = r.implied_peak_spread;
    j["implied_peak_per"] = r.per_sm_cycle ? "sm_cycle" : "second";
    j["steady_clock"] = steady_clock_name(r.steady_clock);
    set_opt(j, "bytes_ratio_tolerance", r.bytes_ratio_tolerance,
            "the unit table has no byte total to compare");
  }
  j["min_coverage"] = kMinCoverage;
  set_opt(j, "ceiling_min_pct", r.ceiling_min_pct,
          "recorded, not judged: no measured figure says what the best known work reaches");
  j["why"] = r.why;
  return j;
}

// Only the figures the unit's kind of check uses. A step that was not counted says why in "reason",
// which also stands for any of its figures that are null.
json step_json(const UnitRule& rule, const StepCheck& s) {
  json j{{"name", s.name},
         {"role", step_role_name(s.role)},
         {"loaded_sms", s.loaded_sms},
         {"counted", s.counted}};
  if (!s.counted) j["reason"] = s.not_counted;
  const std::string unknown = s.counted ? "not read" : s.not_counted;
  set_num(j, "coverage", s.coverage, unknown);
  set_num(j, "reading_pct", s.reading_pct, unknown);
  set_num(j, "sm_clock_mhz", s.sm_clock_mhz, "not read");
  if (rule.kind == CheckKind::expected_reading) {
    set_num(j, "expected_pct", s.expected_pct, unknown);
    set_num(j, "tolerance_points", s.tolerance_pts, unknown);
    if (s.within) j["within"] = *s.within;
  } else {
    set_num(j, "implied_peak", s.implied_peak, unknown);
    if (rule.bytes_ratio_tolerance) set_num(j, "bytes_ratio", s.bytes_ratio, unknown);
    if (rule.steady_clock == SteadyClock::memory) {
      set_num(j, "mem_clock_min_mhz", s.mem_clock_min_mhz, "not read");
      set_num(j, "mem_clock_max_mhz", s.mem_clock_max_mhz, "not read");
    }
  }
  return j;
}

json contexts_json(const std::vector<LaunchContext>& contexts) {
  json out = json::array();
  for (const LaunchContext& c : contexts) {
    json o{{"blocks", c.blocks}, {"threads_per_block", c.threads_per_block}};
    set_num(o, "scalar_ops", c.scalar_ops, "not counted");
    set_num(o, "mma_ops", c.mma_ops, "not counted");
    out.push_back(o);
  }
  return out;
}

json stream_json(const DeviceModel& m) {
  json j;
  json timings = json::array();
  for (const StreamTiming& t : m.stream_timings) {
    json secs = json::array();
    for (double s : t.seconds) secs.push_back(num(s));
    timings.push_back(
        json{{"kernel", stream_kernel_name(t.kernel)}, {"elements", t.elements}, {"seconds", secs}});
  }
  j["timings"] = timings;
  if (!m.stream) {
    set_num(j, "bandwidth_bytes_per_s", std::nan(""), "the STREAM kernels were not run");
    return j;
  }
  const StreamFit& f = *m.stream;
  json kernels = json::array();
  for (const StreamKernelRate& k : f.kernels) {
    json o{{"kernel", stream_kernel_name(k.kernel)}, {"bytes", k.bytes}, {"repeats", k.repeats}};
    set_num(o, "best_seconds", k.best_seconds, "no repeat has a positive, finite time");
    set_num(o, "bytes_per_s", k.bytes_per_s, k.reason);
    if (std::isfinite(k.bytes_per_s) && std::isfinite(f.dram_implied_peak_bytes_per_s))
      o["pct_of_dram_implied_peak"] = k.bytes_per_s / f.dram_implied_peak_bytes_per_s * 100;
    kernels.push_back(o);
  }
  j["kernels"] = kernels;
  set_num(j, "bandwidth_bytes_per_s", f.bandwidth_bytes_per_s, f.reason);
  set_num(j, "dram_implied_peak_bytes_per_s", f.dram_implied_peak_bytes_per_s, f.dram_peak_reason);
  if (!f.best_kernel.empty()) j["best_kernel"] = f.best_kernel;
  if (!f.note.empty()) j["note"] = f.note;
  return j;
}

// A working-set sweep's points and capacity fit (device_model.cache and cache_reread share the form).
json cache_json(const std::vector<WorkingSetPoint>& sweep, const std::optional<CapacityFit>& capacity) {
  json points = json::array();
  for (const WorkingSetPoint& p : sweep) {
    json o{{"k", p.k},
           {"working_set_bytes", p.working_set_bytes},
           {"requested_bytes", p.requested_bytes},
           {"distinct_bytes", p.distinct_bytes}};
    set_num(o, "seconds", p.seconds, "not timed");
    set_num(o, "requested_bytes_per_s", requested_rate(p), "no positive time");
    o["loops"] = p.loops;
    set_num(o, "rank_ms", p.rank_ms, "the capacity fit places no rate on this point");
    set_num(o, "bound_ms", p.bound_ms, "no DRAM ceiling");
    points.push_back(o);
  }
  json j{{"points", points}};
  if (!capacity) {
    j["outcome"] = "not_run";
    j["reason"] = "the working-set sweep was not run";
    return j;
  }
  std::visit(
      [&j](const auto& fit) {
        using T = std::decay_t<decltype(fit)>;
        if constexpr (std::is_same_v<T, CapacityTransition>) {
          j["outcome"] = "transition";
          j["cached_ws_bytes"] = fit.cached_ws;
          j["spilled_ws_bytes"] = fit.spilled_ws;
          j["capacity_bytes"] = fit.capacity;
          j["monotone"] = fit.monotone;
          j["cache_bytes_per_s"] = num(fit.cache_rate);
        } else if constexpr (std::is_same_v<T, CapacityAllCached>) {
          j["outcome"] = "all_cached";
          j["largest_ws_bytes"] = fit.largest_ws;
          j["cache_bytes_per_s"] = num(fit.cache_rate);
        } else if constexpr (std::is_same_v<T, CapacityAllSpilled>) {
          j["outcome"] = "all_spilled";
          j["smallest_ws_bytes"] = fit.smallest_ws;
        } else if constexpr (std::is_same_v<T, CapacityNoTransition>) {
          j["outcome"] = "no_transition";
          j["contrast"] = num(fit.contrast);
        } else {
          j["outcome"] = "too_few_points";
          j["reason"] = fit.reason;
        }
      },
      *capacity);
  return j;
}

json issue_json(const DeviceModel& m) {
  json points = json::array();
  for (const IssuePoint& p : m.issue_points) {
    json o{{"k", p.k}, {"kernels", p.kernels}, {"contexts", contexts_json(p.contexts)}};
    set_num(o, "scalar_ops", p.scalar_ops, "not counted");
    set_num(o, "mma_ops", p.mma_ops, "not counted");
    set_num(o, "seconds", p.seconds, "not timed");
    o["loops"] = p.loops;
    set_num(o, "rank_ms", p.rank_ms, "no issue-rate fit");
    set_num(o, "bound_ms", p.bound_ms, "no DRAM ceiling, or the output's shape is not known");
    points.push_back(o);
  }
  json j{{"points", points}};
  if (!m.issue) {
    j["outcome"] = "not_run";
    j["reason"] = "the issue-rate sweep was not run";
  } else if (const auto* f = std::get_if<IssueFit>(&*m.issue)) {
    j["outcome"] = "fit";
    j["rate_ops_per_s"] = num(f->rate);
    j["latency_s"] = num(f->latency_s);
    j["max_residual"] = num(f->max_residual);
    j["fitted_points"] = f->points;
  } else {
    j["outcome"] = "unfittable";
    j["reason"] = std::get<IssueUnfittable>(*m.issue).reason;
  }
  return j;
}

json fill_json(const DeviceModel& m) {
  json points = json::array();
  for (const LaunchPoint& p : m.launch_points) {
    json o{{"geometry", p.geometry},
           {"m", p.m},
           {"n", p.n},
           {"k", p.k},
           {"contexts", contexts_json(p.contexts)}};
    set_num(o, "seconds", p.seconds, "not timed");
    points.push_back(o);
  }
  json j{{"points", points}};
  if (!m.fill) {
    j["outcome"] = "not_run";
    j["reason"] = "the launch-fill sweep was not run";
  } else if (const auto* f = std::get_if<FillFit>(&*m.fill)) {
    j["outcome"] = "fit";
    j["multiprocessors"] = f->cores;
    j["saturation_threads"] = f->saturation;
    j["rate_ops_per_s"] = num(f->rate);
    j["max_residual"] = num(f->max_residual);
    j["partial_points"] = f->partial_points;
    j["fitted_points"] = f->points;
    j["starved_points"] = f->starved_points;
    set_opt(j, "raw_rate_ops_per_s", f->raw_rate, "no finite fit over the raw operations");
    set_opt(j, "raw_max_residual", f->raw_residual, "no finite fit over the raw operations");
    if (f->uncapped) {
      j["uncapped"] =
          json{{"saturation_threads", f->uncapped->first}, {"max_residual", num(f->uncapped->second)}};
    } else {
      j["uncapped"] = nullptr;
      j["uncapped_reason"] = "no candidate gives a finite fit under the uncapped form";
    }
  } else {
    j["outcome"] = "unfittable";
    j["reason"] = std::get<FillUnfittable>(*m.fill).reason;
  }
  return j;
}

}  // namespace

std::string recipe_text(const recording::UnitRecipe& recipe) {
  if (recipe.combine == recording::UnitRecipe::Combine::mean && recipe.counters.size() == 2)
    return "mean of " + recipe.counters[0] + " and " + recipe.counters[1];
  std::string out = recipe.combine == recording::UnitRecipe::Combine::mean ? "mean of" : "counter";
  for (const std::string& c : recipe.counters) out += " " + c;
  return out;
}

json recipe_json(const recording::UnitRecipe& recipe) {
  return json{{"combine", recipe.combine == recording::UnitRecipe::Combine::mean ? "mean" : "counter"},
              {"counters", recipe.counters}};
}

CalibratedUnit calibrated_unit(const recording::ColumnDef& column, const UnitRule& rule,
                               const UnitCheck& check) {
  CalibratedUnit u;
  u.key = column.key;
  u.label = column.label;
  u.recipe = column.recipe;
  u.verdict = check.verdict;
  u.reason = check.reason;
  if (std::isfinite(check.ceiling_pct))
    u.ceiling_pct = check.ceiling_pct;
  else
    u.ceiling_reason = check.ceiling_reason.empty() ? "no counted step at full load" : check.ceiling_reason;
  json steps = json::array();
  for (const StepCheck& s : check.steps) steps.push_back(step_json(rule, s));
  u.check = json{{"rule", rule_json(rule)}, {"steps", steps}};
  if (rule.kind == CheckKind::proportional)
    set_num(u.check, "implied_peak_spread", check.implied_peak_spread, "fewer than two steps counted");
  return u;
}

json device_model_json(const DeviceModel& model) {
  json j{{"stream", stream_json(model)},
         {"cache", cache_json(model.working_set, model.cache)},
         {"issue", issue_json(model)},
         {"fill", fill_json(model)}};
  // Only a full calibration runs the re-read sweep; a file without it has no cache_reread.
  if (!model.reread.empty()) {
    j["cache_reread"] = cache_json(model.reread, model.cache_reread);
    j["cache_reread"]["note"] =
        "diescope's re-read sweep: one buffer read again and again with L1-bypassing loads, so a point's "
        "working set is the buffer itself; beside the method's contraction sweep (device_model.cache), whose "
        "working set is the method's proxy";
  }
  return j;
}

json calibration_to_json(const CalibrationFile& f) {
  json units = json::array();
  for (const CalibratedUnit& u : f.units) {
    json o{{"key", u.key},
           {"label", u.label},
           {"recipe", recipe_json(u.recipe)},
           {"verdict", verdict_name(u.verdict)},
           {"reason", u.reason},
           {"ceiling_pct", opt_num(u.ceiling_pct)}};
    if (!u.ceiling_pct)
      o["ceiling_pct_reason"] = u.ceiling_reason.empty() ? "not measured" : u.ceiling_reason;
    o["check"] = u.check;
    units.push_back(o);
  }
  json gpu{{"model", f.gpu.model},
           {"driver", f.gpu.driver},
           {"chip", f.gpu.chip},
           {"uuid", f.gpu.uuid},
           {"compute_capability", f.gpu.compute_capability},
           {"sm_count", f.gpu.sm_count},
           {"l2_bytes", f.gpu.l2_bytes > 0 ? json(f.gpu.l2_bytes) : json(nullptr)}};
  if (f.gpu.l2_bytes <= 0) gpu["l2_bytes_reason"] = "the driver did not report the L2 size";
  return json{{"kind", kCalibrationKind},
              {"schema", f.schema},
              {"method", f.method},
              {"tool", json{{"name", "diescope"}, {"version", f.tool_version}}},
              {"commit", f.commit},
              {"date", f.date},
              {"quick", f.quick},
              {"gpu", gpu},
              {"unit_table", f.unit_table},
              {"units", units},
              {"device_model", f.device_model}};
}

std::string dump_calibration(const CalibrationFile& file) {
  return calibration_to_json(file).dump(2) + "\n";
}

CalibrationFile calibration_from_json(const json& j) {
  if (!j.is_object()) throw CalibrationFormatError("not a JSON object");
  CalibrationFile f;
  f.schema = get_int<int>(j, "schema", "");
  f.method = get_int<int>(j, "method", "");
  if (j.contains("tool") && j["tool"].is_object())
    f.tool_version = get_string(j["tool"], "version", "tool.", false);
  f.commit = get_string(j, "commit", "");
  f.date = get_string(j, "date", "");
  if (!parse_utc_date(f.date))
    throw CalibrationFormatError(
        fmt::format("field date \"{}\" is not a UTC time like 2026-11-30T12:34:56Z", f.date));
  f.quick = get_bool(j, "quick", "");
  const json& gpu = field(j, "gpu");
  if (!gpu.is_object()) bad_field("gpu", "an object");
  f.gpu.model = get_string(gpu, "model", "gpu.");
  f.gpu.driver = get_string(gpu, "driver", "gpu.");
  f.gpu.chip = get_string(gpu, "chip", "gpu.", false);
  f.gpu.uuid = get_string(gpu, "uuid", "gpu.", false);
  f.gpu.compute_capability = get_int<int>(gpu, "compute_capability", "gpu.", false);
  f.gpu.sm_count = get_int<int>(gpu, "sm_count", "gpu.", false);
  f.gpu.l2_bytes = get_int<std::int64_t>(gpu, "l2_bytes", "gpu.", false);
  f.unit_table = get_string(j, "unit_table", "", false);
  const json& units = field(j, "units");
  if (!units.is_array()) bad_field("units", "an array");
  for (std::size_t i = 0; i < units.size(); ++i) {
    const json& u = units[i];
    const std::string path = fmt::format("units[{}]", i);
    if (!u.is_object()) bad_field(path, "an object");
    CalibratedUnit cu;
    cu.key = get_string(u, "key", path + ".");
    cu.label = get_string(u, "label", path + ".", false);
    cu.recipe = parse_recipe(field(u, "recipe"), path + ".recipe");
    const std::string verdict = get_string(u, "verdict", path + ".");
    const std::optional<Verdict> v = verdict_from_name(verdict);
    if (!v)
      throw CalibrationFormatError(
          fmt::format("field {}.verdict \"{}\" is not pass, fail, inconclusive or no_check", path, verdict));
    cu.verdict = *v;
    cu.reason = get_string(u, "reason", path + ".", false);
    const json& ceiling = field(u, "ceiling_pct");
    if (ceiling.is_number())
      cu.ceiling_pct = ceiling.get<double>();
    else if (!ceiling.is_null())
      bad_field(path + ".ceiling_pct", "a number or null");
    else
      cu.ceiling_reason = get_string(u, "ceiling_pct_reason", path + ".", false);
    if (u.contains("check")) cu.check = u["check"];
    f.units.push_back(std::move(cu));
  }
  if (j.contains("device_model")) f.device_model = j["device_model"];
  return f;
}

ModelCeilings model_ceilings(const json& model) {
  ModelCeilings c;
  auto number = [](const json& o, const char* key) -> std::optional<double> {
    if (o.is_object() && o.contains(key) && o[key].is_number() && std::isfinite(o[key].get<double>()))
      return o[key].get<double>();
    return std::nullopt;
  };
  auto outcome = [](const json& o) {
    return o.is_object() && o.contains("outcome") && o["outcome"].is_string()
               ? o["outcome"].get<std::string>()
               : "";
  };
  if (!model.is_object()) return c;
  if (model.contains("stream")) c.dram_bytes_per_s = number(model["stream"], "bandwidth_bytes_per_s");
  // The contraction sweep first, then the re-read sweep: the first with a cache rate gives both figures.
  for (const char* key : {"cache", "cache_reread"}) {
    if (!model.contains(key)) continue;
    const json& cache = model[key];
    const std::string o = outcome(cache);
    if (o != "transition" && o != "all_cached") continue;
    const std::optional<double> rate = number(cache, "cache_bytes_per_s");
    if (!rate) continue;
    c.cache_bytes_per_s = rate;
    c.cache_source = key;
    if (o == "transition" && cache.contains("capacity_bytes") && cache["capacity_bytes"].is_number_integer())
      c.cache_capacity_bytes = cache["capacity_bytes"].get<std::int64_t>();
    break;
  }
  if (model.contains("issue") && outcome(model["issue"]) == "fit")
    c.issue_ops_per_s = number(model["issue"], "rate_ops_per_s");
  if (model.contains("fill") && outcome(model["fill"]) == "fit" &&
      model["fill"].contains("saturation_threads") && model["fill"]["saturation_threads"].is_number_integer())
    c.fill_threads = model["fill"]["saturation_threads"].get<int>();
  return c;
}

std::optional<std::int64_t> parse_utc_date(std::string_view text) {
  // Exactly YYYY-MM-DDTHH:MM:SSZ; checked by printing it back, which rejects 2026-02-30 and 25:00.
  if (text.size() != 20 || text[4] != '-' || text[7] != '-' || text[10] != 'T' || text[13] != ':' ||
      text[16] != ':' || text[19] != 'Z')
    return std::nullopt;
  auto digits = [&text](std::size_t at, std::size_t count) -> int {
    int v = 0;
    for (std::size_t i = at; i < at + count; ++i) {
      if (text[i] < '0' || text[i] > '9') return -1;
      v = v * 10 + (text[i] - '0');
    }
    return v;
  };
  const int year = digits(0, 4), month = digits(5, 2), day = digits(8, 2);
  const int hour = digits(11, 2), minute = digits(14, 2), second = digits(17, 2);
  if (year < 1970 || month < 1 || day < 1 || hour < 0 || minute < 0 || second < 0) return std::nullopt;
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  const std::time_t t = timegm(&tm);
  if (t == static_cast<std::time_t>(-1)) return std::nullopt;
  if (format_utc_date(static_cast<std::int64_t>(t)) != text) return std::nullopt;
  return static_cast<std::int64_t>(t);
}

std::string format_utc_date(std::int64_t seconds) {
  const auto t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  return fmt::format("{:04d}-{:02d}-{:02d}T{:02d}:{:02d}:{:02d}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

std::string build_commit() {
  return DIESCOPE_BUILD_COMMIT;
}

std::optional<fs::path> default_calibration_dir() {
  const char* xdg = std::getenv("XDG_DATA_HOME");
  if (xdg != nullptr && xdg[0] == '/') return fs::path(xdg) / "diescope" / "calibrations";
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] != '\0')
    return fs::path(home) / ".local" / "share" / "diescope" / "calibrations";
  return std::nullopt;
}

std::string calibration_file_name(const CalibrationFile& file) {
  // Only characters safe in a file name: the chip (or model), the driver, the date and full/quick.
  auto safe = [](std::string s) {
    for (char& c : s)
      if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
            c == '_'))
        c = '_';
    return s;
  };
  std::string date;
  for (char c : file.date)
    if (c != '-' && c != ':') date.push_back(c);
  const std::string device = !file.gpu.chip.empty() ? file.gpu.chip : file.gpu.model;
  return fmt::format("{}-{}-{}-{}.json", safe(device.empty() ? "gpu" : device),
                     safe(file.gpu.driver.empty() ? "driver" : file.gpu.driver), safe(date),
                     file.quick ? "quick" : "full");
}

fs::path write_calibration(const CalibrationFile& file, const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    throw core::Error(fmt::format("cannot create the calibration folder {}: {}", dir.string(), ec.message()),
                      "check that its parent is writable, or set XDG_DATA_HOME to a folder you can write",
                      core::kExitInput);
  const std::string name = calibration_file_name(file);
  fs::path path = dir / name;
  const std::string stem = name.substr(0, name.size() - 5);  // without ".json"
  for (int n = 2; fs::exists(path, ec); ++n) path = dir / fmt::format("{}-{}.json", stem, n);
  core::write_file_atomically(path, dump_calibration(file));
  return path;
}

}  // namespace diescope::calibrate
