// `diescope bench` end to end on the CPU: real rounds of record_run with the fake sampler child and
// the fake NVML table the run tests use, analysed, judged, summarised and written to bench.json.
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "collect/nvml_fake.hpp"
#include "diescope/rounds/bench.hpp"
#include "diescope/collect/nvml.hpp"
#include "diescope/core/error.hpp"
#include "diescope/recording/reader.hpp"

namespace diescope::rounds {
namespace {

namespace fs = std::filesystem;

struct RecordingProgress final : ProgressSink {
  std::vector<int> started, finished;
  void round_started(int round, int) override { started.push_back(round); }
  void round_finished(const Round& round, int) override { finished.push_back(round.number); }
};

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

const char* kSteady = "echo setup; echo 'diescope: measure start'; sleep 0.3; echo 'diescope: measure stop'";

class BenchRun : public ::testing::Test {
 protected:
  void SetUp() override {
    nvml_ = std::make_unique<collect::Nvml>(collect::fake_nvml::fake_functions());
    dir_ = fs::path(DIESCOPE_BINARY_DIR) / "test-bench" /
           (std::string("bench_run_") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }

  BenchOptions options(const std::string& script, int rounds = 5) {
    BenchOptions o;
    o.rounds = rounds;
    o.run.command = {"/bin/sh", "-c", script};
    o.run.interval_ms = 5;
    o.run.drain_ms = 50;
    o.run.poll_ms = 20;
    o.run.end_wait_ms = 200;
    o.run.sampler_executable = DIESCOPE_SAMPLER_FAKE;
    o.run.sampler_leading_args = {};
    o.output_dir = dir_;
    return o;
  }

  std::unique_ptr<collect::Nvml> nvml_;
  fs::path dir_;
};

TEST_F(BenchRun, FiveRoundsWithOneMissingWindowAndOnePartialRound) {
  BenchOptions o = options(kSteady);
  o.adjust_round = [](int round, collect::RunOptions& run) {
    if (round == 2) run.command = {"/bin/sh", "-c", "echo no markers here; sleep 0.3"};
    // The fake sampler crashes after 5 samples: the counters cover almost none of the window.
    if (round == 3) run.sampler_extra_args = {"--crash-after", "5"};
    if (round == 4) run.command = {"/bin/sh", "-c", std::string(kSteady) + "; exit 3"};
  };
  RecordingProgress progress;
  const BenchResult r = run_bench(o, *nvml_, progress);

  EXPECT_EQ(progress.started, (std::vector<int>{1, 2, 3, 4, 5}));
  EXPECT_EQ(progress.finished, (std::vector<int>{1, 2, 3, 4, 5}));
  ASSERT_EQ(r.rounds.size(), 5u);
  EXPECT_FALSE(r.interrupted);
  EXPECT_EQ(r.stopped_because, "");
  EXPECT_EQ(r.rounds[3].exit_code, 3);  // reported per round; the round still counts
  EXPECT_EQ(r.rounds[0].exit_code, 0);
  ASSERT_FALSE(r.rounds[2].warnings.empty());
  EXPECT_NE(r.rounds[2].warnings[0].find("SIGSEGV"), std::string::npos);

  ASSERT_EQ(r.gpus.size(), 1u);
  const GpuBench& b = r.gpus[0];
  EXPECT_EQ(b.kept, (std::vector<int>{1, 4, 5}));
  ASSERT_EQ(b.left_out.size(), 2u);
  EXPECT_EQ(b.left_out[0].round, 2);
  EXPECT_EQ(b.left_out[0].reason, "no steady window (no markers)");
  EXPECT_EQ(b.left_out[1].round, 3);
  EXPECT_EQ(b.left_out[1].reason.rfind("window partial (counters covered ", 0), 0u) << b.left_out[1].reason;
  EXPECT_TRUE(b.enough);
  EXPECT_EQ(too_few_rounds(r), "");
  EXPECT_EQ(b.gpu.model, "NVIDIA H200");

  // The fake driver's GPU-Util is 97% throughout: every kept round reads 97, so the mean is 97 and
  // the spread 0.
  const FigureStats* gpu = nullptr;
  const FigureStats* die = nullptr;
  for (const FigureStats& s : b.figures) {
    if (s.key == "gpu_util_pct") gpu = &s;
    if (s.key == "die_util_pct") die = &s;
  }
  ASSERT_TRUE(gpu && die);
  EXPECT_EQ(gpu->summary.n, 3);
  EXPECT_NEAR(gpu->summary.mean, 97.0, 1e-9);
  EXPECT_NEAR(gpu->summary.sd, 0.0, 1e-9);
  // DIE-Util's statistics are those of the three kept rounds' window figures.
  std::vector<double> kept_die;
  for (int n : b.kept)
    for (const Figure& f : r.rounds[static_cast<std::size_t>(n - 1)].gpus[0].figures)
      if (f.key == "die_util_pct") kept_die.push_back(f.value);
  ASSERT_EQ(kept_die.size(), 3u);
  const Summary expected = summarise(kept_die);
  EXPECT_DOUBLE_EQ(die->summary.mean, expected.mean);
  EXPECT_DOUBLE_EQ(die->summary.sd, expected.sd);
  EXPECT_DOUBLE_EQ(die->summary.t, 4.302653);  // t(0.975; 2)

  // Files: bench.json, and per round the recording (run_type "round"), its report and stdout.log.
  const nlohmann::json j = nlohmann::json::parse(read_text(dir_ / "bench.json"));
  EXPECT_EQ(j["rounds_run"], 5);
  EXPECT_EQ(j["gpus"][0]["kept_rounds"], nlohmann::json::array({1, 4, 5}));
  EXPECT_EQ(j["rounds"][1]["gpus"][0]["left_out_because"], "no steady window (no markers)");
  EXPECT_EQ(j["rounds"][3]["exit_code"], 3);
  const fs::path reports = fs::path(DIESCOPE_BINARY_DIR) / "test-reports";
  fs::create_directories(reports);
  for (int k = 1; k <= 5; ++k) {
    const fs::path round = dir_ / ("round-0" + std::to_string(k));
    auto source = recording::open_recording(round / "gpu0.dsrec");
    EXPECT_EQ(source->meta().run_type, "round");
    const fs::path report = round / "gpu0.dsrec.report" / "report.json";
    const nlohmann::json rep = nlohmann::json::parse(read_text(report));
    EXPECT_EQ(rep["run_type"], "round");
    EXPECT_EQ(rep["window"]["found"], k != 2);
    EXPECT_TRUE(fs::exists(round / "gpu0.dsrec.report" / "samples.csv"));
    const std::string out = read_text(round / "stdout.log");
    EXPECT_EQ(out.find("diescope: measure start") != std::string::npos, k != 2) << out;
    // The report schema test (tests/report) validates these too.
    fs::copy_file(report, reports / ("rounds_round" + std::to_string(k) + ".json"),
                  fs::copy_options::overwrite_existing);
  }

  const std::string summary = render_summary(r);
  EXPECT_NE(summary.find("3 of 5 rounds kept"), std::string::npos) << summary;
  EXPECT_NE(summary.find("round 2 left out: no steady window (no markers)"), std::string::npos) << summary;
}

TEST_F(BenchRun, ASecondBenchIntoTheSameFolderIsRefused) {
  RecordingProgress progress;
  const BenchResult r = run_bench(options(kSteady, 2), *nvml_, progress);
  EXPECT_EQ(r.gpus[0].kept, (std::vector<int>{1, 2}));
  try {
    run_bench(options(kSteady, 2), *nvml_, progress);
    FAIL() << "a folder holding bench.json must not be reused";
  } catch (const core::UsageError& e) {
    EXPECT_NE(e.cause().find("already holds a bench"), std::string::npos);
  }
}

TEST_F(BenchRun, NoMarkersInAnyRoundIsTooFewRounds) {
  RecordingProgress progress;
  const BenchResult r = run_bench(options("sleep 0.1", 2), *nvml_, progress);
  EXPECT_TRUE(r.gpus[0].kept.empty());
  EXPECT_EQ(too_few_rounds(r), "GPU 0 kept 0 of 2 rounds, and the statistics need at least 2");
}

// A round whose command prints its window afterwards (docs/method.md#a-window-printed-afterwards)
// has a window like one with markers, and is kept.
TEST_F(BenchRun, RoundsWithAPrintedWindowAreKept) {
  RecordingProgress progress;
  const BenchResult r = run_bench(
      options(
          "s=$(date +%s.%N); sleep 0.3; e=$(date +%s.%N); sleep 0.1; echo \"diescope: measure window $s $e\"",
          2),
      *nvml_, progress);
  EXPECT_EQ(r.gpus[0].kept, (std::vector<int>{1, 2}));
  EXPECT_EQ(too_few_rounds(r), "");
}

TEST_F(BenchRun, ACommandThatCannotRunStopsAtTheFirstRound) {
  RecordingProgress progress;
  BenchOptions o = options(kSteady);
  o.run.command = {"diescope-no-such-command-xyz"};
  try {
    run_bench(o, *nvml_, progress);
    FAIL() << "a missing command must throw";
  } catch (const core::Error& e) {
    EXPECT_EQ(e.exit_code(), 127);
  }
  EXPECT_EQ(progress.finished, std::vector<int>{1});
  EXPECT_FALSE(fs::exists(dir_ / "bench.json"));  // nothing was measured
}

TEST_F(BenchRun, AFailureInALaterRoundKeepsTheRoundsBeforeIt) {
  RecordingProgress progress;
  BenchOptions o = options(kSteady, 4);
  o.adjust_round = [](int round, collect::RunOptions& run) {
    if (round == 3) run.command = {"diescope-no-such-command-xyz"};
  };
  const BenchResult r = run_bench(o, *nvml_, progress);
  ASSERT_TRUE(r.failure.has_value());
  EXPECT_EQ(r.failure->exit_code, 127);
  EXPECT_EQ(r.failure->cause, "command not found: diescope-no-such-command-xyz");
  EXPECT_EQ(r.rounds.size(), 3u);
  const nlohmann::json j = nlohmann::json::parse(read_text(dir_ / "bench.json"));
  EXPECT_EQ(j["rounds_run"], 3);
  EXPECT_EQ(j["rounds"][2]["failure"], "command not found: diescope-no-such-command-xyz");
  EXPECT_EQ(j["gpus"][0]["kept_rounds"], nlohmann::json::array({1, 2}));
  EXPECT_EQ(j["stopped_because"], "round 3 could not run: command not found: diescope-no-such-command-xyz");
}

TEST_F(BenchRun, SigtermDuringARoundStopsTheBenchAfterIt) {
  RecordingProgress progress;
  BenchOptions o = options("echo 'diescope: measure start'; sleep 5; echo 'diescope: measure stop'", 5);
  std::thread killer([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
    ::kill(::getpid(), SIGTERM);
  });
  const BenchResult r = run_bench(o, *nvml_, progress);
  killer.join();
  EXPECT_TRUE(r.interrupted);
  ASSERT_EQ(r.rounds.size(), 1u);
  EXPECT_TRUE(r.rounds[0].interrupted);
  EXPECT_EQ(r.stopped_because, "interrupted during round 1");
  ASSERT_EQ(r.gpus[0].left_out.size(), 1u);
  EXPECT_EQ(r.gpus[0].left_out[0].reason.rfind("interrupted", 0), 0u);
  EXPECT_TRUE(fs::exists(dir_ / "bench.json"));
}

TEST_F(BenchRun, SigtermBetweenRoundsStopsBeforeTheNext) {
  RecordingProgress progress;
  BenchOptions o = options(kSteady, 5);
  // Raised while the bench's own handler is in place: the round about to start still runs.
  o.adjust_round = [](int round, collect::RunOptions&) {
    if (round == 2) ::raise(SIGTERM);
  };
  const BenchResult r = run_bench(o, *nvml_, progress);
  EXPECT_TRUE(r.interrupted);
  EXPECT_EQ(r.rounds.size(), 2u);
  EXPECT_EQ(r.stopped_because, "interrupted (signal 15) before round 3");
  EXPECT_EQ(r.gpus[0].kept, (std::vector<int>{1, 2}));
}

}  // namespace
}  // namespace diescope::rounds
