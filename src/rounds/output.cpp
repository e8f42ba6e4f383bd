// What a bench shows: bench.json, the summary table, the progress bar and per-round lines.
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <ostream>

#include "diescope/rounds/bench.hpp"
#include "diescope/core/version.hpp"
#include "diescope/recording/format.hpp"
#include "diescope/report/wording.hpp"

namespace diescope::rounds {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// A finite number, or null with "<key>_reason" beside it.
void put(json& o, const std::string& key, double value, const std::string& reason) {
  if (std::isfinite(value)) {
    o[key] = value;
  } else {
    o[key] = nullptr;
    o[key + "_reason"] = reason;
  }
}

std::string relative_to(const fs::path& path, const fs::path& base) {
  if (path.empty()) return {};
  const fs::path rel = path.lexically_relative(base);
  return rel.empty() || rel.native().starts_with("..") ? path.string() : rel.string();
}

json gpu_identity_json(const recording::GpuIdentity& g) {
  return json{
      {"index", g.index}, {"uuid", g.uuid}, {"model", g.model}, {"chip", g.chip}, {"driver", g.driver}};
}

// `left_out`: the bench's decision for this GPU in this round (the round's own verdict, or a reason
// that concerns the whole round, such as an interruption); null when the round was kept.
json round_gpu_json(const GpuRound& g, const fs::path& base, const LeftOut* left_out) {
  json o;
  o["index"] = g.gpu_index;
  o["recording"] = relative_to(g.recording, base);
  if (g.report.empty()) {
    o["report"] = nullptr;
    o["report_reason"] = g.verdict.reason;
  } else {
    o["report"] = relative_to(g.report, base);
  }
  o["kept"] = left_out == nullptr;
  if (left_out) o["left_out_because"] = left_out->reason;
  o["counters"] = g.counters;
  if (!g.counters_why.empty()) o["counters_why"] = g.counters_why;
  o["window"] = json{{"found", g.window_found},
                     {"how", g.window_finding ? report::window_words(*g.window_finding) : ""}};
  if (g.headline.is_null()) {
    o["headline"] = nullptr;
    o["headline_reason"] = g.verdict.reason;
  } else {
    o["headline"] = g.headline;
    o["headline_covers"] = g.headline_covers;
  }
  if (g.limiting_unit) {
    o["limiting_unit"] = *g.limiting_unit;
  } else {
    o["limiting_unit"] = nullptr;
    o["limiting_unit_reason"] =
        g.window_found ? "no unit qualified over the window (see the round's report)" : "no steady window";
  }
  json figures = json::object();
  for (const Figure& f : g.figures) put(figures, f.key, f.value, "not available over this round's window");
  o["figures"] = figures;
  return o;
}

const LeftOut* left_out_of(const std::vector<GpuBench>& gpus, int gpu_index, int round) {
  for (const GpuBench& b : gpus)
    if (b.gpu_index == gpu_index)
      for (const LeftOut& l : b.left_out)
        if (l.round == round) return &l;
  return nullptr;
}

json round_json(const Round& r, const fs::path& base, const std::vector<GpuBench>& decisions) {
  json o;
  o["round"] = r.number;
  o["folder"] = relative_to(r.folder, base);
  o["duration_s"] = r.duration_s;
  if (!r.failure.empty()) {
    o["failure"] = r.failure;
    o["exit_code"] = nullptr;
    o["exit_code_reason"] = "the command did not run";
    o["ended"] = "not started";
  } else {
    o["exit_code"] = r.exit_code;
    o["ended"] = run_ending_text(r.ending);  // as the recording's end line reads
  }
  o["interrupted"] = r.interrupted;
  o["warnings"] = r.warnings;
  json gpus = json::array();
  for (const GpuRound& g : r.gpus)
    gpus.push_back(round_gpu_json(g, base, left_out_of(decisions, g.gpu_index, r.number)));
  o["gpus"] = gpus;
  return o;
}

json stats_json(const FigureStats& s) {
  json o;
  o["key"] = s.key;
  o["label"] = s.label;
  o["unit"] = s.unit;
  o["group"] = s.group;
  o["n"] = s.summary.n;
  const std::string reason = s.summary.reason.empty() ? "not computed" : s.summary.reason;
  put(o, "mean", s.summary.mean, reason);
  put(o, "sd", s.summary.sd, reason);
  put(o, "min", s.summary.min, reason);
  put(o, "max", s.summary.max, reason);
  put(o, "t", s.summary.t, reason);
  put(o, "ci95_half_width", s.summary.half_width, reason);
  put(o, "ci95_low", s.summary.low, reason);
  put(o, "ci95_high", s.summary.high, reason);
  o["missing_in"] = s.missing_in;
  return o;
}

json gpu_bench_json(const GpuBench& b) {
  json o = gpu_identity_json(b.gpu);
  o["index"] = b.gpu_index;
  o["kept_rounds"] = b.kept;
  json left = json::array();
  for (const LeftOut& l : b.left_out) left.push_back(json{{"round", l.round}, {"reason", l.reason}});
  o["left_out"] = left;
  o["enough_rounds"] = b.enough;
  o["limiting_units"] = b.limiting_units;
  json stats = json::array();
  for (const FigureStats& s : b.figures) stats.push_back(stats_json(s));
  o["statistics"] = stats;
  return o;
}

// Rates are shown scaled by one SI prefix per row, chosen from the row's largest magnitude, so the
// mean and its spread read in the same unit ("3.941" and "0.012" TB/s).
struct Scale {
  double divisor = 1;
  std::string prefix;
};

Scale scale_for(const FigureStats& s) {
  if (!s.unit.ends_with("/s")) return {};
  static const char* prefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  double largest = 0;
  for (double v : {s.summary.mean, s.summary.min, s.summary.max})
    if (std::isfinite(v)) largest = std::max(largest, std::fabs(v));
  Scale scale;
  int p = 0;
  while (largest >= 1000 && p < 6) {
    largest /= 1000;
    scale.divisor *= 1000;
    ++p;
  }
  scale.prefix = prefixes[p];
  return scale;
}

// Percentages, points, MHz and seconds with two decimals; scaled rates with three.
std::string format_value(double v, const FigureStats& s, const Scale& scale) {
  if (!std::isfinite(v)) return "n/a";
  std::string text =
      s.unit.ends_with("/s") ? fmt::format("{:.3f}", v / scale.divisor) : fmt::format("{:.2f}", v);
  // A tiny negative (an interval's low end around 0) must not read "-0.00".
  if (text.starts_with("-") && text.find_first_not_of("-0.") == std::string::npos) text.erase(0, 1);
  return text;
}

std::string figure_label(const FigureStats& s, const Scale& scale) {
  if (s.unit == "%") return s.label + " %";
  if (s.unit == "points") return s.label + " (pts)";
  std::string unit = s.unit;
  if (unit == "bytes/s") unit = "B/s";
  return s.label + " (" + scale.prefix + unit + ")";
}

std::string headline_figure(const GpuRound& g, const char* key, const char* label) {
  for (const Figure& f : g.figures)
    if (f.key == key)
      return fmt::format("{} {}", label, std::isfinite(f.value) ? fmt::format("{:.1f}%", f.value) : "n/a");
  return fmt::format("{} n/a", label);
}

const Figure* find_figure(const GpuRound& g, const std::string& key) {
  for (const Figure& f : g.figures)
    if (f.key == key) return &f;
  return nullptr;
}

std::string command_text(const BenchResult& r) {
  if (r.workload) return "diescope workload " + *r.workload;
  std::string s;
  for (const std::string& a : r.command) s += (s.empty() ? "" : " ") + a;
  return s;
}

}  // namespace

json bench_json(const BenchResult& r) {
  const fs::path base = r.bench_json.parent_path();
  json o;
  o["schema"] = kBenchSchemaVersion;
  o["kind"] = "diescope-bench";
  o["tool"] = json{{"name", "diescope"}, {"version", core::kToolVersion}};
  o["method"] = core::kMethodVersion;
  o["command"] = r.command;
  if (r.workload) {
    o["workload"] = *r.workload;
  } else {
    o["workload"] = nullptr;
    o["workload_reason"] = "a command was given, not a bundled workload";
  }
  o["window"] = std::string(analysis::window_mode_name(analysis::WindowMode::markers));
  o["rounds_requested"] = r.rounds_requested;
  o["rounds_run"] = static_cast<int>(r.rounds.size());
  o["interval_ms"] = r.interval_ms;
  o["drain_ms"] = r.drain_ms;
  o["start_ns"] = r.start_ns;
  o["end_ns"] = r.end_ns;
  o["interrupted"] = r.interrupted;
  if (!r.stopped_because.empty()) o["stopped_because"] = r.stopped_because;
  o["rule"] =
      json{{"min_kept_rounds", kMinKeptRounds},
           {"interval_level", kIntervalLevel},
           {"interval", "mean +- t(0.975, n-1) * sd / sqrt(n) over the kept rounds that have the figure"},
           {"left_out_when",
            json::array({"the steady window is missing", "the window's chip coverage is partial (under 90%)",
                         "the run failed or was interrupted", "the recording could not be analysed"})}};
  json rounds = json::array();
  for (const Round& round : r.rounds) rounds.push_back(round_json(round, base, r.gpus));
  o["rounds"] = rounds;
  json gpus = json::array();
  for (const GpuBench& b : r.gpus) gpus.push_back(gpu_bench_json(b));
  o["gpus"] = gpus;
  return o;
}

std::string describe_round(const Round& round) {
  if (!round.failure.empty()) return "could not run: " + round.failure;
  std::string s;
  for (const GpuRound& g : round.gpus) {
    if (!s.empty()) s += "; ";
    if (g.verdict.kept && !round.interrupted) {
      s += fmt::format("GPU {} kept ({}, {})", g.gpu_index, headline_figure(g, "gpu_util_pct", "GPU-Util"),
                       headline_figure(g, "die_util_pct", "DIE-Util"));
    } else {
      s += fmt::format("GPU {} left out: {}", g.gpu_index,
                       round.interrupted ? "interrupted" : g.verdict.reason);
    }
  }
  if (round.gpus.empty()) s = "no GPU was recorded";
  if (round.ending.way != recording::RunEnding::Way::exited || round.exit_code != 0)
    s += "; the command " + report::run_ending_words(round.ending, round.exit_code);
  return s;
}

std::string progress_bar(int done, int total, int width) {
  if (total < 1) total = 1;
  done = std::clamp(done, 0, total);
  const int filled = static_cast<int>(static_cast<long>(done) * width / total);
  return "[" + std::string(static_cast<std::size_t>(filled), '#') +
         std::string(static_cast<std::size_t>(width - filled), '-') + "]";
}

void StreamProgress::round_started(int round, int rounds) {
  if (!terminal_) {
    out_ << fmt::format("diescope bench: round {}/{} started\n", round, rounds) << std::flush;
    return;
  }
  std::string eta;
  if (finished_ > 0) {
    const double left = elapsed_s_ / finished_ * (rounds - round + 1);
    eta = fmt::format(", about {:.0f} s left", left);
  }
  out_ << "\r\033[K" << progress_bar(round - 1, rounds, 30)
       << fmt::format(" round {}/{} running ({:.0f} s so far{})", round, rounds, elapsed_s_, eta)
       << std::flush;
}

void StreamProgress::round_finished(const Round& round, int rounds) {
  ++finished_;
  elapsed_s_ += round.duration_s;
  const std::string line = fmt::format("round {}/{} done in {:.1f} s: {}", round.number, rounds,
                                       round.duration_s, describe_round(round));
  if (!terminal_) {
    out_ << "diescope bench: " << line << "\n" << std::flush;
    return;
  }
  // The command may have written to the terminal since the bar was drawn: start a clean line.
  out_ << "\r\033[K" << line << "\n"
       << progress_bar(round.number, rounds, 30)
       << fmt::format(" {}/{} rounds, {:.0f} s", round.number, rounds, elapsed_s_);
  if (round.number == rounds) out_ << "\n";
  out_ << std::flush;
}

std::string render_summary(const BenchResult& r) {
  std::string s;
  s += fmt::format("\ndiescope bench: {} of {} round{} of `{}`, each summarised over its steady window\n",
                   r.rounds.size(), r.rounds_requested, r.rounds_requested == 1 ? "" : "s", command_text(r));
  if (!r.stopped_because.empty()) s += "stopped early: " + r.stopped_because + "\n";
  s += "results: " + r.bench_json.string() + "\n";
  for (const GpuBench& b : r.gpus) {
    s += fmt::format("\nGPU {}{}: {} of {} round{} kept\n", b.gpu_index,
                     b.gpu.model.empty() ? "" : " (" + b.gpu.model + ")", b.kept.size(), r.rounds.size(),
                     r.rounds.size() == 1 ? "" : "s");

    // Per round: what it read and whether it counts.
    s += fmt::format("  {:>5}  {:<9} {:>5} {:>9} {:>9} {:>9} {:>8}\n", "round", "status", "exit", "window s",
                     "GPU-Util", "DIE-Util", "gap");
    for (const Round& round : r.rounds) {
      const GpuRound* g = nullptr;
      for (const GpuRound& candidate : round.gpus)
        if (candidate.gpu_index == b.gpu_index) g = &candidate;
      const bool kept = std::find(b.kept.begin(), b.kept.end(), round.number) != b.kept.end();
      auto value = [&](const char* key, const char* fmt_spec) -> std::string {
        const Figure* f = g ? find_figure(*g, key) : nullptr;
        if (!f || !std::isfinite(f->value)) return "n/a";
        return fmt::format(fmt::runtime(fmt_spec), f->value);
      };
      const std::string exit =
          round.failure.empty() ? report::run_ending_cell(round.ending, round.exit_code) : "-";
      s += fmt::format("  {:>5}  {:<9} {:>5} {:>9} {:>9} {:>9} {:>8}\n", round.number,
                       kept ? "kept" : "left out", exit, value("span_s", "{:.2f}"),
                       value("gpu_util_pct", "{:.1f}"), value("die_util_pct", "{:.1f}"),
                       value("gap_points", "{:.1f}"));
    }
    for (const LeftOut& l : b.left_out) s += fmt::format("  round {} left out: {}\n", l.round, l.reason);

    if (b.kept.empty()) continue;
    s += fmt::format("\n  {:<28} {:>3} {:>10} {:>9} {:>10} {:>10}   {}\n", "over the kept rounds", "n",
                     "mean", "sd", "min", "max", "95% interval (t)");
    std::string group;
    for (const FigureStats& f : b.figures) {
      if (f.group != group && f.group != "headline") s += "\n";
      group = f.group;
      const Summary& m = f.summary;
      const Scale scale = scale_for(f);
      auto shown = [&](double v) { return format_value(v, f, scale); };
      const std::string interval = std::isfinite(m.low) ? shown(m.low) + " .. " + shown(m.high) : "n/a";
      std::string label = figure_label(f, scale);
      if (label.size() > 28) label = label.substr(0, 27) + "~";
      s += fmt::format("  {:<28} {:>3} {:>10} {:>9} {:>10} {:>10}   {}", label, m.n, shown(m.mean),
                       shown(m.sd), shown(m.min), shown(m.max), interval);
      if (!f.missing_in.empty()) {
        std::string rounds;
        for (int n : f.missing_in) rounds += (rounds.empty() ? "" : ",") + std::to_string(n);
        s += "   (n/a in round " + rounds + ")";
      }
      s += "\n";
    }
    if (!b.limiting_units.empty()) {
      std::string units;
      for (const auto& [label, count] : b.limiting_units)
        units += fmt::format("{}{} in {} of {}", units.empty() ? "" : ", ", label, count, b.kept.size());
      s += "\n  limiting unit: " + units + " kept rounds\n";
    }
  }
  return s;
}

}  // namespace diescope::rounds
