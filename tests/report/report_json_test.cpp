// report.json: versions, the method's fields (docs/report.md), NaN as null with a reason, exact
// headline figures.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "diescope/core/error.hpp"
#include "diescope/core/version.hpp"
#include "diescope/report/report.hpp"
#include "fixtures.hpp"

namespace diescope {
namespace {

using nlohmann::json;
using test::hopper_analysis;
using test::hopper_analysis_with_window;
using test::keep_report;
using test::kRunStart;

TEST(ReportJson, CarriesSchemaAndMethodVersions) {
  json r = report::build_report(hopper_analysis(), {"probe.dsrec", {}});
  keep_report("versions", r);
  EXPECT_EQ(r["schema"], core::kReportSchemaVersion);
  EXPECT_EQ(r["method"], 4);
  EXPECT_EQ(r["tool"]["version"], core::kToolVersion);
  EXPECT_EQ(r["run_type"], "single");
  EXPECT_EQ(r["source"]["recording"], "probe.dsrec");
  EXPECT_EQ(r["die_util_algorithm"], json({{"name", "max-unit"}, {"status", "experimental"}}));
}

TEST(ReportJson, HeadlineInPointsWithOneDecimalBesideFullPrecision) {
  json r = report::build_report(hopper_analysis());
  keep_report("headline", r);
  const json& h = r["results"]["headline"];
  // Tenths from the fixture: 479, 412, 67, 588, 521, 67.
  EXPECT_DOUBLE_EQ(h["gpu_util_pct"].get<double>(), 47.9);
  EXPECT_DOUBLE_EQ(h["die_util_pct"].get<double>(), 41.2);
  EXPECT_DOUBLE_EQ(h["gap_points"].get<double>(), 6.7);
  EXPECT_DOUBLE_EQ(h["stranded_points"].get<double>(), 58.8);
  EXPECT_DOUBLE_EQ(h["idle_points"].get<double>(), 52.1);
  EXPECT_DOUBLE_EQ(h["active_points"].get<double>(), 6.7);
  EXPECT_EQ(h["gap_within_noise_floor"], false);
  // Noise floor: half of the 1% resolution.
  EXPECT_DOUBLE_EQ(h["noise_floor_points"].get<double>(), 0.5);
  // The file keeps the figures the headline was rounded from.
  EXPECT_EQ(r["results"]["die_util_pct"].get<double>(), 41.234567);
  EXPECT_EQ(r["results"]["gpu_util_pct"].get<double>(), 47.86);
  // 47.86 - 41.234567 = 6.625433
  EXPECT_NEAR(r["results"]["gap_points"].get<double>(), 6.625433, 1e-12);
  // In the dumped text too: full precision survives the round trip.
  json back = json::parse(report::dump_report(r));
  EXPECT_EQ(back["results"]["die_util_pct"].get<double>(), 41.234567);
  EXPECT_EQ(back["results"]["headline"]["die_util_pct"].dump(), "41.2");
}

TEST(ReportJson, NegativeHeadlineFiguresKeepTheirSign) {
  analysis::Analysis a = hopper_analysis();
  // A video encode: GPU-Util 8.4, DIE-Util 93.8 -> gap 8.4 - 93.8 = -85.4, stranded 6.2,
  // idle 91.6, active 6.2 - 91.6 = -85.4.
  a.run.headline = analysis::Headline{
      84, 938, -854, 62, 916, -854, false, analysis::GapMissing::none, analysis::SplitMissing::none, ""};
  json r = report::build_report(a);
  keep_report("negative_gap", r);
  EXPECT_DOUBLE_EQ(r["results"]["headline"]["gap_points"].get<double>(), -85.4);
  EXPECT_DOUBLE_EQ(r["results"]["headline"]["active_points"].get<double>(), -85.4);
}

TEST(ReportJson, NaNIsNullWithAReasonNeverZero) {
  analysis::Analysis a = hopper_analysis();
  a.run.gpu_util_pct = analysis::kNaN;
  a.run.gpu_util_coverage_pct = analysis::kNaN;
  a.run.gpu_util_missing = analysis::GpuUtilMissing::not_covered;
  a.run.gpu_util_from = analysis::GpuUtilFrom::none;
  a.run.headline = analysis::Headline{};
  a.run.headline.die_util_tenths = 412;
  a.run.headline.stranded_tenths = 588;
  a.run.headline.gap_missing = analysis::GapMissing::no_gpu_util;
  a.run.headline.split_missing = analysis::SplitMissing::no_gap;
  a.run.rates_per_s["dram_bytes"] = analysis::kNaN;
  json r = report::build_report(a);
  keep_report("no_gpu_util", r);
  const json& res = r["results"];
  EXPECT_TRUE(res["gpu_util_pct"].is_null());
  EXPECT_EQ(res["gpu_util_pct_reason"], "no GPU-Util sample covers the chip-sampled time");
  EXPECT_TRUE(res["gap_points"].is_null());
  const std::string gap_reason = "GPU-Util is not available: no GPU-Util sample covers the chip-sampled time";
  EXPECT_EQ(res["gap_points_reason"], gap_reason);
  EXPECT_EQ(res["gpu_util_source"], "none");
  EXPECT_TRUE(res["headline"]["gpu_util_pct"].is_null());
  EXPECT_TRUE(res["headline"]["idle_points"].is_null());
  EXPECT_EQ(res["headline"]["idle_points_reason"], gap_reason);
  EXPECT_DOUBLE_EQ(res["headline"]["stranded_points"].get<double>(), 58.8);
  EXPECT_TRUE(res["rates_per_s"]["dram_bytes"].is_null());
  EXPECT_FALSE(res["rates_per_s"]["dram_bytes_reason"].get<std::string>().empty());
  // The L2 unit never had a value: its mean is null with why, its availability a real 0.
  const json& l2 = res["units"][3];
  ASSERT_EQ(l2["key"], "l2");
  EXPECT_TRUE(l2["mean_pct"].is_null());
  EXPECT_EQ(l2["mean_pct_reason"], "never available in this span");
  EXPECT_EQ(l2["availability_pct"], 0);
  // Valid JSON without NaN or Infinity anywhere in the text.
  std::string text = report::dump_report(r);
  EXPECT_EQ(text.find("NaN"), std::string::npos);
  EXPECT_EQ(text.find("nan"), std::string::npos);
  EXPECT_EQ(text.find("Infinity"), std::string::npos);
  EXPECT_NO_THROW(json::parse(text));
}

TEST(ReportJson, InfiniteFiguresAreNullToo) {
  analysis::Analysis a = hopper_analysis();
  a.run.die_util_pct = std::numeric_limits<double>::infinity();
  a.run.die_util_missing = analysis::DieUtilMissing::no_unit_value;
  json r = report::build_report(a);
  EXPECT_TRUE(r["results"]["die_util_pct"].is_null());
  EXPECT_EQ(r["results"]["die_util_pct_reason"], "no unit had a value in any usable chip sample");
}

TEST(ReportJson, EveryNullHasAReasonBesideIt) {
  // Everything unknown at once: an empty analysis.
  analysis::Analysis a;
  a.method = core::kMethodVersion;
  a.window.finding = analysis::WindowFinding::no_markers;
  a.meta.interval_ms = analysis::kNaN;
  json r = report::build_report(a);
  keep_report("empty_analysis", r);
  std::function<void(const json&, const std::string&)> walk = [&](const json& node,
                                                                  const std::string& where) {
    if (node.is_object()) {
      for (auto it = node.begin(); it != node.end(); ++it) {
        if (it->is_null()) {
          bool has = (node.contains(it.key() + "_reason") && node[it.key() + "_reason"].is_string()) ||
                     (node.contains("reason") && node["reason"].is_string());
          EXPECT_TRUE(has) << where << "." << it.key() << " is null without a reason";
        }
        walk(*it, where + "." + it.key());
      }
    } else if (node.is_array()) {
      for (const json& e : node) walk(e, where + "[]");
    }
  };
  walk(r, "$");
  EXPECT_TRUE(r["collection"]["interval_ms"].is_null());
  EXPECT_TRUE(r["gpu"]["sm_count"].is_null());
}

TEST(ReportJson, CoverageAndItsGate) {
  analysis::Analysis a = hopper_analysis();
  json r = report::build_report(a);
  // 3.40 / 3.51 = 0.968660968...
  EXPECT_NEAR(r["results"]["chip_coverage_pct"].get<double>(), 96.8660968660969, 1e-9);
  EXPECT_EQ(r["results"]["chip_coverage_gate"],
            json({{"min_pct", 90.0}, {"of", "span"}, {"passed", true}, {"partial", false}}));
  EXPECT_EQ(r["results"]["gpu_util_coverage_gate"], json({{"min_pct", 90.0}, {"passed", true}}));

  a.run.chip_covered_s = 2.0;
  a.run.chip_coverage_pct = 100.0 * 2.0 / 3.51;  // 56.98...%
  a.run.partial = true;
  a.run.partial_cause = analysis::PartialCause::low_coverage;
  a.run.gpu_util_whole_span_pct = 45.0;
  r = report::build_report(a);
  keep_report("partial", r);
  const json& gate = r["results"]["chip_coverage_gate"];
  EXPECT_EQ(gate["passed"], false);
  EXPECT_EQ(gate["partial"], true);
  EXPECT_EQ(gate["wording"], "partial (counters covered 57% of the run)");
  EXPECT_EQ(r["results"]["gpu_util_whole_span_pct"], 45.0);
}

TEST(ReportJson, DutyCycledCollection) {
  analysis::Analysis a = hopper_analysis();
  a.meta.duty_on_ms = 2000;
  a.meta.duty_period_ms = 10000;
  a.run.chip_scheduled_s = 0.7;
  json r = report::build_report(a);
  keep_report("duty", r);
  // 2000 / 10000 = 20% of each period scheduled.
  EXPECT_EQ(r["collection"]["duty"],
            json({{"enabled", true}, {"on_ms", 2000.0}, {"period_ms", 10000.0}, {"scheduled_pct", 20.0}}));
  EXPECT_EQ(r["results"]["chip_coverage_gate"]["of"], "scheduled counter time");
  EXPECT_EQ(r["results"]["chip_scheduled_s"], 0.7);
  EXPECT_EQ(report::build_report(hopper_analysis())["collection"]["duty"], json({{"enabled", false}}));
}

TEST(ReportJson, CollectionUnitsRecipesFlagsAndNotes) {
  analysis::Analysis a = hopper_analysis();
  a.meta.units[0].recipe = recording::UnitRecipe{recording::UnitRecipe::Combine::mean,
                                                 {"sm__pipe_fma_heavy", "sm__pipe_fma_lite"}};
  json r = report::build_report(a);
  const json& c = r["collection"];
  EXPECT_EQ(c["interval_ms"], 10.0);
  EXPECT_EQ(c["drain_ms"], 1000.0);
  EXPECT_EQ(c["gpu_util_resolution_pct"], 1.0);
  EXPECT_EQ(c["gpu_util_source"], "samples");
  const json& res = r["results"];
  EXPECT_EQ(res["unit_recipes"]["fp32"],
            json({{"combine", "mean"}, {"counters", {"sm__pipe_fma_heavy", "sm__pipe_fma_lite"}}}));
  EXPECT_EQ(res["unit_recipes"]["dram"]["combine"], "counter");
  EXPECT_EQ(res["unit_flags"]["l2"], json({"stand_in_counter"}));
  EXPECT_EQ(res["unit_flags"]["fp32"], json::array());
  EXPECT_EQ(res["units"][0]["note"], "the FMA pipe's instruction counter");
  EXPECT_EQ(res["units"][0]["mean_pct"], 29.87);
  EXPECT_EQ(res["limiting_unit"], "fp32");
  EXPECT_EQ(res["limiting_unit_label"], "FP32");
  EXPECT_EQ(res["limiting_unit_rule"], json({{"min_availability_pct", 90.0}, {"min_busy_pct", 1.0}}));
  EXPECT_EQ(res["rates_per_s"]["dram_bytes"], 1.1e12);
  EXPECT_EQ(res["samples"],
            json({{"read", 293}, {"used", 292}, {"dropped_first", 1}, {"dropped_broken", 0}}));
  EXPECT_EQ(res["diagnostics"][0]["key"], "sm_active");
}

TEST(ReportJson, NoLimitingUnitSaysWhy) {
  analysis::Analysis a = hopper_analysis();
  a.run.limiting_unit.reset();
  a.run.limiting_unit_missing = analysis::LimitingUnitMissing::no_busy_unit;
  json r = report::build_report(a);
  keep_report("no_limiting_unit", r);
  EXPECT_TRUE(r["results"]["limiting_unit"].is_null());
  EXPECT_EQ(r["results"]["limiting_unit_reason"], "no unit reached 1% of its peak");
  EXPECT_FALSE(r["results"].contains("limiting_unit_label"));
}

TEST(ReportJson, WindowAbsentOrPresent) {
  json r = report::build_report(hopper_analysis());
  EXPECT_EQ(r["window"], json({{"found", false}, {"how", "no markers"}}));
  EXPECT_EQ(r["hardware"]["covers"], "run");

  r = report::build_report(hopper_analysis_with_window());
  keep_report("window", r);
  const json& w = r["window"];
  EXPECT_EQ(w["found"], true);
  EXPECT_EQ(w["how"], "markers");
  EXPECT_EQ(w["start_ns"], kRunStart + 900'000'000);
  EXPECT_EQ(w["end_ns"], kRunStart + 2'100'000'000);
  EXPECT_DOUBLE_EQ(w["start_s"].get<double>(), 0.9);
  EXPECT_DOUBLE_EQ(w["end_s"].get<double>(), 2.1);
  EXPECT_DOUBLE_EQ(w["results"]["headline"]["die_util_pct"].get<double>(), 85.0);
  EXPECT_DOUBLE_EQ(w["results"]["headline"]["gap_points"].get<double>(), 14.0);
  // The run's results stay the run's.
  EXPECT_DOUBLE_EQ(r["results"]["headline"]["die_util_pct"].get<double>(), 41.2);
  // Clocks and throttle reasons cover the window when there is one.
  EXPECT_EQ(r["hardware"]["covers"], "window");
  EXPECT_EQ(r["hardware"]["sm_clock_mhz"],
            json({{"min", 1980.0}, {"max", 1980.0}, {"mean", 1980.0}, {"readings", 12}}));
  EXPECT_EQ(r["hardware"]["throttle_reasons"], json::array());
}

TEST(ReportJson, HardwareClocksThrottleAndPower) {
  analysis::Analysis a = hopper_analysis();
  json r = report::build_report(a);
  const json& hw = r["hardware"];
  EXPECT_EQ(hw["sm_clock_mhz"], json({{"min", 1755.0}, {"max", 1980.0}, {"mean", 1961.4}, {"readings", 35}}));
  EXPECT_EQ(hw["throttle_reasons"], json({"gpu_idle"}));
  EXPECT_EQ(hw["power_limit_w"], json({{"min", 700.0}, {"max", 700.0}}));

  a.run.throttle_reasons.reset();
  a.run.mem_clock = analysis::ClockStats{};
  a.run.power_limit_min_w = analysis::kNaN;
  a.run.power_limit_max_w = analysis::kNaN;
  r = report::build_report(a);
  keep_report("hardware_unknown", r);
  EXPECT_TRUE(r["hardware"]["throttle_reasons"].is_null());
  EXPECT_EQ(r["hardware"]["throttle_reasons_reason"], "NVML could not say why the clocks were held");
  EXPECT_TRUE(r["hardware"]["mem_clock_mhz"]["mean"].is_null());
  EXPECT_EQ(r["hardware"]["mem_clock_mhz"]["readings"], 0);
  EXPECT_TRUE(r["hardware"]["power_limit_w"]["max"].is_null());
}

TEST(ReportJson, CalibrationCostWorkloadAndExpected) {
  analysis::Analysis a = hopper_analysis();
  json r = report::build_report(
      a, {"x.dsrec", recording::RunEnd{kRunStart + 3'510'000'000, 0, recording::RunEnding::exit()}});
  EXPECT_EQ(r["calibration"],
            json({{"status", "unvalidated"},
                  {"reason", "no calibration file for this GPU model, driver and method"}}));
  EXPECT_TRUE(r["cost"]["estimate"].is_null());
  EXPECT_EQ(r["cost"]["reason"].get<std::string>().rfind("run reports carry no cost estimate: ", 0), 0u);
  EXPECT_EQ(r["workload"]["name"], "probe");
  EXPECT_EQ(r["workload"]["command"], json({"/usr/bin/probe", "--phases"}));
  EXPECT_EQ(r["workload"]["exit_code"], 0);
  EXPECT_EQ(r["workload"]["ended"], "exited");
  EXPECT_EQ(r["expected"]["workload"], "probe");
  EXPECT_EQ(r["expected"]["architecture"], "GH100");
  EXPECT_TRUE(r["expected"]["die_util_pct"].is_null());
  EXPECT_TRUE(r["expected"]["gpu_util_pct"].is_null());
  EXPECT_TRUE(r["expected"]["gap_points"].is_null());

  a.meta.command.clear();
  r = report::build_report(a);
  keep_report("no_command", r);
  EXPECT_TRUE(r["workload"]["name"].is_null());
  EXPECT_TRUE(r["workload"]["exit_code"].is_null());
  EXPECT_FALSE(r["workload"]["exit_code_reason"].get<std::string>().empty());
}

TEST(ReportJson, GpuIdentityAndHygiene) {
  analysis::Analysis a = hopper_analysis();
  a.hygiene.compute_holders_max.reset();
  a.hygiene.graphics_holders_max = 2;
  a.hygiene.exited_holders = 1;
  a.hygiene.clock_jumps = {recording::ClockJump{kRunStart + 5, 250'000'000}};

  json r = report::build_report(a);
  keep_report("hygiene", r);
  EXPECT_EQ(r["gpu"]["model"], "NVIDIA H200");
  EXPECT_EQ(r["gpu"]["chip"], "GH100");
  EXPECT_EQ(r["gpu"]["compute_capability"], 90);
  EXPECT_EQ(r["gpu"]["sm_count"], 132);
  EXPECT_EQ(r["gpu"]["l2_bytes"], 52'428'800);
  const json& h = r["hygiene"];
  EXPECT_TRUE(h["compute_holders_max"].is_null());
  EXPECT_EQ(h["compute_holders_max_reason"], "NVIDIA's process list could not be read");
  EXPECT_EQ(h["graphics_holders_max"], 2);
  EXPECT_EQ(h["exited_holders"], 1);
  EXPECT_EQ(h["clock_jumps"], json::array({{{"ts_ns", kRunStart + 5}, {"step_ns", 250'000'000}}}));
  // 5 ns after the start: 0.000 s into the run.
  EXPECT_EQ(h["notes"],
            json::array({"the wall clock stepped by +0.250 s at 0.000 s into the run; figures over spans "
                         "that cross it may be wrong"}));
}

TEST(ReportJson, NotesFromTheRecordingAndTheReader) {
  analysis::Analysis a = hopper_analysis();
  a.notes = {recording::Note{kRunStart + 1, "sampler", "the counter decoder stopped; samples end here"}};
  a.findings = {
      analysis::AnalysisFinding{analysis::AnalysisFinding::Kind::samples_outside_run, kRunStart, 0, 2}};
  a.truncated_input = true;
  a.meta.method = 2;  // recorded by an older collector
  json r = report::build_report(a);
  keep_report("notes", r);
  ASSERT_EQ(r["notes"].size(), 4u);
  EXPECT_EQ(r["notes"][0], json({{"ts_ns", kRunStart + 1},
                                 {"topic", "sampler"},
                                 {"text", "the counter decoder stopped; samples end here"}}));
  // The analysis's findings follow the recording's notes.
  EXPECT_EQ(r["notes"][1], json({{"ts_ns", kRunStart},
                                 {"topic", "analysis"},
                                 {"text", "2 chip sample(s) lie wholly outside the run and were left out"}}));
  EXPECT_EQ(r["notes"][2]["topic"], "recording");
  EXPECT_EQ(r["notes"][3]["text"], "recorded by a method 2 collector, analysed with method 4");
  EXPECT_EQ(r["source"]["truncated"], true);
}

class LoadReport : public ::testing::Test {
 protected:
  // One folder per test: ctest runs each test in its own process, two at a time.
  std::filesystem::path dir = std::filesystem::path(DIESCOPE_BINARY_DIR) / "report-load-test" /
                              ::testing::UnitTest::GetInstance()->current_test_info()->name();
  void SetUp() override {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  std::filesystem::path write(const std::string& name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return dir / name;
  }
  // The InputError's message, or "" when none was thrown.
  static std::string error_of(const std::filesystem::path& p) {
    try {
      report::load_report(p);
    } catch (const core::InputError& e) {
      EXPECT_EQ(e.exit_code(), core::kExitInput);
      EXPECT_FALSE(e.fix().empty());
      return e.cause();
    }
    return "";
  }
};

TEST_F(LoadReport, RoundTripsADumpedReport) {
  json r = report::build_report(hopper_analysis_with_window());
  auto p = write("report.json", report::dump_report(r));
  EXPECT_EQ(report::load_report(p), r);
}

TEST_F(LoadReport, NamesTheFileAndLineOfEachProblem) {
  EXPECT_EQ(error_of(dir / "missing.json"), (dir / "missing.json").string() + ": no such file");
  EXPECT_EQ(error_of(dir), dir.string() + ": is a folder, not a report");
  // The syntax error (a missing comma) is on line 3.
  auto bad = write("bad.json", "{\n  \"schema\": 3\n  \"method\": 3\n}\n");
  EXPECT_EQ(error_of(bad), bad.string() + ":3: not valid JSON");
  auto empty = write("empty.json", "");
  EXPECT_EQ(error_of(empty), empty.string() + ":1: not valid JSON");
  auto other = write("other.json", "{\"name\": \"not a report\"}");
  EXPECT_NE(error_of(other).find("not a diescope report"), std::string::npos);
  json r = report::build_report(hopper_analysis());
  r["schema"] = 2;
  auto old = write("old.json", r.dump());
  EXPECT_EQ(error_of(old), old.string() + ": report schema 2, this diescope reads schema 3");
}

TEST(FormatTenths, OneDecimalWithSign) {
  EXPECT_EQ(report::format_tenths(849), "84.9");
  EXPECT_EQ(report::format_tenths(0), "0.0");
  EXPECT_EQ(report::format_tenths(5), "0.5");
  EXPECT_EQ(report::format_tenths(-5), "-0.5");
  EXPECT_EQ(report::format_tenths(-854), "-85.4");
  EXPECT_EQ(report::format_tenths(1000), "100.0");
}

}  // namespace
}  // namespace diescope
