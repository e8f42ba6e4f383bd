// How a report finds its calibration (docs/calibration.md#how-a-report-finds-its-calibration): which
// files fit, which one wins, the status, and every bad file a new user could meet, named with its
// reason while the run goes on.
#include <gtest/gtest.h>

#include "diescope/calibrate/lookup.hpp"
#include "diescope/calibrate/sha256.hpp"
#include "diescope/core/error.hpp"
#include "diescope/core/version.hpp"
#include "helpers.hpp"

namespace diescope::calibrate {
namespace {

using namespace test;
using nlohmann::json;

fs::path put(const fs::path& dir, const std::string& name, const CalibrationFile& f) {
  return write_text(dir / name, dump_calibration(f));
}

Verdict verdict_of(const CalibrationBlock& b, const std::string& key) {
  for (const UnitCalibration& u : b.units)
    if (u.key == key) return u.verdict;
  throw std::runtime_error("no unit " + key);
}

TEST(Lookup, FullCalibrationWithSomeUnitsCheckedIsPartial) {
  const fs::path dir = scratch("partial");
  const fs::path path = put(dir, "h200.json", h200_file());
  const CalibrationBlock b = find_calibration(h200_query(), dir, std::nullopt);
  EXPECT_EQ(b.status, "partial");
  EXPECT_EQ(b.reason,
            "full calibration of 2026-11-30T12:34:56Z: passed FP32, DRAM; no check Tensor, FP64, Load/store, "
            "L1 fill, L2");
  ASSERT_EQ(b.units.size(), 7u);
  EXPECT_EQ(verdict_of(b, "fp32"), Verdict::pass);
  EXPECT_EQ(verdict_of(b, "tensor"), Verdict::no_check);
  EXPECT_DOUBLE_EQ(b.units[0].ceiling_pct.value(), 98.8);
  EXPECT_FALSE(b.units[1].ceiling_pct.has_value());
  EXPECT_EQ(b.units[1].ceiling_reason, "the calibration has no check for this unit");
  ASSERT_TRUE(b.file.has_value());
  EXPECT_EQ(b.file->name, "h200.json");
  EXPECT_EQ(b.file->sha256, sha256_hex(read_text(path)));
  EXPECT_EQ(b.file->schema, 3);
  EXPECT_EQ(b.file->method, 4);
  EXPECT_EQ(b.file->commit, "0123456789ab");
  EXPECT_EQ(b.file->date, "2026-11-30T12:34:56Z");
  EXPECT_FALSE(b.file->quick);
  EXPECT_TRUE(b.passed_over.empty());

  const json j = calibration_block_json(b);
  EXPECT_EQ(j["units"]["dram"], "pass");
  EXPECT_EQ(j["units"]["l2"], "no_check");
  EXPECT_EQ(j["ceiling_pct"]["dram"], 82.0);
  EXPECT_EQ(j["ceiling_pct"]["l2"], nullptr);
  EXPECT_EQ(j["ceiling_pct"]["l2_reason"], "the calibration has no check for this unit");
  EXPECT_EQ(j["file"]["sha256"], b.file->sha256);
}

TEST(Lookup, EveryUnitPassedIsValidated) {
  const fs::path dir = scratch("validated");
  put(dir, "h200.json", h200_file());
  CalibrationQuery q = h200_query();
  q.units = {column_of("fp32"), column_of("dram")};
  const CalibrationBlock b = find_calibration(q, dir, std::nullopt);
  EXPECT_EQ(b.status, "validated");
  EXPECT_EQ(b.reason, "full calibration of 2026-11-30T12:34:56Z: passed FP32, DRAM");
}

TEST(Lookup, NoUnitPassedOrAQuickCheckIsUnvalidated) {
  const fs::path dir = scratch("unvalidated");
  CalibrationFile failed = h200_file();
  failed.units = {checked("fp32", Verdict::fail, 85.0), checked("dram", Verdict::inconclusive, std::nullopt)};
  put(dir, "failed.json", failed);
  CalibrationBlock b = find_calibration(h200_query(), dir, std::nullopt);
  EXPECT_EQ(b.status, "unvalidated");
  EXPECT_EQ(b.reason,
            "full calibration of 2026-11-30T12:34:56Z in which no unit of this report passed: failed FP32; "
            "inconclusive DRAM; no check Tensor, FP64, Load/store, L1 fill, L2");

  const fs::path quick_dir = scratch("quick");
  put(quick_dir, "quick.json", h200_file("2026-11-30T12:34:56Z", true));
  b = find_calibration(h200_query(), quick_dir, std::nullopt);
  EXPECT_EQ(b.status, "unvalidated");
  EXPECT_EQ(
      b.reason.rfind("quick setup check of 2026-11-30T12:34:56Z, not a calibration: passed FP32, DRAM", 0),
      0u)
      << b.reason;
  EXPECT_TRUE(b.file->quick);
  EXPECT_EQ(verdict_of(b, "fp32"), Verdict::pass);  // the verdicts are still shown
}

TEST(Lookup, FullBeforeQuickThenNewestByItsOwnDate) {
  const fs::path dir = scratch("choice");
  put(dir, "a-quick-newest.json", h200_file("2026-12-05T00:00:00Z", true));
  put(dir, "b-full-old.json", h200_file("2026-11-01T00:00:00Z"));
  // Named to sort first and look newest, but dated in between: the date inside decides.
  put(dir, "0-full-newest-name.json", h200_file("2026-11-15T00:00:00Z"));
  put(dir, "z-full-newest.json", h200_file("2026-11-30T12:34:56Z"));
  const CalibrationBlock b = find_calibration(h200_query(), dir, std::nullopt);
  ASSERT_TRUE(b.file.has_value());
  EXPECT_EQ(b.file->name, "z-full-newest.json");
  EXPECT_EQ(b.status, "partial");
  // Only quick checks: the newest quick one.
  const fs::path quick = scratch("choice-quick");
  put(quick, "old.json", h200_file("2026-11-01T00:00:00Z", true));
  put(quick, "new.json", h200_file("2026-11-02T00:00:00Z", true));
  EXPECT_EQ(find_calibration(h200_query(), quick, std::nullopt).file->name, "new.json");
}

TEST(Lookup, DefaultFolderIsUsedWithoutAFlag) {
  const fs::path dir = scratch("default");
  put(dir, "h200.json", h200_file());
  EXPECT_EQ(find_calibration(h200_query(), std::nullopt, dir).status, "partial");
  const fs::path missing = dir / "nothing-here";
  const CalibrationBlock none = find_calibration(h200_query(), std::nullopt, missing);
  EXPECT_EQ(none.status, "unvalidated");
  EXPECT_EQ(none.reason, "no calibration file for this GPU model, driver and method in " + missing.string());
  EXPECT_FALSE(none.file.has_value());
  EXPECT_EQ(none.units.size(), 7u);
  const json j = calibration_block_json(none);
  EXPECT_EQ(j["file"], nullptr);
  EXPECT_EQ(j["file_reason"], none.reason);
  EXPECT_EQ(j["units"]["fp32"], "no_check");
  const CalibrationBlock no_home = find_calibration(h200_query(), std::nullopt, std::nullopt);
  EXPECT_NE(no_home.reason.find("neither XDG_DATA_HOME nor HOME is set"), std::string::npos);
}

TEST(Lookup, MissingPathIsAnError) {
  const fs::path missing = scratch("missing") / "calibration.json";
  try {
    find_calibration(h200_query(), missing, std::nullopt);
    FAIL() << "a missing --calibration path was accepted";
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.cause(), missing.string() + ": no such file or folder");
    EXPECT_EQ(e.exit_code(), core::kExitInput);
    EXPECT_NE(e.fix().find("leave out --calibration"), std::string::npos);
  }
}

// The reason a named file gives.
// A named file that cannot be read as a calibration is refused like a missing one: its cause.
std::string named_reason(const fs::path& path, const CalibrationQuery& q = h200_query()) {
  CalibrationBlock b;
  try {
    b = find_calibration(q, path, std::nullopt);
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.exit_code(), core::kExitInput);
    return e.cause();
  }
  EXPECT_EQ(b.status, "unvalidated");
  EXPECT_FALSE(b.file.has_value());
  return b.reason;
}

TEST(Lookup, ANamedFileThatDoesNotFitSaysTheFirstWayFileValueFirst) {
  const fs::path dir = scratch("misfit");
  CalibrationFile other_driver = h200_file();
  other_driver.gpu.driver = "610.57.04";
  const fs::path d = put(dir, "driver.json", other_driver);
  EXPECT_EQ(named_reason(d, h200_query("611.01")),
            "calibration file " + d.string() + " not taken: driver 610.57.04 vs 611.01");

  CalibrationFile other_gpu = h200_file();
  other_gpu.gpu.model = "NVIDIA H100 80GB HBM3";
  other_gpu.gpu.driver = "1.0";  // the model is checked first
  const fs::path g = put(dir, "gpu.json", other_gpu);
  EXPECT_EQ(named_reason(g),
            "calibration file " + g.string() + " not taken: GPU model NVIDIA H100 80GB HBM3 vs NVIDIA H200");

  CalibrationFile old_method = h200_file();
  old_method.method = 2;
  const fs::path m = put(dir, "method.json", old_method);
  EXPECT_EQ(named_reason(m),
            "calibration file " + m.string() +
                " not taken: method 2 vs 4 (calibration files of methods 3 to 4 fit; make one "
                "with `diescope calibrate`)");

  CalibrationFile other_recipe = h200_file();
  other_recipe.units[1].recipe =
      recording::UnitRecipe{recording::UnitRecipe::Combine::counter, {"dram__throughput.avg.pct"}};
  const fs::path r = put(dir, "recipe.json", other_recipe);
  EXPECT_EQ(named_reason(r), "calibration file " + r.string() +
                                 " not taken: unit dram read as counter dram__throughput.avg.pct vs counter "
                                 "dram__bytes.sum.pct_of_peak_sustained_elapsed");

  CalibrationFile extra_unit = h200_file();
  extra_unit.units.push_back(checked("fp32", Verdict::pass, 90.0));
  extra_unit.units.back().key = "nvenc";
  const fs::path u = put(dir, "unit.json", extra_unit);
  EXPECT_EQ(named_reason(u),
            "calibration file " + u.string() + " not taken: unit nvenc is not a unit of this report");
}

// docs/calibration.md#calibrations-across-methods: a method-3 file fits a method-4 report with a caveat
// in the reason; its verdicts and ceilings are the file's.
TEST(Lookup, AMethod3FileFitsAMethod4ReportWithACaveat) {
  const fs::path dir = scratch("older-method");
  CalibrationFile older = h200_file();
  older.method = 3;
  put(dir, "h200-method3.json", older);
  const CalibrationBlock b = find_calibration(h200_query(), dir, std::nullopt);
  EXPECT_EQ(b.status, "partial");
  EXPECT_EQ(b.reason,
            "full calibration of 2026-11-30T12:34:56Z: passed FP32, DRAM; no check Tensor, FP64, Load/store, "
            "L1 fill, L2; made with method 3, still valid under method 4 (method 4: a steady window over GPM "
            "samples starts 150 ms late; calibration reads no GPM)");
  ASSERT_TRUE(b.file.has_value());
  EXPECT_EQ(b.file->method, 3);
  EXPECT_DOUBLE_EQ(b.units[0].ceiling_pct.value(), 98.8);
  EXPECT_EQ(verdict_of(b, "dram"), Verdict::pass);
  EXPECT_TRUE(b.passed_over.empty());

  // Beside a method-4 file of the same date, the newest by date wins as ever; the same date falls to
  // the name, and neither is preferred for its method.
  put(dir, "h200-method4.json", h200_file("2026-12-01T00:00:00Z"));
  const CalibrationBlock newer = find_calibration(h200_query(), dir, std::nullopt);
  ASSERT_TRUE(newer.file.has_value());
  EXPECT_EQ(newer.file->name, "h200-method4.json");
  EXPECT_EQ(newer.reason,
            "full calibration of 2026-12-01T00:00:00Z: passed FP32, DRAM; no check Tensor, FP64, Load/store, "
            "L1 fill, L2");
}

TEST(Lookup, MethodsOutsideTheFittingRangeAreNotTakenAndNameTheFix) {
  EXPECT_EQ(kOldestFittingCalibrationMethod, 3);
  CalibrationFile f = h200_file();
  f.method = 2;  // before the oldest fitting method
  EXPECT_EQ(misfit(f, h200_query()).value_or(""),
            "method 2 vs 4 (calibration files of methods 3 to 4 fit; make one with `diescope calibrate`)");
  f.method = 5;  // a newer diescope's calibration
  EXPECT_EQ(misfit(f, h200_query()).value_or(""),
            "method 5 vs 4 (calibration files of methods 3 to 4 fit; make one with `diescope calibrate`)");
  f.method = 3;
  EXPECT_FALSE(misfit(f, h200_query()).has_value());
  CalibrationQuery method3 = h200_query();
  method3.method = 3;  // a method-4 file does not fit a method-3 report
  EXPECT_EQ(misfit(h200_file(), method3).value_or(""),
            "method 4 vs 3 (calibration files of methods 3 to 3 fit; make one with `diescope calibrate`)");
}

// Every method after the oldest fitting one says what it changed, so no caveat is left empty.
TEST(Lookup, EveryMethodSinceTheOldestFittingOneIsWorded) {
  EXPECT_EQ(older_method_caveat(4, 4), "");
  const std::string caveat = older_method_caveat(kOldestFittingCalibrationMethod, core::kMethodVersion);
  // The changes are listed in brackets, each as "method N: what", after "; " from the second on.
  const std::string changes = caveat.substr(caveat.find('(') + 1);
  for (int m = kOldestFittingCalibrationMethod + 1; m <= core::kMethodVersion; ++m) {
    const std::string entry = "method " + std::to_string(m) + ": ";
    EXPECT_TRUE(changes.rfind(entry, 0) == 0 || changes.find("; " + entry) != std::string::npos)
        << "method " << m << " has no entry in older_method_caveat: " << caveat;
  }
}

// A GPM recording's units are read with GPM's recipes, which no calibration lists: the first unit
// read another way is the misfit, so a PM calibration never validates a GPM report.
TEST(Lookup, APmCalibrationDoesNotFitAGpmRecording) {
  CalibrationQuery gpm = h200_query();
  for (recording::ColumnDef& c : gpm.units) {
    if (c.key == "fp32") c.recipe = {recording::UnitRecipe::Combine::counter, {"NVML_GPM_METRIC_FP32_UTIL"}};
    if (c.key == "dram")
      c.recipe = {recording::UnitRecipe::Combine::counter, {"NVML_GPM_METRIC_DRAM_BW_UTIL"}};
  }
  EXPECT_EQ(misfit(h200_file(), gpm).value_or(""), "unit fp32 read as counter " +
                                                       column_of("fp32").recipe.counters[0] +
                                                       " vs counter NVML_GPM_METRIC_FP32_UTIL");
}

// ---- Bad input, as a new user would meet it ----

struct BadFiles {
  fs::path dir;
  fs::path truncated, oversized, other_gpu, other_driver, old_schema, not_json, empty, report, folder;
};

// One folder holding every kind of bad file (and a README that is not .json, which is not read at all).
BadFiles make_bad_files(const std::string& name) {
  BadFiles b;
  b.dir = scratch(name);
  const std::string good = dump_calibration(h200_file());
  b.truncated = write_text(b.dir / "truncated.json", good.substr(0, good.size() / 2));
  // Over 16 MB: a sparse file of 16 MiB + 1 byte (its size is checked before it is read).
  b.oversized = write_text(b.dir / "oversized.json", "{");
  fs::resize_file(b.oversized, kMaxCalibrationFileBytes + 1);
  CalibrationFile gpu = h200_file();
  gpu.gpu.model = "NVIDIA GeForce RTX 5070 Laptop GPU";
  b.other_gpu = put(b.dir, "other-gpu.json", gpu);
  CalibrationFile driver = h200_file();
  driver.gpu.driver = "610.57.04";
  b.other_driver = put(b.dir, "other-driver.json", driver);
  json old = calibration_to_json(h200_file());
  old["schema"] = 2;
  b.old_schema = write_text(b.dir / "old-schema.json", old.dump(2));
  b.not_json = write_text(b.dir / "notes.json", "FP32 passed, DRAM passed (typed by hand)\n");
  b.empty = write_text(b.dir / "empty.json", "");
  b.report = write_text(b.dir / "report.json", R"({"schema": 3, "results": {}})");
  b.folder = b.dir / "folder.json";
  fs::create_directories(b.folder);
  write_text(b.dir / "README.txt", "not read");
  return b;
}

TEST(BadInput, EachBadFileNamedExplicitlySaysWhich) {
  const BadFiles b = make_bad_files("bad-named");
  const CalibrationQuery q = h200_query();
  auto unreadable = [](const fs::path& p, const std::string& why) {
    return p.string() + ": could not be read as a calibration file: " + why;
  };
  EXPECT_EQ(
      named_reason(b.truncated, q),
      unreadable(b.truncated, "truncated: the JSON ends at byte " +
                                  std::to_string(read_text(b.truncated).size()) + " before it is complete"));
  // Cut between tokens as well as inside a string: both are truncations.
  const std::string good = dump_calibration(h200_file());
  const std::size_t after_comma = good.find(",\n") + 2;
  const fs::path cut = write_text(b.dir / "cut.json", good.substr(0, after_comma));
  EXPECT_EQ(named_reason(cut, q),
            unreadable(cut, "truncated: the JSON ends at byte " + std::to_string(after_comma) +
                                " before it is complete"));
  EXPECT_EQ(
      named_reason(b.oversized, q),
      unreadable(b.oversized, "16777217 bytes, over the 16 MB (16777216 bytes) a calibration file may be"));
  EXPECT_EQ(named_reason(b.other_gpu, q),
            "calibration file " + b.other_gpu.string() +
                " not taken: GPU model NVIDIA GeForce RTX 5070 Laptop GPU vs NVIDIA H200");
  EXPECT_EQ(named_reason(b.other_driver, q),
            "calibration file " + b.other_driver.string() + " not taken: driver 610.57.04 vs 580.159.04");
  EXPECT_EQ(named_reason(b.old_schema, q),
            "calibration file " + b.old_schema.string() + " not taken: schema 2 vs 3 or later");
  EXPECT_EQ(named_reason(b.not_json, q)
                .rfind(unreadable(b.not_json, "not JSON: parse error at line 1, column 1"), 0),
            0u)
      << named_reason(b.not_json, q);
  EXPECT_EQ(named_reason(b.empty, q), unreadable(b.empty, "empty"));
  EXPECT_EQ(named_reason(b.report, q),
            unreadable(b.report,
                       "JSON, but not a diescope calibration file (no \"kind\": \"diescope-calibration\")"));
  const fs::path txt = b.dir / "README.txt";
  EXPECT_EQ(named_reason(txt, q), unreadable(txt, "not a .json file"));
}

TEST(BadInput, AFolderOfBadFilesPassesThemOverAndSaysNoCalibration) {
  const BadFiles b = make_bad_files("bad-folder");
  const CalibrationBlock block = find_calibration(h200_query(), b.dir, std::nullopt);  // never throws
  EXPECT_EQ(block.status, "unvalidated");
  EXPECT_EQ(block.reason, "no calibration file for this GPU model, driver and method in " + b.dir.string());
  // Every .json entry is passed over with its reason, in name order; README.txt is not read.
  ASSERT_EQ(block.passed_over.size(), 9u);
  EXPECT_EQ(block.passed_over[0].name, "empty.json");
  EXPECT_EQ(block.passed_over[0].reason, "could not be read: empty");
  EXPECT_EQ(block.passed_over[1].name, "folder.json");
  EXPECT_EQ(block.passed_over[1].reason, "could not be read: not a regular file");
  EXPECT_EQ(block.passed_over[2].name, "notes.json");
  EXPECT_EQ(block.passed_over[3].name, "old-schema.json");
  EXPECT_EQ(block.passed_over[3].reason, "not taken: schema 2 vs 3 or later");
  EXPECT_EQ(block.passed_over[4].name, "other-driver.json");
  EXPECT_EQ(block.passed_over[4].reason, "not taken: driver 610.57.04 vs 580.159.04");
  EXPECT_EQ(block.passed_over[5].name, "other-gpu.json");
  EXPECT_EQ(block.passed_over[6].name, "oversized.json");
  EXPECT_EQ(block.passed_over[7].name, "report.json");
  EXPECT_EQ(block.passed_over[8].name, "truncated.json");
  EXPECT_EQ(block.passed_over[8].reason.rfind("could not be read: truncated", 0), 0u);
  const json j = calibration_block_json(block);
  EXPECT_EQ(j["passed_over"].size(), 9u);
}

TEST(BadInput, AGoodFileAmongBadOnesIsTaken) {
  const BadFiles b = make_bad_files("bad-and-good");
  put(b.dir, "good.json", h200_file());
  const CalibrationBlock block = find_calibration(h200_query(), b.dir, std::nullopt);
  EXPECT_EQ(block.status, "partial");
  EXPECT_EQ(block.file->name, "good.json");
  EXPECT_EQ(block.passed_over.size(), 9u);
}

TEST(BadInput, AMalformedFieldIsNamed) {
  const fs::path dir = scratch("malformed");
  json j = calibration_to_json(h200_file());
  j["units"][0].erase("recipe");
  const fs::path p = write_text(dir / "malformed.json", j.dump());
  EXPECT_EQ(named_reason(p),
            p.string() +
                ": could not be read as a calibration file: field units[0].recipe is missing or not "
                "an object");
}

}  // namespace
}  // namespace diescope::calibrate
