#include "diescope/calibrate/device_protocol.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include <fmt/core.h>

#include "diescope/core/error.hpp"

#include "internal.hpp"

namespace diescope::calibrate {
namespace {

using detail::kNaN;

// Settling margin the workload keeps at each end of a step, and what sizing its launches costs;
// only the time-left estimate uses these (the workload's own figures are in its output).
constexpr double kStepOverheadSeconds = 0.8;

[[noreturn]] void bad_reply_field(const std::string& what, const std::string& field) {
  throw core::Error("the calibration workload's " + what + " line has no usable field \"" + field + "\"",
                    "rebuild diescope and diescope-workload from the same source and run again",
                    core::kExitInput);
}

const nlohmann::json& field(const nlohmann::json& j, const std::string& what, const std::string& key) {
  if (!j.is_object() || !j.contains(key) || j.at(key).is_null()) bad_reply_field(what, key);
  return j.at(key);
}

double number(const nlohmann::json& j, const std::string& what, const std::string& key) {
  const nlohmann::json& v = field(j, what, key);
  if (!v.is_number()) bad_reply_field(what, key);
  return v.get<double>();
}
// A number, or NaN where the workload wrote null.
double number_or_nan(const nlohmann::json& j, const std::string& what, const std::string& key) {
  if (!j.is_object() || !j.contains(key)) bad_reply_field(what, key);
  const nlohmann::json& v = j.at(key);
  if (v.is_null()) return kNaN;
  if (!v.is_number()) bad_reply_field(what, key);
  return v.get<double>();
}
std::int64_t integer(const nlohmann::json& j, const std::string& what, const std::string& key) {
  const nlohmann::json& v = field(j, what, key);
  if (!v.is_number_integer()) bad_reply_field(what, key);
  return v.get<std::int64_t>();
}
std::string text(const nlohmann::json& j, const std::string& what, const std::string& key) {
  const nlohmann::json& v = field(j, what, key);
  if (!v.is_string()) bad_reply_field(what, key);
  return v.get<std::string>();
}
Interval interval(const nlohmann::json& v, const std::string& what, const std::string& key) {
  if (!v.is_array() || v.size() != 2 || !v[0].is_number_integer() || !v[1].is_number_integer())
    bad_reply_field(what, key);
  return Interval{v[0].get<recording::TimeNs>(), v[1].get<recording::TimeNs>()};
}
const nlohmann::json& points(const nlohmann::json& line, const std::string& what) {
  const nlohmann::json& p = field(line, what, "points");
  if (!p.is_array()) bad_reply_field(what, "points");
  return p;
}
std::vector<LaunchContext> contexts(const nlohmann::json& j, const std::string& what) {
  std::vector<LaunchContext> out;
  const nlohmann::json& list = field(j, what, "contexts");
  if (!list.is_array()) bad_reply_field(what, "contexts");
  for (const nlohmann::json& c : list)
    out.push_back(LaunchContext{integer(c, what, "blocks"), integer(c, what, "threads_per_block"),
                                number(c, what, "scalar_ops"), number(c, what, "mma_ops")});
  return out;
}

}  // namespace

nlohmann::json plan_request_json(const CalibrationPlan& plan) {
  nlohmann::json steps = nlohmann::json::array();
  for (std::size_t i = 0; i < plan.steps.size(); ++i) {
    const StepPlan& s = plan.steps[i];
    steps.push_back({{"index", i + 1},
                     {"unit", s.unit},
                     {"name", s.name},
                     {"workload", step_workload_name(s.workload)},
                     {"loaded_sms", s.loaded_sms},
                     {"seconds", s.seconds}});
  }
  nlohmann::json j{{"quick", plan.quick},
                   {"steps", steps},
                   {"stream", {{"elements", plan.stream.elements}, {"repeats", plan.stream.repeats}}}};
  j["working_set"] = plan.run_working_set ? nlohmann::json{{"m", plan.working_set.m},
                                                           {"n", plan.working_set.n},
                                                           {"ks", plan.working_set.ks},
                                                           {"repeats", plan.working_set.repeats}}
                                          : nlohmann::json(nullptr);
  j["issue"] = plan.run_issue ? nlohmann::json{{"m", plan.issue.m},
                                               {"n", plan.issue.n},
                                               {"ks", plan.issue.ks},
                                               {"repeats", plan.issue.repeats}}
                              : nlohmann::json(nullptr);
  if (plan.run_launch) {
    nlohmann::json geometries = nlohmann::json::array();
    for (std::size_t i = 0; i < plan.launch.geometries.size(); ++i) {
      const LaunchGeometry& g = plan.launch.geometries[i];
      nlohmann::json geometry{{"bm", g.bm}, {"bn", g.bn}, {"bk", g.bk},
                              {"tm", g.tm}, {"tn", g.tn}, {"name", g.name()}};
      // Each geometry's own sizes (settle_launch_sizes); the device side times exactly these.
      geometry["sizes"] = i < plan.launch.sizes_of.size() ? plan.launch.sizes_of[i] : plan.launch.sizes;
      geometries.push_back(std::move(geometry));
    }
    j["launch"] = {{"geometries", geometries},
                   {"sizes", plan.launch.sizes},
                   {"target_ops", plan.launch.target_ops},
                   {"max_k", plan.launch.max_k},
                   {"repeats", plan.launch.repeats}};
  } else {
    j["launch"] = nullptr;
  }
  return j;
}

WorkloadStep parse_workload_step(const nlohmann::json& line) {
  const std::string what = "step";
  WorkloadStep s;
  s.index = static_cast<int>(integer(line, what, "index"));
  s.unit = text(line, what, "unit");
  s.name = text(line, what, "name");
  s.workload = text(line, what, "workload");
  s.loaded_sms = static_cast<int>(integer(line, what, "loaded_sms"));
  s.sm_count = static_cast<int>(integer(line, what, "sm_count"));
  s.work = number(line, what, "work");
  s.peak_per_sm_per_cycle = number_or_nan(line, what, "peak_per_sm_per_cycle");
  s.sm_clock_mhz = number_or_nan(line, what, "sm_clock_mhz");
  const nlohmann::json& launches = field(line, what, "launches");
  if (!launches.is_array()) bad_reply_field(what, "launches");
  for (const nlohmann::json& l : launches) s.launches.push_back(interval(l, what, "launches"));
  s.window = interval(field(line, what, "window"), what, "window");
  return s;
}

std::vector<StreamTiming> parse_stream_timings(const nlohmann::json& line) {
  const std::string what = "stream";
  std::vector<StreamTiming> out;
  for (const nlohmann::json& p : points(line, what)) {
    const std::string name = text(p, what, "kernel");
    StreamTiming t;
    bool known = false;
    for (StreamKernel k : {StreamKernel::copy, StreamKernel::scale, StreamKernel::add, StreamKernel::triad})
      if (stream_kernel_name(k) == name) {
        t.kernel = k;
        known = true;
      }
    if (!known) bad_reply_field(what, "kernel");
    t.elements = static_cast<std::uint64_t>(integer(p, what, "elements"));
    const nlohmann::json& seconds = field(p, what, "seconds");
    if (!seconds.is_array()) bad_reply_field(what, "seconds");
    for (const nlohmann::json& s : seconds) {
      if (!s.is_number()) bad_reply_field(what, "seconds");
      t.seconds.push_back(s.get<double>());
    }
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<WorkingSetPoint> parse_working_set(const nlohmann::json& line) {
  const std::string what = line.value("calibrate", std::string("working_set"));
  const bool reread = what == "reread";
  std::vector<WorkingSetPoint> out;
  for (const nlohmann::json& p : points(line, what)) {
    WorkingSetPoint wp{integer(p, what, "k"), integer(p, what, "working_set_bytes"),
                       integer(p, what, "requested_bytes"), integer(p, what, "distinct_bytes"),
                       number(p, what, "seconds")};
    // The nest writing the output, outermost first: the contraction's blocks over n's and m's tiles,
    // then its k loop; the re-read's passes over the buffer, then its floats.
    if (reread)
      wp.loops = {wp.k, wp.distinct_bytes / 4};
    else if (line.contains("m") && line.contains("n"))
      wp.loops = {integer(line, what, "n"), integer(line, what, "m"), wp.k};
    out.push_back(std::move(wp));
  }
  return out;
}

std::vector<IssuePoint> parse_issue_points(const nlohmann::json& line) {
  const std::string what = "issue";
  std::vector<IssuePoint> out;
  for (const nlohmann::json& p : points(line, what)) {
    IssuePoint ip;
    ip.k = integer(p, what, "k");
    ip.scalar_ops = number(p, what, "scalar_ops");
    ip.mma_ops = number(p, what, "mma_ops");
    ip.kernels = static_cast<int>(integer(p, what, "kernels"));
    ip.seconds = number(p, what, "seconds");
    ip.contexts = contexts(p, what);
    // The output's shape came with the line from this version on; an older line leaves it unknown.
    if (line.contains("m") && line.contains("n")) {
      ip.m = integer(line, what, "m");
      ip.n = integer(line, what, "n");
      ip.loops = {ip.m, ip.n, ip.k};
      ip.distinct_bytes = (ip.k * (ip.m + ip.n) + ip.m * ip.n) * 4;
    }
    out.push_back(std::move(ip));
  }
  return out;
}

std::vector<LaunchPoint> parse_launch_points(const nlohmann::json& line) {
  const std::string what = "launch";
  std::vector<LaunchPoint> out;
  for (const nlohmann::json& p : points(line, what)) {
    LaunchPoint lp;
    lp.geometry = text(p, what, "geometry");
    lp.m = integer(p, what, "m");
    lp.n = integer(p, what, "n");
    lp.k = integer(p, what, "k");
    lp.seconds = number(p, what, "seconds");
    lp.contexts = contexts(p, what);
    out.push_back(std::move(lp));
  }
  return out;
}

std::optional<WorkloadLines::Begin> WorkloadLines::read(const std::string& line) {
  const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
  if (!j.is_object() || !j.contains("calibrate")) return std::nullopt;
  const std::string kind = j.value("calibrate", "");
  if (kind == "begin") return Begin{j.value("index", 0), j.value("name", "")};
  if (kind == "device")
    device = j.value("device", nlohmann::json());
  else if (kind == "step")
    steps.push_back(parse_workload_step(j));
  else if (kind == "stream")
    sweeps.stream = parse_stream_timings(j);
  else if (kind == "working_set")
    sweeps.working_set = parse_working_set(j);
  else if (kind == "reread")
    sweeps.reread = parse_working_set(j);
  else if (kind == "issue")
    sweeps.issue = parse_issue_points(j);
  else if (kind == "launch")
    sweeps.launch = parse_launch_points(j);
  return std::nullopt;
}

DeviceFacts device_facts(const recording::RecordingMeta& probe, const nlohmann::json& device) {
  DeviceFacts facts;
  facts.gpu = probe.gpu;
  facts.unit_table = probe.unit_table;
  facts.units = probe.units;
  if (device.is_object()) {
    if (device.contains("sm_count") && device["sm_count"].is_number_integer())
      facts.gpu.sm_count = device["sm_count"];
    if (device.contains("l2_bytes") && device["l2_bytes"].is_number_integer())
      facts.gpu.l2_bytes = device["l2_bytes"];
  }
  return facts;
}

std::vector<MeasuredStep> measure_recorded_steps(const recording::Recording& recording,
                                                 const std::vector<WorkloadStep>& steps,
                                                 const CalibrationPlan& plan) {
  const recording::RecordingMeta& meta = recording.meta();
  std::map<std::string, std::size_t> unit_column;
  for (std::size_t i = 0; i < meta.units.size(); ++i) unit_column[meta.units[i].key] = i;
  std::optional<std::size_t> bytes_column;
  for (std::size_t i = 0; i < meta.counts.size(); ++i)
    if (meta.counts[i].key == "dram_bytes") bytes_column = i;
  std::map<std::string, std::vector<CounterSample>> samples;
  {
    auto stream = recording.stream<recording::ChipSample>();
    recording::ChipSample s;
    while (stream->next(s)) {
      const double bytes = bytes_column && *bytes_column < s.counts.size() ? s.counts[*bytes_column] : kNaN;
      for (const auto& [key, column] : unit_column)
        if (column < s.units.size())
          samples[key].push_back({s.start_ns, s.end_ns, s.units[column], key == "dram" ? bytes : kNaN});
    }
  }
  std::vector<MemClockReading> clocks;
  {
    auto stream = recording.stream<recording::ClockReading>();
    recording::ClockReading c;
    while (stream->next(c)) clocks.push_back({c.ts_ns, c.mem_mhz});
  }
  std::vector<MeasuredStep> measured;
  for (const WorkloadStep& step : steps) {
    const auto planned = std::find_if(plan.steps.begin(), plan.steps.end(),
                                      [&step](const StepPlan& p) { return p.name == step.name; });
    const StepRole role = planned != plan.steps.end() ? planned->role : StepRole::reported;
    measured.push_back(measure_step(step, samples[step.unit], clocks, role));
  }
  return measured;
}

MeasuredStep measure_step(const WorkloadStep& step, const std::vector<CounterSample>& samples,
                          const std::vector<MemClockReading>& clocks, StepRole role) {
  MeasuredStep m;
  m.unit = step.unit;
  m.name = step.name;
  m.role = role;
  m.loaded_sms = step.loaded_sms;
  m.sm_count = step.sm_count;
  m.work = step.work;
  m.peak_per_sm_per_cycle = step.peak_per_sm_per_cycle;
  m.work_intervals = step.launches;
  m.sm_clock_mhz = step.sm_clock_mhz;
  m.reading_pct = kNaN;
  m.counted_bytes = kNaN;
  m.mem_clock_min_mhz = m.mem_clock_max_mhz = kNaN;

  recording::TimeNs first = 0, last = 0;
  double weighted = 0, duration = 0, bytes = 0;
  bool have = false, bytes_known = true;
  for (const CounterSample& s : samples) {
    if (s.start_ns < step.window.start_ns || s.end_ns > step.window.end_ns || s.end_ns <= s.start_ns)
      continue;
    if (!std::isfinite(s.value)) continue;
    const double d = static_cast<double>(s.end_ns - s.start_ns);
    if (!have) first = s.start_ns;
    have = true;
    last = std::max(last, s.end_ns);
    first = std::min(first, s.start_ns);
    weighted += s.value * d;
    duration += d;
    if (std::isfinite(s.bytes))
      bytes += s.bytes;
    else
      bytes_known = false;
  }
  if (!have || !(duration > 0)) {
    m.counter_window = Interval{step.window.start_ns, step.window.start_ns};
    return m;
  }
  m.counter_window = Interval{first, last};
  m.reading_pct = weighted / duration;
  // Samples dropped inside the span (a blanked decode) leave holes: the byte total is scaled to the
  // whole counter window at the rate of the samples read.
  if (bytes_known) m.counted_bytes = bytes * static_cast<double>(last - first) / duration;

  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const MemClockReading& c : clocks) {
    if (c.ts_ns < first || c.ts_ns > last || !std::isfinite(c.mem_mhz)) continue;
    lo = std::min(lo, c.mem_mhz);
    hi = std::max(hi, c.mem_mhz);
  }
  if (lo <= hi) {
    m.mem_clock_min_mhz = lo;
    m.mem_clock_max_mhz = hi;
  }
  return m;
}

std::string format_time_left(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) seconds = 0;
  const long s = std::lround(seconds);
  if (s < 60) return fmt::format("{} s", s);
  return fmt::format("{} min {:02} s", s / 60, s % 60);
}

std::string progress_text(const Progress& p, bool terminal, int bar_width) {
  const std::string left = "about " + format_time_left(p.seconds_left) + " left";
  if (!terminal) return fmt::format("diescope: step {}/{}: {} ({})", p.index, p.total, p.name, left);
  const int total = std::max(p.total, 1);
  const int done = std::clamp((p.index - 1) * bar_width / total, 0, bar_width);
  return fmt::format("[{}{}] {:>2}/{}  {}  {}", std::string(static_cast<std::size_t>(done), '#'),
                     std::string(static_cast<std::size_t>(bar_width - done), '.'), p.index, p.total, p.name,
                     left);
}

std::vector<std::string> planned_names(const CalibrationPlan& plan) {
  std::vector<std::string> names;
  for (const StepPlan& s : plan.steps) names.push_back(s.name);
  names.emplace_back("stream");
  if (plan.run_working_set) names.emplace_back("working-set sweep");
  if (plan.run_launch) names.emplace_back("launch-fill sweep");
  if (plan.run_issue) names.emplace_back("issue-rate sweep");
  return names;
}

double planned_seconds(const CalibrationPlan& plan, int index) {
  const int steps = static_cast<int>(plan.steps.size());
  if (index >= 1 && index <= steps)
    return plan.steps[static_cast<std::size_t>(index - 1)].seconds + kStepOverheadSeconds;
  const std::vector<std::string> names = planned_names(plan);
  if (index < 1 || index > static_cast<int>(names.size())) return 0;
  const std::string& name = names[static_cast<std::size_t>(index - 1)];
  if (name == "stream") return plan.stream_seconds;
  if (name == "working-set sweep") return plan.working_set_seconds;
  if (name == "launch-fill sweep") return plan.launch_seconds;
  return plan.issue_seconds;
}

Progress progress_at(const CalibrationPlan& plan, int index, std::string name) {
  Progress p;
  p.index = index;
  p.total = static_cast<int>(planned_names(plan).size());
  p.name = std::move(name);
  for (int i = index; i <= p.total; ++i) p.seconds_left += planned_seconds(plan, i);
  return p;
}

std::string plan_text(const DeviceFacts& facts, const CalibrationPlan& plan) {
  const Progress whole = progress_at(plan, 1, "");
  return fmt::format("{} {} on {} ({} SMs), {} steps and sweeps, about {}",
                     plan.quick ? "quick check" : "full calibration", facts.unit_table, facts.gpu.model,
                     facts.gpu.sm_count, whole.total, format_time_left(whole.seconds_left));
}

}  // namespace diescope::calibrate

namespace diescope::calibrate {
namespace {

std::string mb(double bytes) {
  return fmt::format("{:.1f} MB", bytes / 1e6);
}
double num_or_nan(const nlohmann::json& j, const char* key) {
  return j.is_object() && j.contains(key) && j.at(key).is_number() ? j.at(key).get<double>() : kNaN;
}
std::string str_or(const nlohmann::json& j, const char* key, const std::string& fallback) {
  return j.is_object() && j.contains(key) && j.at(key).is_string() ? j.at(key).get<std::string>() : fallback;
}

}  // namespace

std::string summary_text(const CalibrationFile& file) {
  std::string out =
      fmt::format("{} calibration of {} ({}, driver {}, {} SMs), {}\n\n", file.quick ? "Quick" : "Full",
                  file.gpu.model, file.gpu.chip, file.gpu.driver, file.gpu.sm_count, file.date);
  out += fmt::format("  {:<12} {:<13} {:>9}  {}\n", "unit", "verdict", "ceiling", "why");
  for (const CalibratedUnit& u : file.units) {
    const std::string ceiling = u.ceiling_pct ? fmt::format("{:.1f}%", *u.ceiling_pct) : "-";
    out += fmt::format("  {:<12} {:<13} {:>9}  {}\n", u.label, verdict_name(u.verdict), ceiling, u.reason);
  }
  const nlohmann::json& m = file.device_model;
  out += "\nDevice model\n";
  if (m.contains("stream")) {
    const nlohmann::json& s = m.at("stream");
    const double bw = num_or_nan(s, "bandwidth_bytes_per_s");
    std::string line = std::isfinite(bw)
                           ? fmt::format("{:.2f} TB/s ({})", bw / 1e12, str_or(s, "best_kernel", "?"))
                           : "none: " + str_or(s, "bandwidth_bytes_per_s_reason", "not measured");
    if (s.contains("kernels"))
      for (const nlohmann::json& k : s.at("kernels")) {
        const double r = num_or_nan(k, "bytes_per_s");
        if (std::isfinite(r)) line += fmt::format("; {} {:.2f}", str_or(k, "kernel", "?"), r / 1e12);
      }
    out += "  DRAM bandwidth (STREAM, best of repeats): " + line + "\n";
    const double peak = num_or_nan(s, "dram_implied_peak_bytes_per_s");
    if (std::isfinite(peak) && s.contains("kernels")) {
      std::string share;
      for (const nlohmann::json& k : s.at("kernels")) {
        const double pct = num_or_nan(k, "pct_of_dram_implied_peak");
        if (std::isfinite(pct))
          share += fmt::format("{}{} {:.1f}%", share.empty() ? "" : ", ", str_or(k, "kernel", "?"), pct);
      }
      out += fmt::format("  STREAM against the DRAM peak the counter implies ({:.2f} TB/s): {}\n",
                         peak / 1e12, share);
    }
  }
  for (const char* key : {"cache", "cache_reread"}) {
    if (!m.contains(key)) continue;
    const nlohmann::json& c = m.at(key);
    const std::string outcome = str_or(c, "outcome", "?");
    std::string line = outcome;
    if (outcome == "transition")
      line = fmt::format("capacity {} (between {} cached and {} spilled{}), cache rate {:.2f} TB/s",
                         mb(num_or_nan(c, "capacity_bytes")), mb(num_or_nan(c, "cached_ws_bytes")),
                         mb(num_or_nan(c, "spilled_ws_bytes")),
                         c.value("monotone", false) ? "" : ", not monotone",
                         num_or_nan(c, "cache_bytes_per_s") / 1e12);
    else if (outcome == "all_cached")
      line = "all cached: capacity at least " + mb(num_or_nan(c, "largest_ws_bytes"));
    else if (outcome == "all_spilled")
      line = "all spilled: capacity below " + mb(num_or_nan(c, "smallest_ws_bytes"));
    else if (outcome == "no_transition")
      line = fmt::format("no transition (contrast {:.2f})", num_or_nan(c, "contrast"));
    else if (c.contains("reason"))
      line += ": " + str_or(c, "reason", "");
    if (file.gpu.l2_bytes > 0)
      line += "; the driver reports L2 " + mb(static_cast<double>(file.gpu.l2_bytes));
    out += std::string(key == std::string("cache") ? "  Cache (contraction working-set sweep): "
                                                   : "  Cache (re-read sweep): ") +
           line + "\n";
  }
  if (m.contains("issue")) {
    const nlohmann::json& i = m.at("issue");
    const double latency_s = num_or_nan(i, "latency_s");
    out += "  Issue rate: " +
           (str_or(i, "outcome", "") == "fit"
                ? fmt::format("{:.2f} Tops/s, latency {:.1f} us{}, largest residual {:.1f}%",
                              num_or_nan(i, "rate_ops_per_s") / 1e12, latency_s * 1e6,
                              // The fit's intercept is reported as it is; below zero it is no time at all.
                              latency_s < 0 ? " (a negative intercept: no launch latency can be read)" : "",
                              num_or_nan(i, "max_residual") * 100)
                : str_or(i, "outcome", "?") + (i.contains("reason") ? ": " + str_or(i, "reason", "") : "")) +
           "\n";
  }
  if (m.contains("fill")) {
    const nlohmann::json& f = m.at("fill");
    out += "  Launch fill: " +
           (str_or(f, "outcome", "") == "fit"
                ? fmt::format("saturates at {} threads per SM, rate {:.2f} Tops/s, largest residual {:.1f}%",
                              f.value("saturation_threads", 0), num_or_nan(f, "rate_ops_per_s") / 1e12,
                              num_or_nan(f, "max_residual") * 100)
                : str_or(f, "outcome", "?") + (f.contains("reason") ? ": " + str_or(f, "reason", "") : "")) +
           "\n";
  }
  return out;
}

}  // namespace diescope::calibrate
