// The headline as a person reads it on a terminal. Printed from the report document only, so a
// re-rendered report.json reads the same as the original run.
#include <fmt/format.h>

#include <optional>
#include <ostream>
#include <string>

#include "diescope/core/printable.hpp"
#include "diescope/report/renderer.hpp"

namespace diescope::report {

using nlohmann::json;

namespace {

// A member, or an empty value of its kind when absent; never a temporary, so it can be iterated.
const json& member(const json& o, const char* key, const json& empty) {
  auto it = o.find(key);
  return it == o.end() ? empty : *it;
}
const json kNoArray = json::array();
const json kNoObject = json::object();

std::optional<double> number(const json& o, const char* key) {
  auto it = o.find(key);
  if (it == o.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::string text(const json& o, const char* key, const char* fallback = "") {
  auto it = o.find(key);
  if (it == o.end() || !it->is_string()) return fallback;
  return it->get<std::string>();
}

std::string reason(const json& o, const char* key) {
  std::string r = text(o, (std::string(key) + "_reason").c_str());
  return r.empty() ? "not available" : r;
}

// Headline figures are points with one decimal in the file; print exactly one decimal.
std::string one_decimal(double v) {
  return fmt::format("{:.1f}", v);
}

std::string pct_or_na(const json& o, const char* key) {
  auto v = number(o, key);
  return v ? one_decimal(*v) + "%" : "n/a";
}

// One row: a label column, a value column and free text.
std::string row(const std::string& label, const std::string& value, const std::string& rest) {
  std::string line = fmt::format("  {:<13} {:<7}", label, value);
  if (!rest.empty()) line += " " + rest;
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line + "\n";
}

std::string label_of(const json& results, const std::string& key) {
  for (const json& u : results.value("units", json::array()))
    if (u.value("key", "") == key) return u.value("label", key);
  return key;
}

// The figures of one span (the run, or the steady window).
std::string span_block(const json& r, const char* span_word) {
  const json& h = r.at("headline");
  const json& gate = r.at("chip_coverage_gate");
  const bool partial = gate.value("partial", false);
  std::string out;

  // GPU-Util, and over the whole span beside a partial result.
  {
    std::string rest;
    if (number(h, "gpu_util_pct")) {
      // A report without `gpu_util_covers` predates GPU-Util over the whole span: it covers counter
      // time (docs/method.md#gpu-util-without-chip-samples).
      rest = fmt::format("nvidia-smi's figure ({}), over {}", text(r, "gpu_util_source", "none"),
                         text(r, "gpu_util_covers", "the time the counters cover"));
      // Beside a partial result, unless GPU-Util already is over the whole span.
      if (partial && number(r, "chip_covered_s").value_or(0.0) > 0) {
        if (auto whole = number(r, "gpu_util_whole_span_pct"))
          rest += fmt::format("; whole {} {}%", span_word, one_decimal(*whole));
      }
    } else {
      rest = reason(h, "gpu_util_pct");
    }
    out += row("GPU-Util", pct_or_na(h, "gpu_util_pct"), rest);
  }
  // DIE-Util: its row says partial when the result is.
  {
    std::string rest = number(h, "die_util_pct") ? "busiest unit per sample (max-unit, experimental)"
                                                 : reason(h, "die_util_pct");
    if (partial) rest = text(gate, "wording") + "; " + rest;
    out += row("DIE-Util", pct_or_na(h, "die_util_pct"), rest);
  }
  // Gap, with the noise floor when it applies.
  {
    auto gap = number(h, "gap_points");
    std::string rest;
    if (!gap) {
      rest = reason(h, "gap_points");
    } else if (h.value("gap_within_noise_floor", false)) {
      auto raw = number(r, "gap_points");
      auto floor = number(h, "noise_floor_points");
      rest = fmt::format("points: {} is within GPU-Util's noise floor ({}), so it counts as 0",
                         raw ? one_decimal(*raw) : "the gap", floor ? one_decimal(*floor) : "n/a");
    } else {
      rest = "points, GPU-Util minus DIE-Util";
    }
    out += row("gap", gap ? one_decimal(*gap) : "n/a", rest);
  }
  // Stranded capacity, split into idle (nothing running) and active (stranded while a kernel ran).
  {
    auto stranded = number(h, "stranded_points");
    auto idle = number(h, "idle_points");
    auto active = number(h, "active_points");
    std::string rest;
    if (!stranded)
      rest = reason(h, "stranded_points");
    else if (idle && active)
      rest = fmt::format("points = idle {} + active {}", one_decimal(*idle), one_decimal(*active));
    else
      rest = "points; idle and active n/a: " + reason(h, "idle_points");
    out += row("stranded", stranded ? one_decimal(*stranded) : "n/a", rest);
  }
  // Why the GPU idled, from the host probes (docs/method.md#stranded-idle-explained).
  if (const auto it = r.find("idle_explained"); it != r.end() && it->is_object()) {
    out += row("idle cause", "", text(*it, "wording"));
    if (const std::string host = text(*it, "host"); !host.empty()) out += row("host", "", host);
  }
  // Limiting unit.
  {
    const json& lu = r.at("limiting_unit");
    if (lu.is_string()) {
      std::string key = lu.get<std::string>();
      std::string mean = "n/a";
      for (const json& u : member(r, "units", kNoArray))
        if (u.value("key", "") == key && u.at("mean_pct").is_number())
          mean = one_decimal(u.at("mean_pct").get<double>()) + "%";
      out += row("limiting", label_of(r, key), fmt::format("{} of peak", mean));
    } else {
      out += row("limiting", "none", reason(r, "limiting_unit"));
    }
  }
  // Coverage: counters against the span, GPU-Util against counter time.
  {
    std::string chip =
        number(r, "chip_coverage_pct")
            ? fmt::format("counters {}% of the {}", one_decimal(*number(r, "chip_coverage_pct")),
                          gate.value("of", "span") == "span" ? span_word : "scheduled counter time")
            : "counters n/a: " + reason(r, "chip_coverage_pct");
    chip += fmt::format(" (gate {:g}%)", gate.value("min_pct", 90.0));
    std::string util = "GPU-Util n/a";
    if (auto c = number(r, "gpu_util_coverage_pct"))
      util = fmt::format("GPU-Util {}% of counter time", one_decimal(*c));
    else if (auto whole = number(r, "gpu_util_whole_span_coverage_pct"); whole && number(h, "gpu_util_pct"))
      util = fmt::format("GPU-Util {}% of the {}", one_decimal(*whole), span_word);
    util += fmt::format(" (gate {:g}%)", r.at("gpu_util_coverage_gate").value("min_pct", 90.0));
    out += row("coverage", "", chip + "; " + util);
  }
  return out;
}

// The span's energy (docs/energy.md), last in its block; a report.json written before energy was
// reported has none.
std::string energy_row(const json& r) {
  const json& e = member(r, "energy", kNoObject);
  std::string out =
      e.contains("wording") ? row("energy", "", e.at("wording").get<std::string>()) : std::string();
  // docs/energy.md#joules-per-tflop: only where the recording holds the program's FLOPs.
  if (e.contains("joules_per_tflop_wording"))
    out += row("J/TFLOP", "", e.at("joules_per_tflop_wording").get<std::string>());
  return out;
}

std::string units_block(const json& r) {
  std::string out =
      fmt::format("  {:<13} {:>7} {:>10} {:>12}\n", "units", "mean", "available", "peak sample");
  auto cell = [](const json& u, const char* key) {
    return u.at(key).is_number() ? one_decimal(u.at(key).get<double>()) + "%" : std::string("n/a");
  };
  for (const json& u : member(r, "units", kNoArray)) {
    std::string label = u.value("label", u.value("key", ""));
    std::string line = fmt::format("  {:<13} {:>7} {:>10} {:>12}", label, cell(u, "mean_pct"),
                                   cell(u, "availability_pct"), cell(u, "max_sample_pct"));
    std::string flags;
    for (const json& f : member(u, "flags", kNoArray))
      flags += (flags.empty() ? "" : ", ") + f.get<std::string>();
    if (!flags.empty()) line += "  [" + flags + "]";
    if (!u.value("counted_by_gpu_util", true)) line += "  (not counted by GPU-Util)";
    out += line + "\n";
  }
  const json& rates = member(r, "rates_per_s", kNoObject);
  for (const auto& [key, value] : rates.items()) {
    if (key.size() > 7 && key.ends_with("_reason")) continue;
    std::string v = value.is_number() ? fmt::format("{:.3g} per second", value.get<double>())
                                      : "n/a: " + reason(rates, key.c_str());
    out += row("rate", "", fmt::format("{}: {}", key, v));
  }
  return out;
}

std::string clocks_text(const json& c) {
  auto mn = number(c, "min");
  auto mx = number(c, "max");
  auto mean = number(c, "mean");
  if (!mn || !mx || !mean) return "n/a (" + reason(c, "min") + ")";
  if (*mn == *mx) return fmt::format("{:.0f} MHz", *mn);
  return fmt::format("{:.0f}-{:.0f} MHz, mean {:.0f}", *mn, *mx, *mean);
}

std::string hardware_block(const json& hw) {
  std::string out;
  std::string covers = hw.value("covers", "run");
  out += row("clocks", "",
             fmt::format("over the {}: SM {}; memory {}", covers == "window" ? "steady window" : "run",
                         clocks_text(hw.at("sm_clock_mhz")), clocks_text(hw.at("mem_clock_mhz"))));
  const json& tr = hw.at("throttle_reasons");
  std::string throttle;
  if (tr.is_null()) {
    throttle = "unknown: " + reason(hw, "throttle_reasons");
  } else if (tr.empty()) {
    throttle = "none";
  } else {
    for (const json& t : tr) throttle += (throttle.empty() ? "" : ", ") + t.get<std::string>();
  }
  const json& p = hw.at("power_limit_w");
  std::string power;
  auto pmin = number(p, "min");
  auto pmax = number(p, "max");
  if (!pmin || !pmax)
    power = "n/a";
  else if (*pmin == *pmax)
    power = fmt::format("{:g} W", *pmin);
  else
    power = fmt::format("{:g}-{:g} W", *pmin, *pmax);
  out += row("throttle", "", throttle + "; power limit " + power);
  return out;
}

// Status and reason, then the units grouped by verdict when the calibration names them. A reason
// from a calibration file already lists them (calibrate's lookup writes "passed FP32, DRAM; ..."), so
// a group the reason already holds is not repeated.
std::string calibration_text(const json& cal, const json& results) {
  const std::string reason = text(cal, "reason");
  std::string out = text(cal, "status") + ": " + reason;
  const json& units = member(cal, "units", kNoObject);
  const std::pair<const char*, const char*> verdicts[] = {
      {"pass", "passed"}, {"fail", "failed"}, {"inconclusive", "inconclusive"}, {"no_check", "no check"}};
  for (const auto& [verdict, words] : verdicts) {
    std::string names;
    // In the report's unit order.
    for (const json& u : member(results, "units", kNoArray)) {
      auto it = units.find(u.value("key", ""));
      if (it != units.end() && it->is_string() && it->get<std::string>() == verdict)
        names += (names.empty() ? "" : ", ") + u.value("label", u.value("key", ""));
    }
    const std::string group = fmt::format("{} {}", words, names);
    if (!names.empty() && reason.find(group) == std::string::npos) out += "; " + group;
  }
  return out;
}

}  // namespace

std::string render_terminal(const json& report) {
  const json& results = report.at("results");
  const json& gpu = report.at("gpu");
  const json& gate = results.at("chip_coverage_gate");
  std::string out;

  // First line: says partial before anything else when the counters did not cover the run.
  // An empty name (a recording whose chip nothing named) reads as unknown, never as "(, driver".
  const auto named = [&](const char* key, const char* fallback) {
    const std::string value = text(gpu, key);
    return value.empty() ? std::string(fallback) : value;
  };
  std::string title = fmt::format("{} ({}, driver {}), {} run, {:.2f} s, method {}",
                                  named("model", "unknown GPU"), named("chip", "unknown chip"),
                                  named("driver", "unknown"), text(report, "run_type", "single"),
                                  number(results, "span_s").value_or(0.0), report.value("method", 0));
  // A cut-off recording says so first (docs/report.md#the-terminal-headline).
  std::string lead = "diescope: ";
  if (report.at("source").value("cut_off", false))
    lead += fmt::format("cut off at {:.2f} s (the recording ends early): ",
                        number(results, "span_s").value_or(0.0));
  if (gate.value("partial", false))
    out += lead + text(gate, "wording") + ": " + title + "\n";
  else
    out += lead + title + "\n";

  out += span_block(results, "run");
  const json& cal = report.at("calibration");
  out += row("calibration", "", calibration_text(cal, results));
  // Other processes on the GPU belong in the headline: every chip figure includes their work
  // (docs/method.md#shared-gpus-in-the-headline).
  if (const std::string shared = text(report.at("hygiene"), "shared"); !shared.empty())
    out += row("shared GPU", "", shared);
  out += "\n";
  out += units_block(results);
  out += hardware_block(report.at("hardware"));
  out += energy_row(results);

  const json& window = report.at("window");
  if (window.value("found", false)) {
    const json& w = window.at("results");
    out += fmt::format("\nsteady window ({}): {:.2f} s to {:.2f} s of the run, {:.2f} s\n",
                       text(window, "how"), number(window, "start_s").value_or(0.0),
                       number(window, "end_s").value_or(0.0), number(w, "span_s").value_or(0.0));
    out += span_block(w, "window");
    out += energy_row(w);
  } else if (!text(window, "how").empty()) {
    out += "\nsteady window: none (" + text(window, "how") + ")\n";
  }

  const json& notes = member(report, "notes", kNoArray);
  const json& hygiene_notes = member(report.at("hygiene"), "notes", kNoArray);
  if (!notes.empty() || !hygiene_notes.empty()) {
    out += "\nnotes\n";
    for (const json& n : notes) out += fmt::format("  [{}] {}\n", text(n, "topic"), text(n, "text"));
    for (const json& n : hygiene_notes) out += fmt::format("  [hygiene] {}\n", n.get<std::string>());
  }
  // Names and notes come from the recording: its control bytes are shown, never sent to the terminal.
  return core::printable(out);
}

void TerminalRenderer::render(const ReportInput& input) {
  out_ << render_terminal(input.report) << std::flush;
}

}  // namespace diescope::report
