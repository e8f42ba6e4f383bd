// The rounds: each is one record_run into its own folder, analysed over its steady window, judged,
// and written to bench.json before the next starts.
#include "diescope/rounds/bench.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>

#include "diescope/analysis/analyze.hpp"
#include "diescope/core/atomic_file.hpp"
#include "diescope/core/clock.hpp"
#include "diescope/core/error.hpp"
#include "diescope/core/signals.hpp"
#include "diescope/core/unique_fd.hpp"
#include "diescope/recording/reader.hpp"
#include "diescope/report/recording_report.hpp"
#include "diescope/report/renderer.hpp"
#include "diescope/report/report.hpp"

namespace diescope::rounds {

namespace fs = std::filesystem;

namespace {

int digits(int n) {
  int d = 1;
  while (n >= 10) {
    n /= 10;
    ++d;
  }
  return d;
}

void create_folder(const fs::path& folder) {
  std::error_code ec;
  fs::create_directories(folder, ec);
  if (ec)
    throw core::Error("cannot create the folder " + folder.string() + ": " + ec.message(),
                      "choose another --report folder", core::kExitInput);
}

void write_results(BenchResult& result) {
  result.gpus = summarise_rounds(result.rounds);
  core::write_file_atomically(result.bench_json, bench_json(result).dump(2) + "\n");
}

}  // namespace

GpuRound evaluate_recording(const fs::path& recording, int gpu_index) {
  GpuRound g;
  g.gpu_index = gpu_index;
  g.recording = recording;
  g.headline = nullptr;
  try {
    const report::RecordingReport analysed =
        report::analyse_recording(recording, analysis::WindowMode::markers);
    const analysis::Analysis& analysis = analysed.analysis;
    const nlohmann::json& report = analysed.report;
    const fs::path out = fs::path(recording.string() + ".report");
    create_folder(out);
    report::write_recording_report(analysed, out);
    g.report = out / "report.json";
    g.gpu = analysis.meta.gpu;
    g.verdict = judge_round(analysis);
    g.window_found = analysis.window.found;
    g.window_finding = analysis.window.finding;
    if (analysis.window.found) {
      g.figures = figures_of(analysis, analysis.window.results);
      g.limiting_unit = limiting_label(analysis, analysis.window.results);
      g.headline = report["window"]["results"]["headline"];
      g.headline_covers = "window";
    } else {
      g.headline = report["results"]["headline"];
      g.headline_covers = "run";
    }
  } catch (const core::Error& e) {
    g.verdict = {false, "its recording could not be analysed: " + e.cause()};
  }
  return g;
}

std::vector<GpuBench> summarise_rounds(const std::vector<Round>& rounds) {
  std::vector<int> indexes;
  for (const Round& r : rounds)
    for (const GpuRound& g : r.gpus)
      if (std::find(indexes.begin(), indexes.end(), g.gpu_index) == indexes.end())
        indexes.push_back(g.gpu_index);
  std::sort(indexes.begin(), indexes.end());

  std::vector<GpuBench> out;
  for (int index : indexes) {
    GpuBench b;
    b.gpu_index = index;
    std::vector<std::pair<int, const GpuRound*>> kept;
    for (const Round& r : rounds) {
      const GpuRound* g = nullptr;
      for (const GpuRound& candidate : r.gpus)
        if (candidate.gpu_index == index) g = &candidate;
      if (g && b.gpu.uuid.empty() && !g->gpu.uuid.empty()) b.gpu = g->gpu;
      std::string reason;
      if (!r.failure.empty())
        reason = "the run failed: " + r.failure;
      else if (r.interrupted)
        reason = "interrupted: diescope was sent SIGINT or SIGTERM during the round";
      else if (!g)
        reason = "the round has no recording of this GPU";
      else if (!g->verdict.kept)
        reason = g->verdict.reason;
      if (!reason.empty()) {
        b.left_out.push_back({r.number, reason});
        continue;
      }
      b.kept.push_back(r.number);
      kept.emplace_back(r.number, g);
      if (g->limiting_unit) ++b.limiting_units[*g->limiting_unit];
    }
    if (b.gpu.index < 0) b.gpu.index = index;

    // Figure order: as the first kept round lists them, then any that only later rounds have.
    for (const auto& [number, g] : kept)
      for (const Figure& f : g->figures)
        if (std::none_of(b.figures.begin(), b.figures.end(),
                         [&](const FigureStats& s) { return s.key == f.key; }))
          b.figures.push_back(FigureStats{f.key, f.label, f.unit, f.group, {}, {}});
    for (FigureStats& stats : b.figures) {
      std::vector<double> values;
      for (const auto& [number, g] : kept) {
        auto it = std::find_if(g->figures.begin(), g->figures.end(),
                               [&](const Figure& f) { return f.key == stats.key; });
        if (it != g->figures.end() && std::isfinite(it->value))
          values.push_back(it->value);
        else
          stats.missing_in.push_back(number);
      }
      stats.summary = summarise(values);
    }
    b.enough = static_cast<int>(b.kept.size()) >= kMinKeptRounds;
    out.push_back(std::move(b));
  }
  return out;
}

BenchResult run_bench(const BenchOptions& options, const collect::Nvml& nvml, ProgressSink& progress) {
  if (options.rounds < 1)
    throw core::UsageError(fmt::format("{} rounds requested", options.rounds),
                           "ask for at least 2 rounds with --rounds");
  BenchResult result;
  result.command = options.run.command;
  result.workload = options.workload;
  result.rounds_requested = options.rounds;
  result.interval_ms = options.run.interval_ms;
  result.drain_ms = options.run.drain_ms;
  result.bench_json = options.output_dir / "bench.json";
  std::error_code ec;
  if (fs::exists(result.bench_json, ec))
    throw core::UsageError(
        "the folder " + options.output_dir.string() + " already holds a bench (bench.json)",
        "choose another --report folder, or remove that one");
  create_folder(options.output_dir);

  // SIGINT/SIGTERM between rounds stop the bench; during a round record_run takes them (forwarding
  // them to the command) and hands them back afterwards.
  core::SignalSelfPipe stop_signals({SIGINT, SIGTERM});
  result.start_ns = core::realtime_ns();
  const int width = std::max(2, digits(options.rounds));
  for (int k = 1; k <= options.rounds; ++k) {
    if (const auto caught = stop_signals.next()) {
      result.interrupted = true;
      result.stopped_because = fmt::format("interrupted (signal {}) before round {}", caught->number, k);
      break;
    }
    Round round;
    round.number = k;
    round.folder = options.output_dir / fmt::format("round-{:0{}}", k, width);
    create_folder(round.folder);
    collect::RunOptions run = options.run;
    run.output_dir = round.folder;
    run.run_type = "round";
    core::UniqueFd log;
    if (!options.show_output) {
      const fs::path log_path = round.folder / "stdout.log";
      log.reset(::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
      if (!log)
        throw core::Error("cannot create " + log_path.string() + ": " + std::strerror(errno),
                          "choose another --report folder", core::kExitInput);
      run.stdout_fd = log.get();
    }
    if (options.adjust_round) options.adjust_round(k, run);

    progress.round_started(k, options.rounds);
    const auto began = std::chrono::steady_clock::now();
    auto seconds_since = [&] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    };
    collect::RunOutcome outcome;
    try {
      outcome = collect::record_run(run, nvml);
    } catch (const core::Error& e) {
      // Setup failures repeat every round (no permission, no command): stop, keep what was measured.
      round.failure = e.cause();
      round.duration_s = seconds_since();
      result.rounds.push_back(round);
      progress.round_finished(result.rounds.back(), options.rounds);
      result.stopped_because = fmt::format("round {} could not run: {}", k, e.cause());
      if (k == 1) throw;
      result.failure = BenchResult::Failure{e.cause(), e.fix(), e.exit_code()};
      break;
    }
    round.exit_code = outcome.exit_code;
    round.ending = outcome.ending;
    round.interrupted = outcome.interrupted;
    round.warnings = outcome.warnings;
    for (const collect::GpuRecording& rec : outcome.recordings) {
      GpuRound g = evaluate_recording(rec.path, rec.index);
      g.counters = rec.counters;
      g.counters_why = rec.counters_why;
      round.gpus.push_back(std::move(g));
    }
    round.duration_s = seconds_since();
    result.rounds.push_back(std::move(round));
    result.end_ns = core::realtime_ns();
    write_results(result);
    progress.round_finished(result.rounds.back(), options.rounds);
    if (outcome.interrupted) {
      result.interrupted = true;
      result.stopped_because = fmt::format("interrupted during round {}", k);
      break;
    }
  }
  result.end_ns = core::realtime_ns();
  write_results(result);
  return result;
}

std::string too_few_rounds(const BenchResult& result) {
  if (result.gpus.empty()) return "no round was measured";
  std::string message;
  for (const GpuBench& b : result.gpus) {
    if (b.enough) continue;
    if (!message.empty()) message += "; ";
    message += fmt::format("GPU {} kept {} of {} round{}, and the statistics need at least {}", b.gpu_index,
                           b.kept.size(), result.rounds.size(), result.rounds.size() == 1 ? "" : "s",
                           kMinKeptRounds);
  }
  return message;
}

void require_kept_rounds(const BenchResult& result) {
  if (result.failure)
    throw core::Error(result.stopped_because + "; bench.json holds the rounds before it", result.failure->fix,
                      result.failure->exit_code);
  if (result.interrupted)
    throw core::Error(result.stopped_because + "; bench.json holds the rounds finished before it",
                      "run the bench again and let it finish", 130);
  const std::string too_few = too_few_rounds(result);
  if (!too_few.empty()) {
    bool no_window = false, partial = false;
    for (const auto& gpu : result.gpus)
      for (const auto& left : gpu.left_out) {
        no_window = no_window || left.reason.starts_with("no steady window");
        partial = partial || left.reason.starts_with("window partial");
      }
    std::string fix = "see each round's reason above and its report in the round's folder";
    if (no_window)
      fix =
          "make the command print the lines 'diescope: measure start' and 'diescope: measure stop' (flushed) "
          "around its steady part, as the bundled workloads do, or one line 'diescope: measure window START "
          "STOP' with its times once it knows them (docs/bench-command.md)";
    else if (partial)
      fix =
          "the counters covered under 90% of the window: read the notes in the rounds' reports (another "
          "profiler "
          "holding the counters, the sampler stopping) and run again";
    throw core::Error(too_few, fix, kExitTooFewRounds);
  }
}

}  // namespace diescope::rounds
