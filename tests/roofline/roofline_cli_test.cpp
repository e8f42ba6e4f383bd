// `diescope roofline` as a user runs it, on the CPU: `plot` from the H200 exports and from its own
// tables, bad tables, and `profile` driving a stand-in ncu (fake_ncu.sh) through a batch in which
// one target fails and one hangs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "diescope/roofline/csv.hpp"
#include "common/run_binary.hpp"
#include "fixtures.hpp"

// Its own namespace: the part's test files compile as one (docs/building.md#one-test-binary-per-part).
namespace diescope::roofline::cli_test {
namespace {

namespace fs = std::filesystem;
using test::fixture_path;
using test::read_file;

using diescope::test::Ran;

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

TEST(RooflineCli, WithoutADriverTheCalibrationLookupAsksForDriverNotCalibration) {
  if (fs::exists("/proc/driver/nvidia/version"))
    GTEST_SKIP() << "this machine has an NVIDIA driver: the exports take its version";
  const fs::path out = scratch("plot-no-driver");
  const Ran r = run("roofline plot --from-export ffma=" + fixture_path("h200-ffma.raw.csv") +
                    " --calibration " + kCalibration + " --output " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("pass --driver VERSION"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("or pass --calibration PATH"), std::string::npos) << r.out;
  // With --driver the calibration is taken: no warning about ceilings.
  const Ran r2 = run("roofline plot --from-export ffma=" + fixture_path("h200-ffma.raw.csv") +
                     " --calibration " + kCalibration + " --driver 580.159.04 --output " + out.string());
  ASSERT_EQ(r2.exit_code, 0) << r2.out;
  EXPECT_EQ(r2.out.find("no measured ceilings"), std::string::npos) << r2.out;
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
  const Ran r = run("roofline profile --ncu " + kFakeNcu + " --timeout 2 --calibration " + kCalibration +
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

  // A second run keeps the report unless --force; --skip-profile reads it. (-O NAME=VALUE, the backend
  // settings' old spelling, still works: docs/command-line.md#backend-options.)
  const Ran kept = run("roofline profile -O ncu=" + kFakeNcu + " --output " + (dir / "out").string() + " " +
                       (dir / "good").string());
  EXPECT_EQ(kept.exit_code, 3) << kept.out;
  EXPECT_NE(kept.out.find("good.ncu-rep is there already"), std::string::npos) << kept.out;
  const Ran reread = run("roofline profile -O ncu=" + kFakeNcu + " --skip-profile --output " +
                         (dir / "out").string() + " " + (dir / "good").string());
  EXPECT_EQ(reread.exit_code, 0) << reread.out;
}

// docs/roofline.md#dram-bytes-and-the-cache-flush: ncu's rows say which caches their launches started
// from, beside the report too, so --skip-profile keeps it; a plot that mixes two states says so.
TEST(RooflineCli, NcuRowsRecordTheCacheStateAndAMixedPlotWarns) {
  const fs::path dir = scratch("caches");
  std::ofstream(dir / "good") << "#!/bin/sh\nexit 0\n";
  fs::permissions(dir / "good", fs::perms::owner_all, fs::perm_options::replace);
  const std::string base = "roofline profile --ncu " + kFakeNcu + " --calibration " + kCalibration;
  const Ran flushed = run(base + " --output " + (dir / "flushed").string() + " " + (dir / "good").string());
  ASSERT_EQ(flushed.exit_code, 0) << flushed.out;
  const auto a = parse_table_csv(read_file((dir / "flushed" / "roofline.csv").string()), "a");
  ASSERT_FALSE(a.empty());
  for (const Row& r : a) EXPECT_EQ(r.caches, "flushed");
  EXPECT_EQ(read_file((dir / "flushed" / "good.caches").string()), "flushed\n");

  const Ran unflushed = run(base + " --ncu-arg=--cache-control=none --output " +
                            (dir / "unflushed").string() + " " + (dir / "good").string());
  ASSERT_EQ(unflushed.exit_code, 0) << unflushed.out;
  // Read again without the -O: the file beside the report says how it was made.
  const Ran reread =
      run(base + " --skip-profile --output " + (dir / "unflushed").string() + " " + (dir / "good").string());
  ASSERT_EQ(reread.exit_code, 0) << reread.out;
  auto b = parse_table_csv(read_file((dir / "unflushed" / "roofline.csv").string()), "b");
  ASSERT_FALSE(b.empty());
  for (const Row& r : b) EXPECT_EQ(r.caches, "unflushed");
  EXPECT_EQ(reread.out.find("caches in different states"), std::string::npos) << reread.out;

  // The flushed table beside a range table (the program's caches): a warning counts both kinds.
  for (Row& r : b) {
    r.profiler = Profiler::range;
    r.caches = "program";
  }
  std::ofstream(dir / "range.csv") << table_csv(b);
  const Ran mixed = run("roofline plot --from-csv " + (dir / "flushed" / "roofline.csv").string() + " " +
                        (dir / "range.csv").string() + " --output " + (dir / "mixed").string());
  ASSERT_EQ(mixed.exit_code, 0) << mixed.out;
  EXPECT_NE(mixed.out.find(std::to_string(a.size()) +
                           " row(s) (ncu) from caches flushed before every kernel "
                           "(ncu's default); " +
                           std::to_string(b.size()) +
                           " row(s) (range) from the caches "
                           "the program left."),
            std::string::npos)
      << mixed.out;
  EXPECT_NE(mixed.out.find("compare DRAM intensities only between rows of one kind"), std::string::npos)
      << mixed.out;
}

#if defined(DIESCOPE_FAKE_NVML_DIR) && defined(DIESCOPE_SAMPLER_FAKE)
// docs/roofline.md#the-sampled-backend, as a user runs it, with a stand-in GPU: the fake sampler's SM
// active is never below 10%, so every region's samples are one window. The program writes the
// library's timestamps file itself (times from Python's monotonic and realtime clocks).
fs::path sampled_fixture(const fs::path& dir, const std::string& body) {
  const fs::path sampler = dir / "sampler.sh";
  std::ofstream(sampler) << "#!/bin/sh\n[ \"$1\" = sample ] && shift\nexec " << DIESCOPE_SAMPLER_FAKE
                         << " \"$@\"\n";
  const fs::path prog = dir / "prog.py";
  std::ofstream(prog)
      << "#!/usr/bin/env python3\nimport os, sys, time, signal\n"
         "n = int(os.environ['DIESCOPE_ITERATIONS'])\n"
         "out = open(os.environ['DIESCOPE_RANGE_OUTPUT'], 'w', buffering=1)\n"
         "m = time.monotonic_ns(); r = time.time_ns()\n"
         "out.write(f'diescope-range\\t1\\nclock\\t{m}\\t{r}\\t100\\nmode\\ttimestamps\\n')\n"
         "def region(name, i, closed=True):\n"
         "    t0 = time.monotonic_ns(); out.write(f'open\\t{name}\\t{i}\\t{t0}\\n'); time.sleep(0.03)\n"
         "    t1 = time.monotonic_ns()\n"
         "    if closed: out.write(f'row\\t{name}\\t{i}\\t1\\t1\\tk\\t{t0}\\t{t1}\\n')\n"
         "    time.sleep(0.01)\n"
      << body;
  fs::permissions(sampler, fs::perms::owner_all);
  fs::permissions(prog, fs::perms::owner_all);
  ::setenv("LD_LIBRARY_PATH", DIESCOPE_FAKE_NVML_DIR, 1);
  ::setenv("DIESCOPE_FAKE_NVML_GPUS", "1", 1);
  ::setenv("DIESCOPE_CUPTI", sampler.c_str(), 1);
  std::ofstream(dir / "lib.so") << "";
  return prog;
}

TEST(RooflineCliSampled, TwoPointRunsGiveOneRowPerRegionAndNameAnUnmatchedRule) {
  const fs::path dir = scratch("sampled-two-point");
  const fs::path prog = sampled_fixture(dir,
                                        "for i in range(n): region('k', i + 1)\n"
                                        "print('reps', sys.argv[1:])\nout.write('end\\t0\\n')\n");
  const Ran r = run("roofline profile --profiler sampled --lib " + (dir / "lib.so").string() +
                    " --iterations 3 --flop 'prog.py\\[k\\]=1e9' --flop 'nomatch=1' --output " +
                    (dir / "out").string() + " -- " + prog.string() + " --reps '{iterations}'");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto rows = parse_table_csv(read_file((dir / "out" / "roofline.csv").string()), "roofline.csv");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].profiler, Profiler::sampled);
  EXPECT_EQ(rows[0].region, "k");
  EXPECT_DOUBLE_EQ(rows[0].flop[index(Precision::fp32)], 1e9);
  // Each region is 30 ms of host time; its window is the samples overlapping it (0.5 ms each).
  EXPECT_NEAR(rows[0].duration_s, 0.030, 0.005);
  EXPECT_NE(read_file((dir / "out" / "prog.py.sampled.log").string()).find("reps ['--reps', '3']"),
            std::string::npos);
  EXPECT_NE(read_file((dir / "out" / "prog.py.ref.sampled.log").string()).find("reps ['--reps', '1']"),
            std::string::npos);
  EXPECT_NE(r.out.find("--flop 'nomatch=1' matches no row (the rows are prog.py[k])"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("samples, median 0.500 ms (asked 0.5)"), std::string::npos) << r.out;
}

TEST(RooflineCliSampled, ACrashInsideARegionKeepsTheRegionsClosedBefore) {
  const fs::path dir = scratch("sampled-crash");
  const fs::path prog = sampled_fixture(
      dir, "region('ffma', 1)\nregion('triad', 1, closed=False)\nos.kill(os.getpid(), signal.SIGSEGV)\n");
  const Ran r =
      run("roofline profile --profiler sampled -O lib=" + (dir / "lib.so").string() +
          " --flop 'ffma=1' --flop 'triad=1' --output " + (dir / "out").string() + " -- " + prog.string());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto rows = parse_table_csv(read_file((dir / "out" / "roofline.csv").string()), "roofline.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].region, "ffma");
  EXPECT_EQ(rows[1].region, "triad");
  EXPECT_NE(
      r.out.find("the program ended without its exit handlers (it crashed or was killed) inside triad#1"),
      std::string::npos)
      << r.out;
}

TEST(RooflineCliSampled, CountersHeldByAnotherProfilerStopTheBatch) {
  const fs::path dir = scratch("sampled-busy");
  const fs::path prog = sampled_fixture(dir, "region('k', 1)\nout.write('end\\t0\\n')\n");
  // The fake sampler answers as CUPTI does when ncu holds the counters.
  const fs::path busy = dir / "busy.sh";
  std::ofstream(busy) << "#!/bin/sh\n[ \"$1\" = sample ] && shift\nexec " << DIESCOPE_SAMPLER_FAKE
                      << " \"$@\" --fail-with busy\n";
  fs::permissions(busy, fs::perms::owner_all);
  ::setenv("DIESCOPE_CUPTI", busy.c_str(), 1);
  const Ran r = run("roofline profile --profiler sampled -O lib=" + (dir / "lib.so").string() +
                    " --flop 'k=1' --output " + (dir / "out").string() + " -- " + prog.string());
  EXPECT_EQ(r.exit_code, 4) << r.out;
  EXPECT_NE(r.out.find("the PM sampler recorded no samples"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("stop any other profiler"), std::string::npos) << r.out;
}

TEST(RooflineCliSampled, NoRegionIsOneRowWithAWarning) {
  const fs::path dir = scratch("sampled-no-nvtx");
  const fs::path prog =
      sampled_fixture(dir,
                      "t0 = time.monotonic_ns(); time.sleep(0.03); t1 = time.monotonic_ns()\n"
                      "out.write(f'row\\t\\t1\\t1\\t3\\tk\\t{t0}\\t{t1}\\nend\\t0\\n')\n");
  const Ran r = run("roofline profile --profiler sampled -O lib=" + (dir / "lib.so").string() +
                    " --flop 'prog.py\\[\\]=5' --output " + (dir / "out").string() + " -- " + prog.string());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto rows = parse_table_csv(read_file((dir / "out" / "roofline.csv").string()), "roofline.csv");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].region, "");
  EXPECT_DOUBLE_EQ(rows[0].flop[index(Precision::fp32)], 5);
  EXPECT_NE(r.out.find("the program marks no NVTX region, so its whole run is one row"), std::string::npos)
      << r.out;
}
#endif

// docs/roofline.md#backend-settings: a backend's flag given to another backend is refused, naming its own.
TEST(RooflineCli, AFlagOfAnotherBackendIsRefused) {
  const Ran r = run("roofline profile --profiler range --iterations 3 -- true");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("--iterations belongs to the sampled backend, not range"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the range backend takes --aslr, --lib"), std::string::npos) << r.out;
}

TEST(RooflineCliSampled, FlopRulesBelongToTheSampledBackend) {
  const Ran r = run("roofline profile --profiler ncu --flop 'x=1' -- true");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("--flop gives the sampled backend its FLOPs; the ncu backend counts them"),
            std::string::npos)
      << r.out;
  const Ran bad = run("roofline profile --profiler sampled --flop 'x' -- true");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.out.find("--flop x is not REGEX=VALUE"), std::string::npos) << bad.out;
}

}  // namespace
}  // namespace diescope::roofline::cli_test
