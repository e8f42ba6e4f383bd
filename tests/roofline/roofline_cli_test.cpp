// `diescope roofline` as a user runs it, on the CPU: `plot` from the H200 exports and from its own
// tables, bad tables, and `profile` driving a stand-in ncu (fake_ncu.sh) through a batch in which
// one target fails and one hangs.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "diescope/roofline/csv.hpp"
#include "common/shell.hpp"
#include "fixtures.hpp"

namespace diescope::roofline {
namespace {

namespace fs = std::filesystem;
using test::fixture_path;
using test::read_file;

using Ran = diescope::test::ShellRun;

Ran run(const std::string& args) {
  return diescope::test::run_diescope_shell(args);
}

fs::path scratch(const std::string& name) {
  return diescope::test::scratch_dir("test-roofline-cli", name);
}

const std::string kCalibration =
    std::string(DIESCOPE_SOURCE_DIR) + "/bench/results/calibrate/2026-11-29-h200-wgmma/calibration-full.json";
const std::string kFakeNcu = std::string(DIESCOPE_SOURCE_DIR) + "/tests/roofline/fake_ncu.sh";

TEST(RooflineCli, PlotFromExportsWritesTheTableAndThePlot) {
  const fs::path out = scratch("plot");
  const Ran r = run("roofline plot --from-export gemm=" + fixture_path("h200-gemm.raw.csv") +
                    " triad=" + fixture_path("h200-triad.raw.csv") + " --calibration " + kCalibration +
                    " --driver 580.159.04 --aggregate dominant --output " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto rows = parse_table_csv(read_file((out / "roofline.csv").string()), "roofline.csv");
  ASSERT_EQ(rows.size(), 2u);
  // gemm's dominant kernel is the GEMM (3 x 1.4 ms), not the fill (3 x 71 us)
  EXPECT_EQ(rows[0].kernel, "nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_NNT");
  EXPECT_EQ(rows[0].launches, 3);
  EXPECT_DOUBLE_EQ(rows[0].flop[index(Precision::tensor_bf16)], 3 * 2.0 * 8320 * 8192 * 8192);
  EXPECT_DOUBLE_EQ(rows[1].measured_bytes_per_s[index(Level::dram)], 4452551862360.51);
  EXPECT_NE(r.out.find("tensor bf16 meas."), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gemm: no launch is inside an NVTX region, so every launch is kept"),
            std::string::npos);
  EXPECT_TRUE(fs::file_size(out / "roofline.svg") > 1000);
  EXPECT_NE(read_file((out / "roofline.html").string()).find("<svg"), std::string::npos);

  // Plotted again from its own table, concatenated with itself: the same rows, deduplicated.
  const fs::path again = scratch("plot-again");
  const Ran r2 = run("roofline plot --from-csv " + (out / "roofline.csv").string() + " " +
                     (out / "roofline.csv").string() + " --output " + again.string());
  ASSERT_EQ(r2.exit_code, 0) << r2.out;
  EXPECT_EQ(read_file((again / "roofline.csv").string()), read_file((out / "roofline.csv").string()));
}

TEST(RooflineCli, ABadTableIsNamedByFileAndLine) {
  const fs::path dir = scratch("bad");
  std::ofstream(dir / "cut.csv") << "executable,kernel,launch [id]\nx,\"k";
  const Ran r = run("roofline plot --from-csv " + (dir / "cut.csv").string() + " --output " + dir.string());
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find("cut.csv:1: column \"region\" is missing"), std::string::npos) << r.out;
  // A whole table cut short inside a row.
  std::string table = table_csv(test::fixture_rows("h200-dfma.raw.csv", "dfma"));
  table.resize(table.size() - table.size() / 5);
  std::ofstream(dir / "short.csv") << table;
  const Ran cut =
      run("roofline plot --from-csv " + (dir / "short.csv").string() + " --output " + dir.string());
  EXPECT_EQ(cut.exit_code, 3) << cut.out;
  // the line after the last whole one
  const auto line = std::count(table.begin(), table.end(), '\n') + 1;
  EXPECT_NE(cut.out.find("short.csv:" + std::to_string(line) + ": the file ends in the middle of this line"),
            std::string::npos)
      << cut.out;
  const Ran none = run("roofline plot --output " + dir.string());
  EXPECT_EQ(none.exit_code, 2) << none.out;
}

TEST(RooflineCli, ProfileGoesOnPastAFailingAndAHangingTarget) {
  const fs::path dir = scratch("profile");
  std::ofstream(dir / "good") << "#!/bin/sh\nexit 0\n";
  std::ofstream(dir / "crash") << "#!/bin/sh\nkill -SEGV $$\n";
  std::ofstream(dir / "hang") << "#!/bin/sh\nexec sleep 60\n";
  for (const char* f : {"good", "crash", "hang"})
    fs::permissions(dir / f, fs::perms::owner_all, fs::perm_options::replace);
  const Ran r = run("roofline profile -O ncu=" + kFakeNcu + " --timeout 2 --calibration " + kCalibration +
                    " --output " + (dir / "out").string() + " " + (dir / "crash").string() + " " +
                    (dir / "hang").string() + " " + (dir / "good").string() + " 2>&1 </dev/null; true");
  // run() appends its own redirection; the exit code is checked below through a second run.
  EXPECT_NE(r.out.find("crash: skipped: ncu: The application returned an error code"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("hang: skipped: timed out after 2 s and was stopped"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 of 3 targets profiled"), std::string::npos) << r.out;
  const auto rows = parse_table_csv(read_file((dir / "out" / "roofline-launches.csv").string()), "launches");
  ASSERT_EQ(rows.size(), 3u);  // the FFMA export, named for the target
  EXPECT_EQ(rows[0].executable, "good");
  EXPECT_TRUE(fs::exists(dir / "out" / "good.ncu-rep"));
  EXPECT_TRUE(fs::exists(dir / "out" / "good.ncu.log"));

  // A second run keeps the report unless --force; --skip-profile reads it.
  const Ran kept = run("roofline profile -O ncu=" + kFakeNcu + " --output " + (dir / "out").string() + " " +
                       (dir / "good").string());
  EXPECT_EQ(kept.exit_code, 3) << kept.out;
  EXPECT_NE(kept.out.find("good.ncu-rep is there already"), std::string::npos) << kept.out;
  const Ran reread = run("roofline profile -O ncu=" + kFakeNcu + " --skip-profile --output " +
                         (dir / "out").string() + " " + (dir / "good").string());
  EXPECT_EQ(reread.exit_code, 0) << reread.out;
}

}  // namespace
}  // namespace diescope::roofline
