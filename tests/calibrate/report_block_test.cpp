// The report's `calibration` block filled from a lookup, end to end from a recording's metadata. The
// reports are kept under test-reports/ so the report schema test validates the block's fields.
#include <gtest/gtest.h>

#include "diescope/calibrate/lookup.hpp"
#include "diescope/calibrate/sha256.hpp"
#include "diescope/report/report.hpp"
#include "helpers.hpp"
#include "report/fixtures.hpp"

namespace diescope::calibrate {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// A full calibration of the report fixture's GPU (NVIDIA H200, driver 580.159) that checked FP32 and
// DRAM, read the way the fixture reads them.
CalibrationFile fixture_calibration(const recording::RecordingMeta& meta) {
  CalibrationFile f = test::h200_file();
  f.method = meta.method;  // the fixture's analysis is of the method it was recorded with
  f.gpu.driver = meta.gpu.driver;
  f.units.clear();
  for (const recording::ColumnDef& c : meta.units) {
    if (c.key != "fp32" && c.key != "dram") continue;
    CalibratedUnit u;
    u.key = c.key;
    u.label = c.label;
    u.recipe = c.recipe;
    u.verdict = Verdict::pass;
    u.ceiling_pct = c.key == "fp32" ? 98.8 : 83.3;
    f.units.push_back(u);
  }
  return f;
}

TEST(ReportCalibration, FoundFileFillsTheBlock) {
  const analysis::Analysis a = diescope::test::hopper_analysis();
  const fs::path dir = test::scratch("report-block");
  CalibrationFile f = fixture_calibration(a.meta);
  // The device model as the H200's: STREAM's ceiling, a contraction sweep that spilled, a re-read
  // sweep with a cache, an issue fit and no launch-fill fit.
  f.device_model =
      json{{"stream", {{"bandwidth_bytes_per_s", 4.45e12}}},
           {"cache", {{"outcome", "all_spilled"}, {"smallest_ws_bytes", 1 << 30}}},
           {"cache_reread",
            {{"outcome", "transition"}, {"capacity_bytes", 62774594}, {"cache_bytes_per_s", 8.18e12}}},
           {"issue", {{"outcome", "fit"}, {"rate_ops_per_s", 1.37e13}}},
           {"fill", {{"outcome", "unfittable"}, {"reason", "too few points"}}}};
  const fs::path path = test::write_text(dir / "h200.json", dump_calibration(f));

  report::ReportContext ctx;
  ctx.recording = "<memory>";
  ctx.calibration = calibration_block_json(find_calibration(a.meta, a.method, path));
  const json r = build_report(a, ctx);
  const json& cal = r["calibration"];
  EXPECT_EQ(cal["status"], "partial");  // Tensor and L2 have no check
  EXPECT_EQ(cal["reason"],
            "full calibration of 2026-11-30T12:34:56Z: passed FP32, DRAM; no check Tensor, L2");
  EXPECT_EQ(cal["units"],
            (json{{"fp32", "pass"}, {"tensor", "no_check"}, {"dram", "pass"}, {"l2", "no_check"}}));
  EXPECT_EQ(cal["ceiling_pct"]["fp32"], 98.8);
  EXPECT_EQ(cal["ceiling_pct"]["tensor"], nullptr);
  EXPECT_EQ(cal["file"]["name"], "h200.json");
  EXPECT_EQ(cal["file"]["sha256"], sha256_hex(test::read_text(path)));
  EXPECT_EQ(cal["file"]["quick"], false);
  // The device model's ceilings, as roofline takes them (docs/calibration.md#device-model): the cache
  // from the re-read sweep because the contraction sweep has none; no fill, with the reason.
  const json& model = cal["device_model"];
  EXPECT_EQ(model["dram_bytes_per_s"], 4.45e12);
  EXPECT_EQ(model["cache_bytes_per_s"], 8.18e12);
  EXPECT_EQ(model["cache_source"], "cache_reread");
  EXPECT_EQ(model["cache_capacity_bytes"], 62774594);
  EXPECT_EQ(model["issue_ops_per_s"], 1.37e13);
  EXPECT_EQ(model["fill_threads_per_sm"], nullptr);
  EXPECT_EQ(model["fill_threads_per_sm_reason"], "the launch-fill sweep gave no fit");
  diescope::test::keep_report("calibrate-partial", r);
}

TEST(ReportCalibration, NoFittingFileKeepsTheRunGoing) {
  const analysis::Analysis a = diescope::test::hopper_analysis();
  const fs::path dir = test::scratch("report-block-none");
  CalibrationFile other = fixture_calibration(a.meta);
  other.gpu.driver = "610.57.04";
  test::write_text(dir / "other-driver.json", dump_calibration(other));
  test::write_text(dir / "truncated.json", "{\"kind\": \"diescope-calibration\", \"sch");

  report::ReportContext ctx;
  ctx.calibration = calibration_block_json(find_calibration(a.meta, a.method, dir));
  const json r = build_report(a, ctx);
  const json& cal = r["calibration"];
  EXPECT_EQ(cal["status"], "unvalidated");
  EXPECT_EQ(cal["reason"], "no calibration file for this GPU model, driver and method in " + dir.string());
  EXPECT_EQ(cal["file"], nullptr);
  ASSERT_EQ(cal["passed_over"].size(), 2u);
  EXPECT_EQ(cal["passed_over"][0]["reason"], "not taken: driver 610.57.04 vs 580.159");
  diescope::test::keep_report("calibrate-none", r);
}

TEST(ReportCalibration, WithoutALookupTheReportSaysUnvalidated) {
  const json r = report::build_report(diescope::test::hopper_analysis());
  EXPECT_EQ(r["calibration"],
            (json{{"status", "unvalidated"},
                  {"reason", "no calibration file for this GPU model, driver and method"}}));
}

}  // namespace
}  // namespace diescope::calibrate
