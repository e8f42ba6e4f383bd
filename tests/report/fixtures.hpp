// Hand-built analyses for the report tests, and the folder every test report is kept in so the
// schema test (validate_reports.py) can check each one.
#pragma once

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <nlohmann/json.hpp>

#include "diescope/analysis/result.hpp"
#include "diescope/report/report.hpp"

namespace diescope::test {

// A synthetic recording's origin (1 s) and a millisecond, for the tests that build samples by hand.
inline constexpr recording::TimeNs kT0 = 1'000'000'000;
inline constexpr recording::TimeNs kMs = recording::kNsPerMs;

inline std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline constexpr recording::TimeNs kRunStart = 1'700'000'000'000'000'000;

inline recording::ColumnDef column(std::string key, std::string label, std::string metric,
                                   std::string note = "") {
  recording::ColumnDef c;
  c.key = std::move(key);
  c.label = std::move(label);
  c.metric = metric;
  c.recipe.counters = {std::move(metric)};
  c.note = std::move(note);
  return c;
}

inline analysis::ColumnSummary summary(std::string key, double mean, double available_s, double availability,
                                       double max) {
  analysis::ColumnSummary s;
  s.key = std::move(key);
  s.mean_pct = mean;
  s.available_s = available_s;
  s.availability_pct = availability;
  s.max_sample_pct = max;
  return s;
}

// A 3.51 s run on an H200 whose figures are all set by hand:
//   DIE-Util 41.234567 -> 41.2, GPU-Util 47.86 -> 47.9 (tenths 412 and 479)
//   gap      = 47.9 - 41.2 =  6.7  (67 tenths)
//   stranded = 100 - 41.2  = 58.8  (588)
//   idle     = 100 - 47.9  = 52.1  (521), active = 58.8 - 52.1 = 6.7 (67): 521 + 67 = 588
//   chip coverage 3.40 s of 3.51 s = 96.866...%, above the 90% gate
inline analysis::Analysis hopper_analysis() {
  analysis::Analysis a;
  a.method = 4;
  recording::RecordingMeta& m = a.meta;
  m.format_version = 1;
  m.tool_version = "0.1.0";
  m.method = 4;
  m.gpu = recording::GpuIdentity{0, "GPU-0f0e", "NVIDIA H200", "GH100", "580.159", 90, 52'428'800, 132, ""};
  m.unit_table = "hopper-gh100";
  m.units = {
      column("fp32", "FP32", "sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_elapsed",
             "the FMA pipe's instruction counter"),
      column("tensor", "Tensor", "sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed"),
      column("dram", "DRAM", "dram__bytes.sum.pct_of_peak_sustained_elapsed",
             "bytes moved, a share of bandwidth"),
      column("l2", "L2", "lts__t_bytes.sum.pct_of_peak_sustained_elapsed")};
  m.units[3].flags = {recording::UnitFlag::stand_in_counter};
  m.diagnostics = {column("sm_active", "SM active", "gr__cycles_active.avg.pct_of_peak_sustained_elapsed")};
  m.counts = {column("dram_bytes", "DRAM bytes", "dram__bytes.sum")};
  m.counts[0].unit = "bytes";
  m.interval_ms = 10;
  m.drain_ms = 1000;
  m.gpu_util_resolution_pct = 1;
  m.start_ns = kRunStart;
  m.command = {"/usr/bin/probe", "--phases"};
  m.host = "h200-test";

  analysis::SpanResults& r = a.run;
  r.start_ns = kRunStart;
  r.end_ns = kRunStart + 3'510'000'000;
  r.span_s = 3.51;
  r.samples_read = 293;
  r.samples_used = 292;
  r.dropped_first = 1;
  r.chip_covered_s = 3.40;
  r.chip_coverage_pct = 100.0 * 3.40 / 3.51;
  r.die_util_pct = 41.234567;
  r.units = {summary("fp32", 29.87, 3.40, 100, 84.98), summary("tensor", 1.8, 3.40, 100, 5.311),
             summary("dram", 22.61, 3.40, 100, 82.26), summary("l2", analysis::kNaN, 0, 0, analysis::kNaN)};
  r.diagnostics = {summary("sm_active", 40.1, 3.40, 100, 100)};
  r.limiting_unit = "fp32";
  r.gpu_util_pct = 47.86;
  r.gpu_util_coverage_pct = 100;
  r.gpu_util_from = analysis::GpuUtilFrom::samples;
  r.gpu_util_whole_span_coverage_pct = 100;
  r.headline.gpu_util_tenths = 479;
  r.headline.die_util_tenths = 412;
  r.headline.gap_tenths = 67;
  r.headline.stranded_tenths = 588;
  r.headline.idle_tenths = 521;
  r.headline.active_tenths = 67;
  r.rates_per_s = {{"dram_bytes", 1.1e12}};
  r.sm_clock = analysis::ClockStats{1755, 1980, 1961.4, 35};
  r.mem_clock = analysis::ClockStats{3201, 3201, 3201, 35};
  r.throttle_reasons = std::vector<std::string>{"gpu_idle"};
  r.power_limit_min_w = 700;
  r.power_limit_max_w = 700;
  // Energy (docs/energy.md): 1404 J from the counter over 3.51 s is 400 W; of 1360 J over the chip
  // samples, 340 J while DIE-Util was under 10%: 25%.
  r.energy.energy_j = 1404;
  r.energy.source = analysis::EnergySource::counter;
  r.energy.missing = analysis::EnergyMissing::none;
  r.energy.covered_s = 3.51;
  r.energy.coverage_pct = 100;
  r.energy.mean_power_w = 400;
  r.energy.chip_sampled_j = 1360;
  r.energy.stranded_j = 340;
  r.energy.stranded_pct = 25;

  a.window.finding = analysis::WindowFinding::no_markers;
  a.hygiene.compute_holders_max = 0;
  a.hygiene.graphics_holders_max = 0;
  return a;
}

// The same run with a steady window between markers at 0.90 s and 2.10 s:
//   window DIE-Util 84.97 -> 85.0 (850), GPU-Util 99.0 (990)
//   gap 99.0 - 85.0 = 14.0 (140), stranded 100 - 85.0 = 15.0 (150), idle 100 - 99.0 = 1.0 (10),
//   active 15.0 - 1.0 = 14.0 (140)
inline analysis::Analysis hopper_analysis_with_window() {
  analysis::Analysis a = hopper_analysis();
  a.window.found = true;
  a.window.finding = analysis::WindowFinding::markers;
  analysis::SpanResults& w = a.window.results;
  w = a.run;
  w.is_window = true;
  w.start_ns = kRunStart + 900'000'000;
  w.end_ns = kRunStart + 2'100'000'000;
  w.span_s = 1.2;
  w.samples_read = 120;
  w.samples_used = 120;
  w.dropped_first = 0;
  w.chip_covered_s = 1.2;
  w.chip_coverage_pct = 100;
  w.die_util_pct = 84.97;
  w.units = {summary("fp32", 84.97, 1.2, 100, 84.98), summary("tensor", 5.3, 1.2, 100, 5.311),
             summary("dram", 0.001, 1.2, 100, 0.002), summary("l2", analysis::kNaN, 0, 0, analysis::kNaN)};
  w.gpu_util_pct = 99.0;
  w.headline.gpu_util_tenths = 990;
  w.headline.die_util_tenths = 850;
  w.headline.gap_tenths = 140;
  w.headline.stranded_tenths = 150;
  w.headline.idle_tenths = 10;
  w.headline.active_tenths = 140;
  w.sm_clock = analysis::ClockStats{1980, 1980, 1980, 12};
  w.throttle_reasons = std::vector<std::string>{};
  // 600 J over the window's 1.2 s is 500 W, none of it stranded.
  w.energy.energy_j = 600;
  w.energy.covered_s = 1.2;
  w.energy.mean_power_w = 500;
  w.energy.chip_sampled_j = 600;
  w.energy.stranded_j = 0;
  w.energy.stranded_pct = 0;
  return a;
}

// Keeps a report where the schema test finds it: <build>/test-reports/<name>.json.
inline std::filesystem::path test_reports_dir() {
  std::filesystem::path dir = std::filesystem::path(DIESCOPE_BINARY_DIR) / "test-reports";
  std::filesystem::create_directories(dir);
  return dir;
}

inline void keep_report(const std::string& name, const nlohmann::json& report) {
  std::ofstream(test_reports_dir() / (name + ".json")) << report::dump_report(report);
}

}  // namespace diescope::test
