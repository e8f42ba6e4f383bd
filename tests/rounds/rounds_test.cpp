// Which rounds count, what each gives the statistics, and how the statistics across rounds, bench.json
// and the summary come out, on hand-built recordings and rounds whose answers are worked out here.
#include <gtest/gtest.h>

#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "analysis/builder.hpp"
#include "diescope/rounds/bench.hpp"
#include "diescope/core/atomic_file.hpp"

namespace {

using namespace diescope;
using namespace diescope::rounds;
namespace dt = diescope::testing;
namespace fs = std::filesystem;

// A 1 s run: setup sample 0..100 ms, then 100 ms samples with FP32 10%, DRAM 80%, 4e11 DRAM bytes
// each (4e12 bytes/s), GPU-Util 98% every 100 ms, clocks 1980/3201 MHz, markers at 200 and 800 ms.
dt::Builder steady_run(double gpu_util = 98, double dram = 80, int samples = 9) {
  dt::Builder b({"fp32", "dram"});
  b.counts({"dram_bytes"});
  b.setup_sample();
  for (int i = 0; i < samples; ++i) b.sample(100 + i * 100, 200 + i * 100, {10, dram}, {}, {4e11});
  b.util_every(0, 1000, 100, gpu_util);
  for (double t = 0; t <= 1000; t += 100) b.clock(t, 1980, 3201);
  b.mark(200, recording::MarkKind::start).mark(800, recording::MarkKind::stop);
  return b;
}

double figure(const std::vector<Figure>& figures, const std::string& key) {
  for (const Figure& f : figures)
    if (f.key == key) return f.value;
  ADD_FAILURE() << "no figure " << key;
  return analysis::kNaN;
}

TEST(Judge, KeepsARoundWithAFullyCoveredWindow) {
  const analysis::Analysis a = steady_run().analyze();
  ASSERT_TRUE(a.window.found);
  const Verdict v = judge_round(a);
  EXPECT_TRUE(v.kept);
  EXPECT_EQ(v.reason, "");
}

TEST(Judge, LeavesOutARoundWithoutMarkers) {
  dt::Builder b = steady_run();
  b.rec.side_records.marks.clear();
  const Verdict v = judge_round(b.analyze());
  EXPECT_FALSE(v.kept);
  EXPECT_EQ(v.reason, "no steady window (no markers)");
}

TEST(Judge, LeavesOutARoundWhoseStopNeverCame) {
  dt::Builder b = steady_run();
  b.rec.side_records.marks.pop_back();
  const Verdict v = judge_round(b.analyze());
  EXPECT_FALSE(v.kept);
  EXPECT_EQ(v.reason.rfind("no steady window (start without stop", 0), 0u) << v.reason;
}

TEST(Judge, LeavesOutARoundWhoseWindowIsPartial) {
  // Chip samples stop at 500 ms: the window 200..800 ms has 300 of its 600 ms covered, 50% < 90%.
  const Verdict v = judge_round(steady_run(98, 80, 4).analyze());
  EXPECT_FALSE(v.kept);
  EXPECT_EQ(v.reason, "window partial (counters covered 50% of the window)");
}

TEST(Judge, APartialWholeRunDoesNotMatterWhenTheWindowIsCovered) {
  // Samples end at 800 ms with the window; the run to 1000 ms is covered 700/1000 = 70%: partial run,
  // full window. Only the window counts for a bench.
  const analysis::Analysis a = steady_run(98, 80, 7).analyze();
  EXPECT_TRUE(a.run.partial);
  EXPECT_FALSE(a.window.results.partial);
  EXPECT_TRUE(judge_round(a).kept);
}

TEST(Judge, HandBuiltAnalysesFollowTheSameRules) {
  analysis::Analysis a;
  a.window.found = false;
  a.window.finding = analysis::WindowFinding::start_without_stop;
  EXPECT_EQ(judge_round(a).reason,
            "no steady window (start without stop: no stop marker after the start marker)");
  a.window.found = true;
  a.window.results.is_window = true;
  a.window.results.partial = true;
  a.window.results.partial_cause = analysis::PartialCause::low_coverage;
  a.window.results.chip_coverage_pct = 42.4;
  EXPECT_EQ(judge_round(a).reason, "window partial (counters covered 42% of the window)");
  a.window.results.partial = false;
  EXPECT_TRUE(judge_round(a).kept);
}

TEST(Figures, HeadlineUnitsRatesAndClocksOverTheWindow) {
  const analysis::Analysis a = steady_run().analyze();
  const std::vector<Figure> f = figures_of(a, a.window.results);
  // GPU-Util 98, DIE-Util = busiest unit = DRAM 80; gap 98 - 80 = 18; stranded 100 - 80 = 20, of which
  // idle 100 - 98 = 2 and active = the gap, 18.
  EXPECT_NEAR(figure(f, "gpu_util_pct"), 98.0, 1e-9);
  EXPECT_NEAR(figure(f, "die_util_pct"), 80.0, 1e-9);
  EXPECT_NEAR(figure(f, "gap_points"), 18.0, 1e-9);
  EXPECT_NEAR(figure(f, "stranded_points"), 20.0, 1e-9);
  EXPECT_NEAR(figure(f, "idle_points"), 2.0, 1e-9);
  EXPECT_NEAR(figure(f, "active_points"), 18.0, 1e-9);
  // The window is 800 - 200 = 600 ms, fully covered by samples.
  EXPECT_NEAR(figure(f, "span_s"), 0.6, 1e-9);
  EXPECT_NEAR(figure(f, "chip_coverage_pct"), 100.0, 1e-9);
  EXPECT_NEAR(figure(f, "sm_clock_mhz"), 1980.0, 1e-9);
  EXPECT_NEAR(figure(f, "mem_clock_mhz"), 3201.0, 1e-9);
  EXPECT_NEAR(figure(f, "unit.fp32"), 10.0, 1e-9);
  EXPECT_NEAR(figure(f, "unit.dram"), 80.0, 1e-9);
  // 4e11 bytes per 100 ms sample = 4e12 bytes/s.
  EXPECT_NEAR(figure(f, "rate.dram_bytes"), 4e12, 1e3);
  // Order: the headline first, units in column order, rates last.
  EXPECT_EQ(f.front().key, "gpu_util_pct");
  EXPECT_EQ(f.back().key, "rate.dram_bytes");
  EXPECT_EQ(f.back().unit, "bytes/s");
  EXPECT_EQ(limiting_label(a, a.window.results), std::optional<std::string>("dram"));
}

TEST(Figures, WithinTheNoiseFloorIdleTakesAllOfStranded) {
  // GPU-Util 80.4 rounds to 80.4, DIE-Util 80.0: |gap| 0.4 <= 0.5 (half of the 1% resolution) counts
  // as 0 in the headline, so active is 0 and idle takes all of stranded, 20; the gap itself stays 0.4.
  dt::Builder b = steady_run(80.4, 80);
  b.rec.meta_data.gpu_util_resolution_pct = 1;
  const analysis::Analysis a = b.analyze();
  const std::vector<Figure> f = figures_of(a, a.window.results);
  EXPECT_NEAR(figure(f, "gap_points"), 0.4, 1e-9);
  EXPECT_NEAR(figure(f, "idle_points"), 20.0, 1e-9);
  EXPECT_EQ(figure(f, "active_points"), 0.0);
}

TEST(Figures, ANegativeGapLeavesTheSplitUnavailable) {
  // GPU-Util 50 below DIE-Util 80: gap -30, idle and active can't be told apart.
  const analysis::Analysis a = steady_run(50, 80).analyze();
  const std::vector<Figure> f = figures_of(a, a.window.results);
  EXPECT_NEAR(figure(f, "gap_points"), -30.0, 1e-9);
  EXPECT_NEAR(figure(f, "stranded_points"), 20.0, 1e-9);
  EXPECT_TRUE(std::isnan(figure(f, "idle_points")));
  EXPECT_TRUE(std::isnan(figure(f, "active_points")));
}

// A round of one GPU with the given DIE-Util and GPU-Util (NaN: not available), kept or not.
Round make_round(int number, double die, double gpu, std::string left_out = "") {
  Round r;
  r.number = number;
  r.folder = fs::path("/tmp/bench") / ("round-0" + std::to_string(number));
  r.ending = recording::RunEnding::exit();
  GpuRound g;
  g.gpu_index = 0;
  g.gpu.index = 0;
  g.gpu.uuid = "GPU-1";
  g.gpu.model = "NVIDIA H200";
  g.recording = r.folder / "gpu0.dsrec";
  g.report = r.folder / "gpu0.dsrec.report" / "report.json";
  g.verdict = {left_out.empty(), left_out};
  g.window_found = left_out.rfind("no steady window", 0) != 0;
  g.window_finding = g.window_found ? analysis::WindowFinding::markers : analysis::WindowFinding::no_markers;
  g.headline = nlohmann::json{{"die_util_pct", die}};
  if (std::isnan(gpu)) {
    g.headline["gpu_util_pct"] = nullptr;
    g.headline["gpu_util_pct_reason"] = "GPU-Util not available";
  } else {
    g.headline["gpu_util_pct"] = gpu;
  }
  g.headline_covers = g.window_found ? "window" : "run";
  g.limiting_unit = "DRAM";
  g.figures = {{"gpu_util_pct", "GPU-Util", "%", "headline", gpu},
               {"die_util_pct", "DIE-Util", "%", "headline", die},
               {"unit.dram", "DRAM", "%", "unit", die},
               {"rate.dram_bytes", "DRAM bytes", "bytes/s", "rate", die * 5e10}};
  r.gpus.push_back(g);
  return r;
}

std::vector<Round> five_rounds() {
  // Kept: 1, 4, 5 with DIE-Util 81, 83, 85; GPU-Util 96, NaN, 98. Left out: 2 (no window), 3 (partial).
  return {make_round(1, 81, 96), make_round(2, 10, 50, "no steady window (no markers)"),
          make_round(3, 20, 60, "window partial (counters covered 50% of the window)"),
          make_round(4, 83, analysis::kNaN), make_round(5, 85, 98)};
}

const FigureStats& stats_of(const GpuBench& b, const std::string& key) {
  for (const FigureStats& s : b.figures)
    if (s.key == key) return s;
  throw std::runtime_error("no statistics for " + key);
}

TEST(Summary, LeftOutRoundsAreNamedAndKeptOnesSummarised) {
  const std::vector<GpuBench> gpus = summarise_rounds(five_rounds());
  ASSERT_EQ(gpus.size(), 1u);
  const GpuBench& b = gpus[0];
  EXPECT_EQ(b.kept, (std::vector<int>{1, 4, 5}));
  ASSERT_EQ(b.left_out.size(), 2u);
  EXPECT_EQ(b.left_out[0].round, 2);
  EXPECT_EQ(b.left_out[0].reason, "no steady window (no markers)");
  EXPECT_EQ(b.left_out[1].round, 3);
  EXPECT_EQ(b.left_out[1].reason, "window partial (counters covered 50% of the window)");
  EXPECT_TRUE(b.enough);
  EXPECT_EQ(b.gpu.model, "NVIDIA H200");

  // DIE-Util over 81, 83, 85: mean 83, sd sqrt((4 + 0 + 4) / 2) = 2, t(2) = 4.302653,
  // half width 4.302653 * 2 / sqrt(3) = 4.968276. Rounds 2 and 3 (10 and 20) do not enter.
  const Summary& die = stats_of(b, "die_util_pct").summary;
  EXPECT_EQ(die.n, 3);
  EXPECT_DOUBLE_EQ(die.mean, 83.0);
  EXPECT_DOUBLE_EQ(die.sd, 2.0);
  EXPECT_DOUBLE_EQ(die.min, 81.0);
  EXPECT_DOUBLE_EQ(die.max, 85.0);
  EXPECT_NEAR(die.low, 83.0 - 4.968276, 1e-6);
  EXPECT_NEAR(die.high, 83.0 + 4.968276, 1e-6);

  // GPU-Util is missing in kept round 4: n = 2 over 96 and 98, mean 97, sd sqrt(2), t(1) = 12.706205,
  // half width 12.706205 * sqrt(2) / sqrt(2) = 12.706205.
  const FigureStats& gpu = stats_of(b, "gpu_util_pct");
  EXPECT_EQ(gpu.summary.n, 2);
  EXPECT_EQ(gpu.missing_in, std::vector<int>{4});
  EXPECT_DOUBLE_EQ(gpu.summary.mean, 97.0);
  EXPECT_NEAR(gpu.summary.half_width, 12.706205, 1e-9);
  EXPECT_EQ(b.limiting_units.at("DRAM"), 3);
}

TEST(Summary, FailedAndInterruptedRoundsAreLeftOutWithTheirReason) {
  std::vector<Round> rounds = five_rounds();
  rounds[0].interrupted = true;
  rounds[4].failure = "command not found: ./app";
  rounds[4].gpus.clear();
  const GpuBench b = summarise_rounds(rounds)[0];
  EXPECT_EQ(b.kept, std::vector<int>{4});
  EXPECT_FALSE(b.enough);
  ASSERT_EQ(b.left_out.size(), 4u);
  EXPECT_EQ(b.left_out[0].reason.rfind("interrupted", 0), 0u);
  EXPECT_EQ(b.left_out[3].reason, "the run failed: command not found: ./app");

  BenchResult result;
  result.rounds = rounds;
  result.gpus = summarise_rounds(rounds);
  EXPECT_EQ(too_few_rounds(result), "GPU 0 kept 1 of 5 rounds, and the statistics need at least 2");
  result.gpus = summarise_rounds(five_rounds());
  EXPECT_EQ(too_few_rounds(result), "");
}

TEST(Summary, EveryGpuIsJudgedOnItsOwn) {
  std::vector<Round> rounds = five_rounds();
  for (Round& r : rounds) {
    GpuRound second = r.gpus[0];
    second.gpu_index = 1;
    second.gpu.index = 1;
    second.verdict = {true, ""};  // GPU 1 kept everything, GPU 0 did not
    r.gpus.push_back(second);
  }
  const std::vector<GpuBench> gpus = summarise_rounds(rounds);
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0].kept.size(), 3u);
  EXPECT_EQ(gpus[1].kept.size(), 5u);
}

BenchResult five_round_result(const fs::path& folder) {
  BenchResult r;
  r.command = {"./app", "--steps", "10"};
  r.rounds_requested = 5;
  r.interval_ms = 10;
  r.drain_ms = 1000;
  r.start_ns = dt::T0;
  r.end_ns = dt::T0 + 60 * recording::kNsPerSecond;
  r.bench_json = folder / "bench.json";
  r.rounds = five_rounds();
  for (Round& round : r.rounds) {
    const fs::path name = round.folder.filename();
    round.folder = folder / name;
    round.duration_s = 12;
    for (GpuRound& g : round.gpus) {
      g.recording = round.folder / "gpu0.dsrec";
      g.report = round.folder / "gpu0.dsrec.report" / "report.json";
    }
  }
  r.rounds[3].exit_code = 3;
  r.gpus = summarise_rounds(r.rounds);
  return r;
}

TEST(BenchJson, NamesKeptAndLeftOutRoundsWithStatisticsAndRelativePaths) {
  const fs::path folder = fs::path(DIESCOPE_BINARY_DIR) / "test-bench" / "rounds_test";
  fs::create_directories(folder);
  const BenchResult r = five_round_result(folder);
  const nlohmann::json j = bench_json(r);
  EXPECT_EQ(j["schema"], kBenchSchemaVersion);
  EXPECT_EQ(j["rounds_run"], 5);
  EXPECT_TRUE(j["workload"].is_null());
  EXPECT_TRUE(j["workload_reason"].is_string());
  EXPECT_EQ(j["rounds"][0]["folder"], "round-01");
  EXPECT_EQ(j["rounds"][0]["gpus"][0]["recording"], "round-01/gpu0.dsrec");
  EXPECT_EQ(j["rounds"][3]["exit_code"], 3);
  EXPECT_EQ(j["rounds"][1]["gpus"][0]["kept"], false);
  EXPECT_EQ(j["rounds"][1]["gpus"][0]["left_out_because"], "no steady window (no markers)");
  EXPECT_EQ(j["rounds"][1]["gpus"][0]["headline_covers"], "run");
  // A figure missing in a round is null with a reason beside it.
  EXPECT_TRUE(j["rounds"][3]["gpus"][0]["figures"]["gpu_util_pct"].is_null());
  EXPECT_TRUE(j["rounds"][3]["gpus"][0]["figures"]["gpu_util_pct_reason"].is_string());
  const auto& g = j["gpus"][0];
  EXPECT_EQ(g["kept_rounds"], nlohmann::json::array({1, 4, 5}));
  EXPECT_EQ(g["left_out"][0], (nlohmann::json{{"round", 2}, {"reason", "no steady window (no markers)"}}));
  const auto& die = g["statistics"][1];
  EXPECT_EQ(die["key"], "die_util_pct");
  EXPECT_EQ(die["n"], 3);
  EXPECT_DOUBLE_EQ(die["mean"].get<double>(), 83.0);
  EXPECT_DOUBLE_EQ(die["sd"].get<double>(), 2.0);
  // Kept for the schema test (tests/rounds/validate_bench.py).
  core::write_file_atomically(r.bench_json, j.dump(2) + "\n");
}

TEST(BenchJson, OneKeptRoundHasNullSpreadWithAReason) {
  const fs::path folder = fs::path(DIESCOPE_BINARY_DIR) / "test-bench" / "rounds_test_one_kept";
  fs::create_directories(folder);
  BenchResult r = five_round_result(folder);
  r.rounds.resize(2);
  r.rounds_requested = 2;
  r.interrupted = true;
  r.stopped_because = "interrupted during round 2";
  r.rounds[1].interrupted = true;
  r.gpus = summarise_rounds(r.rounds);
  const nlohmann::json j = bench_json(r);
  const auto& gpu = j["gpus"][0]["statistics"][0];
  EXPECT_EQ(gpu["n"], 1);
  EXPECT_TRUE(gpu["sd"].is_null());
  EXPECT_EQ(gpu["sd_reason"], "one kept round has a value: no spread");
  EXPECT_EQ(j["stopped_because"], "interrupted during round 2");
  core::write_file_atomically(r.bench_json, j.dump(2) + "\n");
}

TEST(Text, SummaryTableNamesLeftOutRoundsAndTheInterval) {
  const BenchResult r = five_round_result("/tmp/bench");
  const std::string s = render_summary(r);
  EXPECT_NE(s.find("3 of 5 rounds kept"), std::string::npos) << s;
  EXPECT_NE(s.find("round 2 left out: no steady window (no markers)"), std::string::npos) << s;
  EXPECT_NE(s.find("round 3 left out: window partial (counters covered 50% of the window)"),
            std::string::npos)
      << s;
  // DIE-Util: n 3, mean 83.00, sd 2.00, 95% interval 83 -+ 4.968 = 78.03 .. 87.97.
  EXPECT_NE(s.find("78.03 .. 87.97"), std::string::npos) << s;
  EXPECT_NE(s.find("(n/a in round 4)"), std::string::npos) << s;
  EXPECT_NE(s.find("limiting unit: DRAM in 3 of 3 kept rounds"), std::string::npos) << s;
  // DRAM bytes/s are 81, 83, 85 times 5e10: 4.05, 4.15, 4.25 TB/s; mean 4.15, sd 0.1, shown in the
  // row's one unit, TB/s, interval 4.15 -+ 4.302653 * 0.1 / sqrt(3) = 4.15 -+ 0.2484 = 3.902 .. 4.398.
  EXPECT_NE(s.find("DRAM bytes (TB/s)"), std::string::npos) << s;
  EXPECT_NE(s.find("4.150     0.100      4.050      4.250   3.902 .. 4.398"), std::string::npos) << s;
}

TEST(Text, RoundLinesAndTheProgressBar) {
  const std::vector<Round> rounds = five_rounds();
  EXPECT_EQ(describe_round(rounds[0]), "GPU 0 kept (GPU-Util 96.0%, DIE-Util 81.0%)");
  EXPECT_EQ(describe_round(rounds[1]), "GPU 0 left out: no steady window (no markers)");
  Round exited = rounds[4];
  exited.exit_code = 3;
  EXPECT_EQ(describe_round(exited),
            "GPU 0 kept (GPU-Util 98.0%, DIE-Util 85.0%); the command exited with code 3");
  exited.ending = recording::RunEnding::killed_by(SIGSEGV);
  exited.exit_code = 139;
  EXPECT_EQ(describe_round(exited),
            "GPU 0 kept (GPU-Util 98.0%, DIE-Util 85.0%); the command ended by SIGSEGV");
  Round failed;
  failed.failure = "command not found: ./app";
  EXPECT_EQ(describe_round(failed), "could not run: command not found: ./app");

  // 2 of 5 done over 10 cells: 2 * 10 / 5 = 4 filled.
  EXPECT_EQ(progress_bar(2, 5, 10), "[####------]");
  EXPECT_EQ(progress_bar(0, 5, 4), "[----]");
  EXPECT_EQ(progress_bar(5, 5, 4), "[####]");
  EXPECT_EQ(progress_bar(7, 5, 4), "[####]");
}

TEST(Text, AnIntervalEndingJustBelowZeroDoesNotReadMinusZero) {
  // Values 0, 0, 0.001: mean 0.000333, sd 0.000577, half width 4.302653 * 0.000577 / sqrt(3) = 0.001434,
  // low end -0.0011, shown with two decimals as 0.00 (not -0.00).
  std::vector<Round> rounds = {make_round(1, 80, 97), make_round(2, 80, 97), make_round(3, 80, 97)};
  for (int i = 0; i < 3; ++i)
    rounds[static_cast<std::size_t>(i)].gpus[0].figures.push_back(
        {"unit.fma_lite", "FMA lite", "%", "unit", i == 2 ? 0.001 : 0.0});
  BenchResult r;
  r.rounds = rounds;
  r.rounds_requested = 3;
  r.gpus = summarise_rounds(rounds);
  const std::string s = render_summary(r);
  EXPECT_NE(s.find("0.00 .. 0.00"), std::string::npos) << s;
  EXPECT_EQ(s.find("-0.00"), std::string::npos) << s;
}

TEST(Text, PlainProgressLinesWhenNotATerminal) {
  std::ostringstream out;
  StreamProgress progress(out, false);
  const std::vector<Round> rounds = five_rounds();
  progress.round_started(1, 5);
  Round r = rounds[0];
  r.duration_s = 2.34;
  progress.round_finished(r, 5);
  EXPECT_EQ(out.str(),
            "diescope bench: round 1/5 started\n"
            "diescope bench: round 1/5 done in 2.3 s: GPU 0 kept (GPU-Util 96.0%, DIE-Util 81.0%)\n");

  std::ostringstream tty;
  StreamProgress bar(tty, true);
  bar.round_started(1, 2);
  bar.round_finished(r, 2);
  EXPECT_NE(tty.str().find("\r\033[K[------------------------------] round 1/2 running"), std::string::npos);
  EXPECT_NE(tty.str().find("[###############---------------] 1/2 rounds"), std::string::npos) << tty.str();
}

}  // namespace
