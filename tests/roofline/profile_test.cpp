// Profiling without a GPU: backend settings, targets, the ncu command line, and a stand-in profiler
// that fails, crashes or outlives its timeout.
#include <gtest/gtest.h>

#include <map>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "diescope/core/error.hpp"
#include "diescope/roofline/profile.hpp"

namespace diescope::roofline {
namespace {

namespace fs = std::filesystem;

fs::path scratch(const std::string& name) {
  const fs::path p = fs::path(DIESCOPE_BINARY_DIR) / "test-roofline" / name;
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

TEST(Profile, BackendSettingsAreParsed) {
  const NcuSettings s = parse_backend_settings(
      "ncu", {"ncu=/opt/ncu", "metrics=a.sum,b.sum", "ncu-arg=--launch-count=3", "ncu-arg=-c", "aslr=on"});
  EXPECT_EQ(s.ncu, "/opt/ncu");
  EXPECT_EQ(s.metrics, (std::vector<std::string>{"a.sum", "b.sum"}));
  EXPECT_EQ(s.ncu_args, (std::vector<std::string>{"--launch-count=3", "-c"}));
  EXPECT_TRUE(s.aslr);
  EXPECT_FALSE(parse_backend_settings("ncu", {}).aslr);
}

// docs/roofline.md#dram-bytes-and-the-cache-flush: ncu flushes unless told --cache-control none; the
// last setting wins, in either spelling.
TEST(Profile, TheCachesNcuStartsFromFollowItsCacheControlArgument) {
  auto caches = [](std::vector<std::string> args) {
    NcuSettings s;
    s.ncu_args = std::move(args);
    return ncu_caches(s);
  };
  EXPECT_EQ(caches({}), "flushed");
  EXPECT_EQ(caches({"--launch-count=3"}), "flushed");
  EXPECT_EQ(caches({"--cache-control=none"}), "unflushed");
  EXPECT_EQ(caches({"--cache-control", "none"}), "unflushed");
  EXPECT_EQ(caches({"--cache-control=none", "--cache-control", "all"}), "flushed");
  EXPECT_EQ(caches({"--cache-control=all", "--cache-control=none"}), "unflushed");
  EXPECT_EQ(caches({"--cache-control"}), "flushed");  // no value: ncu refuses it; nothing changes here
}

TEST(Profile, AnUnknownSettingListsTheValidOnes) {
  try {
    parse_backend_settings("ncu", {"sections=all"});
    FAIL() << "no error";
  } catch (const core::UsageError& e) {
    EXPECT_EQ(e.cause(), "-O sections is not a setting of the ncu backend");
    EXPECT_NE(e.fix().find("--ncu, --metrics, --ncu-arg, --aslr"), std::string::npos) << e.fix();
  }
  EXPECT_THROW(parse_backend_settings("nsys", {}), core::UsageError);
  EXPECT_THROW(parse_backend_settings("ncu", {"aslr=maybe"}), core::UsageError);
  EXPECT_THROW(parse_backend_settings("ncu", {"metrics"}), core::UsageError);
}

// docs/roofline.md#backend-settings: a flag arrives as --NAME=VALUE and is quoted as the user wrote it.
TEST(Profile, FlagsAndTheOldSpellingSetTheSameSettings) {
  const NcuSettings flags =
      parse_backend_settings("sampled", {"--iterations=4", "--lib=/x.so", "--gap-ms=0.5"});
  const NcuSettings old = parse_backend_settings("sampled", {"iterations=4", "lib=/x.so", "gap-ms=0.5"});
  EXPECT_EQ(flags.iterations, 4);
  EXPECT_EQ(flags.iterations, old.iterations);
  EXPECT_EQ(flags.lib, old.lib);
  EXPECT_DOUBLE_EQ(flags.sampled.gap_ms, 0.5);
  auto cause = [](const std::string& profiler, const std::string& item) {
    try {
      parse_backend_settings(profiler, {item});
    } catch (const core::UsageError& e) {
      return e.cause();
    }
    return std::string();
  };
  EXPECT_EQ(cause("sampled", "--iterations=0"), "--iterations 0 is not a whole number from 1 to 1000000");
  EXPECT_EQ(cause("sampled", "iterations=0"), "-O iterations=0 is not a whole number from 1 to 1000000");
  EXPECT_EQ(cause("ncu", "--lib=/x.so"), "--lib belongs to the range and sampled backends, not ncu");
  EXPECT_EQ(cause("sampled", "--interval-ms=20"), "--interval-ms 20 is not a number from 0.1 to 10");
  EXPECT_EQ(cause("range", "--aslr=maybe"), "--aslr maybe is not on or off");
}

// Each setting is listed under the backends that take it, as --help shows them.
TEST(Profile, EachSettingIsListedUnderItsBackends) {
  std::map<std::string, std::string> group;
  for (const BackendSetting& s : backend_settings()) group[s.name] = backend_group(s);
  EXPECT_EQ(group.size(), 11u);
  EXPECT_EQ(group["ncu"], "ncu backend");
  EXPECT_EQ(group["metrics"], "ncu backend");
  EXPECT_EQ(group["ncu-arg"], "ncu backend");
  EXPECT_EQ(group["aslr"], "ncu and range backends");
  EXPECT_EQ(group["lib"], "range and sampled backends");
  for (const char* name :
       {"iterations", "interval-ms", "threshold", "gap-ms", "min-window-ms", "activity-ratio"})
    EXPECT_EQ(group[name], "sampled backend") << name;
}

TEST(Profile, TargetsAreNamedForTheirFilesAndMadeUnique) {
  const auto many = make_targets({"/bin/true", "/usr/bin/true", "./bench_gemm"}, {});
  ASSERT_EQ(many.size(), 3u);
  EXPECT_EQ(many[0].name, "true");
  EXPECT_EQ(many[1].name, "true-2");
  EXPECT_EQ(many[2].argv, (std::vector<std::string>{"./bench_gemm"}));
  const auto one = make_targets({}, {"python3", "bench/roofline/resnet50_steps.py", "--steps", "1"});
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].name, "resnet50_steps.py");
  EXPECT_EQ(one[0].argv.size(), 4u);
}

TEST(Profile, GoogleBenchmarkBinariesAreRecognisedByTheLibrarysFlag) {
  const fs::path dir = scratch("gbench");
  std::ofstream(dir / "bench") << std::string(3 << 20, 'x') << "--benchmark_out_format=<json|console|csv>";
  std::ofstream(dir / "plain") << std::string(1000, 'x');
  EXPECT_TRUE(is_google_benchmark(dir / "bench"));
  EXPECT_FALSE(is_google_benchmark(dir / "plain"));
}

TEST(Profile, TheNcuCommandProfilesWithNvtxAtTheClocksFoundWithoutAslr) {
  Target t{"b", {"./b", "--x"}, true};
  NcuSettings s;
  s.ncu_args = {"--launch-count=2"};
  const auto argv = ncu_command("/usr/bin/ncu", s, t, "out/b", "x86_64");
  const std::vector<std::string> head(argv.begin(), argv.begin() + 5);
  EXPECT_EQ(head,
            (std::vector<std::string>{"/usr/bin/ncu", "--clock-control", "none", "--nvtx", "--metrics"}));
  const std::vector<std::string> tail(argv.begin() + 6, argv.end());
  EXPECT_EQ(tail, (std::vector<std::string>{
                      "--export", "out/b", "--force-overwrite", "--launch-count=2", "setarch", "x86_64", "-R",
                      "./b", "--x", "--benchmark_out=out/b.benchmark.json", "--benchmark_out_format=json"}));
  s.aslr = true;
  s.gpus = "1";
  t.google_benchmark = false;
  const auto with_aslr = ncu_command("ncu", s, t, "out/b", "x86_64");
  EXPECT_EQ(std::find(with_aslr.begin(), with_aslr.end(), "setarch"), with_aslr.end());
  const auto devices = std::find(with_aslr.begin(), with_aslr.end(), "--devices");
  ASSERT_NE(devices, with_aslr.end());
  EXPECT_EQ(*(devices + 1), "1");
}

TEST(Profile, AProfilerThatOutlivesItsTimeoutIsStoppedWithItsChildren) {
  const fs::path dir = scratch("timeout");
  const auto start = std::chrono::steady_clock::now();
  const ProfileOutcome out =
      run_profiler({"/bin/sh", "-c", "sleep 60 & sleep 60"}, dir / "log", std::chrono::milliseconds(300));
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_FALSE(out.ok);
  EXPECT_EQ(out.cause, "timed out after 0.3 s and was stopped");
  EXPECT_LT(took, 10.0);
}

TEST(Profile, NcusErrorLineIsTheCause) {
  const fs::path dir = scratch("fail");
  const ProfileOutcome out =
      run_profiler({"/bin/sh", "-c",
                    "echo '==PROF== Connected'; echo '==ERROR== Failed to find metric nope__x.sum'; exit 1"},
                   dir / "log", std::chrono::seconds(20));
  EXPECT_FALSE(out.ok);
  EXPECT_EQ(
      out.cause,
      "ncu does not know a metric asked for: Failed to find metric nope__x.sum (ncu exited with code 1)");
  EXPECT_NE(out.fix.find("log"), std::string::npos);
  EXPECT_TRUE(run_profiler({"/bin/sh", "-c", "echo fine"}, dir / "log2", std::chrono::seconds(20)).ok);
}

TEST(Profile, FailureCausesFromTheLog) {
  EXPECT_EQ(ncu_failure_cause("==PROF== x\n==ERROR== The application returned an error code (11).\n"),
            "ncu: The application returned an error code (11).");
  EXPECT_EQ(ncu_failure_cause("==WARNING== No kernels were profiled.\n"),
            "ncu profiled no kernel: the target launched none (or none the filters kept)");
  EXPECT_EQ(ncu_failure_cause("==PROF== Report: x.ncu-rep\n"), "");
}

}  // namespace
}  // namespace diescope::roofline
