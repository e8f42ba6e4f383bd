// The terminal headline: exact figures on hand-built analyses, layout against golden files, and a
// re-rendered report.json reading the same as the original.
#include <gtest/gtest.h>

#include <cmath>

#include "diescope/analysis/analyze.hpp"
#include "diescope/analysis/energy.hpp"
#include "diescope/recording/memory_recording.hpp"
#include "diescope/recording/synthetic.hpp"
#include "diescope/report/renderer.hpp"
#include "diescope/report/report.hpp"
#include "fixtures.hpp"
#include "golden.hpp"

namespace diescope {
namespace {

using nlohmann::json;
using test::golden_mismatch;
using test::hopper_analysis;
using test::hopper_analysis_with_window;
using test::keep_report;
using test::kRunStart;
using test::split_lines;

const std::filesystem::path kGolden = std::filesystem::path(DIESCOPE_SOURCE_DIR) / "tests/report/golden";

std::string render(const analysis::Analysis& a) {
  return report::render_terminal(report::build_report(a));
}

TEST(Terminal, ExactHeadlineOfAFullRun) {
  // Figures from hopper_analysis(): GPU-Util 47.9, DIE-Util 41.2, gap 47.9 - 41.2 = 6.7,
  // stranded 100 - 41.2 = 58.8 = idle (100 - 47.9 = 52.1) + active 6.7; coverage 3.40/3.51 = 96.9%;
  // FP32's mean 29.87 -> 29.9; 84.98 -> 85.0; 82.26 -> 82.3; 5.311 -> 5.3; SM mean 1961.4 -> 1961.
  const std::string want =
      "diescope: NVIDIA H200 (GH100, driver 580.159), single run, 3.51 s, method 4\n"
      "  GPU-Util      47.9%   nvidia-smi's figure (samples), over the time the counters cover\n"
      "  DIE-Util      41.2%   busiest unit per sample (max-unit, experimental)\n"
      "  gap           6.7     points, GPU-Util minus DIE-Util\n"
      "  stranded      58.8    points = idle 52.1 + active 6.7\n"
      "  limiting      FP32    29.9% of peak\n"
      "  coverage              counters 96.9% of the run (gate 90%); GPU-Util 100.0% of counter time (gate "
      "90%)\n"
      "  calibration           unvalidated: no calibration file for this GPU model, driver and method\n"
      "\n"
      "  units            mean  available  peak sample\n"
      "  FP32            29.9%     100.0%        85.0%\n"
      "  Tensor           1.8%     100.0%         5.3%\n"
      "  DRAM            22.6%     100.0%        82.3%\n"
      "  L2                n/a       0.0%          n/a  [stand_in_counter]\n"
      "  rate                  dram_bytes: 1.1e+12 per second\n"
      "  clocks                over the run: SM 1755-1980 MHz, mean 1961; memory 3201 MHz\n"
      "  throttle              gpu_idle; power limit 700 W\n"
      "  energy                1404.0 J (NVML's energy counter), 400 W mean; 340.0 J stranded (25.0% of the "
      "chip-sampled energy, DIE-Util under 10%)\n"
      "\n"
      "steady window: none (no markers)\n";
  EXPECT_EQ(render(hopper_analysis()), want);
}

// docs/energy.md#joules-per-tflop: the window's 600 J over the 120 TFLOP (1.2e14 FLOPs) the program
// printed for it is 5 J per TFLOP; the run has none, since the FLOPs were the window's. The row, the
// JSON fields and the page's line appear only in reports of recordings that hold the FLOPs.
TEST(Terminal, JoulesPerTflopRowWhereTheProgramGaveItsFlops) {
  analysis::Analysis a = hopper_analysis_with_window();
  EXPECT_EQ(render(a).find("J/TFLOP"), std::string::npos);
  analysis::set_span_flops(a.window.results.energy, 1.2e14, analysis::FlopsMissing::run_only);
  analysis::set_span_flops(a.run.energy, std::nan(""), analysis::FlopsMissing::window_only);
  const json r = report::build_report(a);
  keep_report("joules-per-tflop", r);
  const json& w = r["window"]["results"]["energy"];
  EXPECT_DOUBLE_EQ(w["flops"].get<double>(), 1.2e14);
  EXPECT_EQ(w["flops_source"], "program");
  EXPECT_DOUBLE_EQ(w["joules_per_tflop"].get<double>(), 5.0);
  const json& run = r["results"]["energy"];
  EXPECT_TRUE(run["flops"].is_null());
  EXPECT_EQ(run["flops_reason"], "the program gave the steady window's FLOPs, not the whole run's");
  EXPECT_TRUE(run["joules_per_tflop"].is_null());
  EXPECT_EQ(run["flops_source"], "none");
  const std::string out = report::render_terminal(r);
  EXPECT_NE(out.find("  J/TFLOP               n/a: the program gave the steady window's FLOPs, not the whole "
                     "run's\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("  J/TFLOP               5 J per TFLOP: 600.0 J over 120 TFLOP (NVML's energy counter; "
                     "FLOPs printed by the program)\n"),
            std::string::npos)
      << out;
}

TEST(Terminal, WindowSectionHasItsOwnFigures) {
  std::string out = render(hopper_analysis_with_window());
  // Window: GPU-Util 99.0, DIE-Util 85.0, gap 14.0, stranded 15.0 = idle 1.0 + active 14.0.
  const std::string want_window =
      "\n"
      "steady window (markers): 0.90 s to 2.10 s of the run, 1.20 s\n"
      "  GPU-Util      99.0%   nvidia-smi's figure (samples), over the time the counters cover\n"
      "  DIE-Util      85.0%   busiest unit per sample (max-unit, experimental)\n"
      "  gap           14.0    points, GPU-Util minus DIE-Util\n"
      "  stranded      15.0    points = idle 1.0 + active 14.0\n"
      "  limiting      FP32    85.0% of peak\n"
      "  coverage              counters 100.0% of the window (gate 90%); GPU-Util 100.0% of counter time "
      "(gate 90%)\n"
      "  energy                600.0 J (NVML's energy counter), 500 W mean; 0.0 J stranded (0.0% of the "
      "chip-sampled energy, DIE-Util under 10%)\n";
  ASSERT_GE(out.size(), want_window.size());
  EXPECT_EQ(out.substr(out.size() - want_window.size()), want_window);
  // The clocks cover the window: a steady 1980 MHz there.
  EXPECT_NE(out.find("  clocks                over the steady window: SM 1980 MHz; memory 3201 MHz\n"),
            std::string::npos);
  EXPECT_NE(out.find("  throttle              none; power limit 700 W\n"), std::string::npos);
}

TEST(Terminal, PartialSaysSoOnItsFirstLineAndDieUtilRow) {
  analysis::Analysis a = hopper_analysis();
  a.run.chip_covered_s = 2.0;
  a.run.chip_coverage_pct = 100.0 * 2.0 / 3.51;  // 56.98% -> 57.0
  a.run.partial = true;
  a.run.partial_cause = analysis::PartialCause::low_coverage;
  a.run.gpu_util_whole_span_pct = 45.04;
  json r = report::build_report(a);
  keep_report("terminal_partial", r);
  auto lines = split_lines(report::render_terminal(r));
  ASSERT_GE(lines.size(), 7u);
  EXPECT_EQ(
      lines[0],
      "diescope: partial (counters covered 57% of the run): NVIDIA H200 (GH100, driver 580.159), single run, "
      "3.51 s, method 4");
  EXPECT_EQ(lines[1],
            "  GPU-Util      47.9%   nvidia-smi's figure (samples), over the time the counters cover; whole "
            "run 45.0%");
  EXPECT_EQ(
      lines[2],
      "  DIE-Util      41.2%   partial (counters covered 57% of the run); busiest unit per sample (max-unit, "
      "experimental)");
  EXPECT_EQ(lines[6],
            "  coverage              counters 57.0% of the run (gate 90%); GPU-Util 100.0% of counter time "
            "(gate 90%)");
}

TEST(Terminal, ACutOffRecordingSaysSoFirst) {
  // No end record: the run is taken to end at the last record; the headline says so before the rest.
  analysis::Analysis a = hopper_analysis();
  a.findings.push_back({analysis::AnalysisFinding::Kind::no_end_record, a.run.end_ns, 3.51});
  json r = report::build_report(a);
  keep_report("terminal_cut_off", r);
  EXPECT_TRUE(r.at("source").at("cut_off").get<bool>());
  EXPECT_FALSE(r.at("source").at("truncated").get<bool>());
  auto lines = split_lines(report::render_terminal(r));
  ASSERT_GE(lines.size(), 1u);
  EXPECT_EQ(lines[0],
            "diescope: cut off at 3.51 s (the recording ends early): NVIDIA H200 (GH100, driver 580.159), "
            "single run, 3.51 s, method 4");
  // Half a last record: the same.
  analysis::Analysis b = hopper_analysis();
  b.truncated_input = true;
  EXPECT_EQ(split_lines(render(b))[0].rfind("diescope: cut off at 3.51 s (the recording ends early): ", 0),
            0u);
  // A whole recording does not.
  EXPECT_FALSE(report::build_report(hopper_analysis()).at("source").at("cut_off").get<bool>());
}

TEST(Terminal, GapWithinTheNoiseFloorReadsZero) {
  analysis::Analysis a = hopper_analysis();
  // GPU-Util 41.5, DIE-Util 41.2: gap 0.3 < floor 0.5, counted as 0; idle takes all of stranded:
  // stranded 58.8 = idle 58.8 + active 0.0.
  a.run.gpu_util_pct = 41.5;
  a.run.headline = analysis::Headline{
      415, 412, 0, 588, 588, 0, true, analysis::GapMissing::none, analysis::SplitMissing::none, ""};
  json r = report::build_report(a);
  keep_report("terminal_noise_floor", r);
  auto lines = split_lines(report::render_terminal(r));
  // Raw gap 41.5 - 41.234567 = 0.265433 -> 0.3.
  EXPECT_EQ(lines[3],
            "  gap           0.0     points: 0.3 is within GPU-Util's noise floor (0.5), so it counts as 0");
  EXPECT_EQ(lines[4], "  stranded      58.8    points = idle 58.8 + active 0.0");
}

TEST(Terminal, MissingFiguresSayWhy) {
  analysis::Analysis a = hopper_analysis();
  a.run.gpu_util_pct = analysis::kNaN;
  a.run.gpu_util_coverage_pct = analysis::kNaN;
  a.run.gpu_util_from = analysis::GpuUtilFrom::none;
  a.run.gpu_util_missing = analysis::GpuUtilMissing::not_covered;
  a.run.headline = analysis::Headline{};
  a.run.headline.die_util_tenths = 412;
  a.run.headline.stranded_tenths = 588;
  a.run.headline.gap_missing = analysis::GapMissing::no_gpu_util;
  a.run.headline.split_missing = analysis::SplitMissing::no_gap;
  a.run.limiting_unit.reset();
  a.run.limiting_unit_missing = analysis::LimitingUnitMissing::no_busy_unit;
  json r = report::build_report(a);
  keep_report("terminal_missing", r);
  auto lines = split_lines(report::render_terminal(r));
  EXPECT_EQ(lines[1], "  GPU-Util      n/a     no GPU-Util sample covers the chip-sampled time");
  EXPECT_EQ(
      lines[3],
      "  gap           n/a     GPU-Util is not available: no GPU-Util sample covers the chip-sampled time");
  EXPECT_EQ(lines[4],
            "  stranded      58.8    points; idle and active n/a: GPU-Util is not available: no GPU-Util "
            "sample covers "
            "the chip-sampled time");
  EXPECT_EQ(lines[5], "  limiting      none    no unit reached 1% of its peak");
  EXPECT_EQ(lines[6],
            "  coverage              counters 96.9% of the run (gate 90%); GPU-Util n/a (gate 90%)");
}

// The counters held by another tool (ncu profiling another process): a recording with NVML's polled
// GPU-Util and no chip sample. GPU-Util is given over the whole run and window
// (docs/method.md#gpu-util-without-chip-samples), in report.json and on the terminal alike.
TEST(Terminal, GpuUtilWithoutChipSamplesIsOverTheWholeRunAndWindow) {
  constexpr recording::TimeNs kMs = 1'000'000;
  recording::MemoryRecording rec;
  rec.meta_data = hopper_analysis().meta;
  rec.side_records.end = recording::RunEnd{kRunStart + 1500 * kMs, 0, recording::RunEnding::exit()};
  rec.side_records.last_ts_ns = kRunStart + 1500 * kMs;
  rec.side_records.marks = {{kRunStart + 300 * kMs, recording::MarkKind::start},
                            {kRunStart + 1200 * kMs, recording::MarkKind::stop}};
  const auto polled = recording::UtilSource::polled;
  rec.list<recording::UtilSample>() = {{kRunStart + 500 * kMs, 81, polled},    // the run's [0, 500)
                                       {kRunStart + 900 * kMs, 92, polled},    // (500, 900]
                                       {kRunStart + 1500 * kMs, 67, polled}};  // (900, 1500]
  const analysis::Analysis a = analysis::analyze(rec);
  json r = report::build_report(a);
  keep_report("terminal_gpu_util_without_chip_samples", r);

  // Run: (81 x 500 + 92 x 400 + 67 x 600) / 1500 = 117500 / 1500 = 78.333... -> 78.3.
  EXPECT_NEAR(r["results"]["gpu_util_pct"].get<double>(), 117500.0 / 1500.0, 1e-9);
  EXPECT_NEAR(r["results"]["gpu_util_whole_span_pct"].get<double>(), 117500.0 / 1500.0, 1e-9);
  EXPECT_DOUBLE_EQ(r["results"]["headline"]["gpu_util_pct"].get<double>(), 78.3);
  EXPECT_EQ(r["results"]["gpu_util_covers"], "the whole run (no usable chip samples)");
  EXPECT_EQ(r["results"]["gpu_util_source"], "polled");
  EXPECT_TRUE(r["results"]["headline"]["die_util_pct"].is_null());
  // Window [300, 1200): (81 x 200 + 92 x 400 + 67 x 300) / 900 = 73100 / 900 = 81.222... -> 81.2.
  const json& w = r["window"]["results"];
  EXPECT_NEAR(w["gpu_util_pct"].get<double>(), 73100.0 / 900.0, 1e-9);
  EXPECT_DOUBLE_EQ(w["headline"]["gpu_util_pct"].get<double>(), 81.2);
  EXPECT_EQ(w["gpu_util_covers"], "the whole window (no usable chip samples)");

  const std::string text = report::render_terminal(r);
  auto lines = split_lines(text);
  EXPECT_EQ(
      lines[1],
      "  GPU-Util      78.3%   nvidia-smi's figure (polled), over the whole run (no usable chip samples)");
  EXPECT_EQ(
      lines[2],
      "  DIE-Util      n/a     partial (counters covered 0% of the run); no usable chip samples in the run");
  EXPECT_EQ(
      lines[6],
      "  coverage              counters 0.0% of the run (gate 90%); GPU-Util 100.0% of the run (gate 90%)");
  EXPECT_NE(
      text.find("  GPU-Util      81.2%   nvidia-smi's figure (polled), over the whole window (no usable chip "
                "samples)\n"),
      std::string::npos)
      << text;
  // The re-rendered report.json reads the same.
  EXPECT_EQ(report::render_terminal(json::parse(report::dump_report(r))), text);
}

// A recording whose chip nothing named (GPM on a compute capability of several chips) reads as
// unknown in the first line, never as "(, driver".
TEST(Terminal, AnUnnamedChipReadsAsUnknown) {
  analysis::Analysis a = hopper_analysis();
  a.meta.gpu.chip.clear();
  const std::string text = render(a);
  EXPECT_EQ(text.rfind("diescope: NVIDIA H200 (unknown chip, driver 580.159), single run", 0), 0u) << text;
}

// Another process on the GPU: the headline says so right after the calibration line, as report.json's
// hygiene does (docs/method.md#shared-gpus-in-the-headline).
TEST(Terminal, OtherProcessesOnTheGpuAreInTheHeadline) {
  analysis::Analysis a = hopper_analysis();
  a.hygiene.compute_holders_max = 3;
  a.hygiene.graphics_holders_max = 1;
  json r = report::build_report(a);
  keep_report("terminal_shared_gpu", r);
  const std::string words =
      "up to 3 compute and 1 graphics processes held the GPU at once (the measured command's included); "
      "chip figures are device-wide: the counters see every process on the GPU";
  EXPECT_EQ(r["hygiene"]["shared"], words);
  auto lines = split_lines(report::render_terminal(r));
  ASSERT_GT(lines.size(), 8u);
  EXPECT_EQ(lines[7].rfind("  calibration", 0), 0u);
  EXPECT_EQ(lines[8], "  shared GPU            " + words);

  // One holder at most (the measured command): no such line, and no field.
  json alone = report::build_report(hopper_analysis());
  EXPECT_FALSE(alone["hygiene"].contains("shared"));
  EXPECT_EQ(report::render_terminal(alone).find("shared GPU"), std::string::npos);
}

// With holder records the line names the other processes, by name and pid, and the most at once;
// the command's own processes alone give no line (docs/method.md#shared-gpus-in-the-headline).
TEST(Terminal, OtherProcessesAreNamedWithTheirPids) {
  analysis::Analysis a = hopper_analysis();
  a.hygiene.compute_holders_max = 4;
  a.hygiene.graphics_holders_max = 0;
  a.hygiene.holders_recorded = true;
  a.hygiene.other_processes = {{853, "ncu", kRunStart + 2'000'000'000}, {900, "", kRunStart + 2'500'000'000}};
  a.hygiene.other_processes_max = 1;
  json r = report::build_report(a);
  const std::string words =
      "2 other processes used the GPU during the run, at most 1 at once: ncu (pid 853), name not readable "
      "(pid 900); chip figures are device-wide: the counters see every process on the GPU";
  EXPECT_EQ(r["hygiene"]["shared"], words);
  ASSERT_EQ(r["hygiene"]["other_processes"].size(), 2u);
  EXPECT_EQ(r["hygiene"]["other_processes"][0]["pid"], 853);
  EXPECT_EQ(r["hygiene"]["other_processes"][0]["name"], "ncu");
  EXPECT_DOUBLE_EQ(r["hygiene"]["other_processes"][0]["first_s"].get<double>(), 2.0);
  EXPECT_EQ(r["hygiene"]["other_processes_max"], 1);
  auto lines = split_lines(report::render_terminal(r));
  ASSERT_GT(lines.size(), 8u);
  EXPECT_EQ(lines[8], "  shared GPU            " + words);

  // Six others: five named, then how many more.
  a.hygiene.other_processes.clear();
  for (int i = 0; i < 6; ++i)
    a.hygiene.other_processes.push_back({100 + i, "w" + std::to_string(i), kRunStart});
  a.hygiene.other_processes_max = 6;
  EXPECT_EQ(report::build_report(a)["hygiene"]["shared"],
            "6 other processes used the GPU during the run, at most 6 at once: w0 (pid 100), w1 (pid 101), "
            "w2 (pid 102), w3 (pid 103), w4 (pid 104) and 1 more; chip figures are device-wide: the counters "
            "see every process on the GPU");

  // Only the command's processes (four holders, no other): no line, and an empty list.
  a.hygiene.other_processes.clear();
  a.hygiene.other_processes_max = 0;
  json own = report::build_report(a);
  EXPECT_FALSE(own["hygiene"].contains("shared"));
  EXPECT_TRUE(own["hygiene"]["other_processes"].empty());
  EXPECT_EQ(report::render_terminal(own).find("shared GPU"), std::string::npos);

  // A recording without pids: null with the reason.
  json old = report::build_report(hopper_analysis());
  EXPECT_TRUE(old["hygiene"]["other_processes"].is_null());
  EXPECT_NE(old["hygiene"]["other_processes_reason"].get<std::string>().find("keeps no pids"),
            std::string::npos);
}

TEST(Terminal, IdleCauseRows) {
  // data/recordings/synthetic-input-bound.dsrec: 4 workers at 98% of a core while the GPU waits,
  // 0.4 s of every 1 s; the main process 5% (0.05 cores), 100% (1 core) during the step.
  const auto rec = recording::make_synthetic_recording(recording::input_bound_spec());
  const json r = report::build_report(analysis::analyze(*rec));
  keep_report("terminal_idle_explained", r);
  const json& x = r["results"]["idle_explained"];
  EXPECT_EQ(x["verdict"], "input_bound");
  // 4 x 0.98 = 3.92 cores of 4; the command 0.05 + 3.92 = 3.97 while idle, 1 + 4 x 0.7 = 3.8 while busy.
  const std::string cause =
      "input-bound: while GPU 0 idled, the 4 worker processes (pt_data_worker) used 3.9 of 4 cores";
  EXPECT_EQ(x["wording"], cause);
  EXPECT_NEAR(x["worker_cores"].get<double>(), 3.92, 1e-9);
  EXPECT_NEAR(x["command_cores"].get<double>(), 3.97, 1e-9);
  EXPECT_NEAR(x["command_cores_while_busy"].get<double>(), 3.8, 1e-9);
  const std::string terminal = report::render_terminal(r);
  EXPECT_NE(terminal.find("  idle cause            " + cause + "\n"), std::string::npos) << terminal;
  EXPECT_NE(
      terminal.find("  host                  the command used 4.0 cores (3.8 while the GPU was busy), its "
                    "workers 3.9 of 4; busiest pt_data_worker (pid 1001) 1.0 cores, 3 threads, its "
                    "busiest at 98% of a core; host CPU 50% busy of 8 CPUs, iowait 0.3%; disks 2.0 MB/s "
                    "read, 0 B/s written; memory 62% available (means over 8.0 s of GPU-idle time)\n"),
      std::string::npos)
      << terminal;
  // A recording without host streams: no field, no rows.
  const json plain = report::build_report(hopper_analysis());
  EXPECT_FALSE(plain["results"].contains("idle_explained"));
  EXPECT_EQ(report::render_terminal(plain).find("idle cause"), std::string::npos);
}

TEST(Terminal, NegativeGapIsPrintedWithItsSign) {
  analysis::Analysis a = hopper_analysis();
  // GPU-Util 8.4, DIE-Util 93.8 (video encoder): gap -85.4, stranded 6.2 = idle 91.6 + active -85.4.
  a.run.headline = analysis::Headline{
      84, 938, -854, 62, 916, -854, false, analysis::GapMissing::none, analysis::SplitMissing::none, ""};
  auto lines = split_lines(render(a));
  EXPECT_EQ(lines[3], "  gap           -85.4   points, GPU-Util minus DIE-Util");
  EXPECT_EQ(lines[4], "  stranded      6.2     points = idle 91.6 + active -85.4");
}

TEST(Terminal, NotesAreListedLast) {
  analysis::Analysis a = hopper_analysis();
  a.notes = {recording::Note{0, "sampler", "the counter decoder stopped at 2.1 s"}};
  a.hygiene.clock_jumps = {recording::ClockJump{test::kRunStart + 1'500'000'000, -250'000'000}};
  auto lines = split_lines(render(a));
  ASSERT_GE(lines.size(), 3u);
  EXPECT_EQ(lines[lines.size() - 3], "notes");
  EXPECT_EQ(lines[lines.size() - 2], "  [sampler] the counter decoder stopped at 2.1 s");
  EXPECT_EQ(lines[lines.size() - 1],
            "  [hygiene] the wall clock stepped by -0.250 s at 1.500 s into the run; figures over spans that "
            "cross it may "
            "be wrong");
}

TEST(Terminal, ReRenderedReportReadsTheSame) {
  json r = report::build_report(hopper_analysis_with_window());
  json back = json::parse(report::dump_report(r));
  EXPECT_EQ(report::render_terminal(back), report::render_terminal(r));
}

TEST(Terminal, RendererWritesToItsStream) {
  json r = report::build_report(hopper_analysis());
  std::ostringstream out;
  report::TerminalRenderer terminal(out);
  terminal.render(report::ReportInput{r});
  EXPECT_EQ(out.str(), report::render_terminal(r));
}

TEST(Terminal, CalibrationLineNamesUnitsByVerdict) {
  analysis::Analysis a = hopper_analysis();
  report::ReportContext ctx;
  ctx.calibration =
      json{{"status", "partial"},
           {"reason", "a full calibration in which some units passed"},
           {"units", {{"dram", "pass"}, {"fp32", "pass"}, {"tensor", "no_check"}, {"l2", "fail"}}}};
  json r = build_report(a, ctx);
  keep_report("terminal_calibration", r);
  auto lines = split_lines(report::render_terminal(r));
  // Units in the report's order (FP32, Tensor, DRAM, L2), grouped pass, fail, inconclusive, no check.
  EXPECT_EQ(
      lines[7],
      "  calibration           partial: a full calibration in which some units passed; passed FP32, DRAM; "
      "failed L2; no check Tensor");
}

// A reason written by calibrate's lookup already names the units by verdict: the line does not
// repeat them (it did: "passed FP32 ...; passed FP32 ..." in
// bench/results/calibrate/2026-11-29-h200-mma-sync/outputs.txt, run-lookup).
TEST(Terminal, CalibrationLineDoesNotRepeatTheLookupsUnitList) {
  analysis::Analysis a = hopper_analysis();
  report::ReportContext ctx;
  ctx.calibration = json{
      {"status", "partial"},
      {"reason", "full calibration of 2026-11-29T17:47:42Z: passed FP32, DRAM; failed L2; no check Tensor"},
      {"units", {{"dram", "pass"}, {"fp32", "pass"}, {"tensor", "no_check"}, {"l2", "fail"}}}};
  json r = build_report(a, ctx);
  auto lines = split_lines(report::render_terminal(r));
  EXPECT_EQ(lines[7],
            "  calibration           partial: full calibration of 2026-11-29T17:47:42Z: passed FP32, DRAM; "
            "failed L2; "
            "no check Tensor");
}

// Layout and wording, figures as placeholders.
TEST(TerminalGolden, FullRun) {
  EXPECT_EQ(golden_mismatch(render(hopper_analysis()), kGolden / "run.txt"), "");
}

TEST(TerminalGolden, RunWithWindow) {
  EXPECT_EQ(golden_mismatch(render(hopper_analysis_with_window()), kGolden / "window.txt"), "");
}

TEST(TerminalGolden, PartialRun) {
  analysis::Analysis a = hopper_analysis();
  a.run.chip_coverage_pct = 50;
  a.run.partial = true;
  a.run.partial_cause = analysis::PartialCause::low_coverage;
  EXPECT_EQ(golden_mismatch(render(a), kGolden / "partial.txt"), "");
}

TEST(TerminalGolden, PlaceholdersStillCatchWrongWording) {
  analysis::Analysis a = hopper_analysis();
  a.run.partial = true;
  a.run.partial_cause = analysis::PartialCause::low_coverage;
  // A partial run does not match the full run's golden file: its first line differs.
  EXPECT_NE(golden_mismatch(render(a), kGolden / "run.txt"), "");
}

}  // namespace
}  // namespace diescope
