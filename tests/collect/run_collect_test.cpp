// `diescope run`'s collector on the CPU: the fake sampler child stands in for CUPTI and a fake NVML
// table for the driver, so the whole loop runs (command, tee, markers, samples, crash, errors,
// signals) and its recording is read back with the real reader and analysed.
#include <gtest/gtest.h>

#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/resource.h>
#include <thread>

#include "diescope/analysis/analyze.hpp"
#include "diescope/collect/nvml.hpp"
#include "diescope/collect/run.hpp"
#include "diescope/collect/unit_tables.hpp"
#include "diescope/core/clock.hpp"
#include "diescope/core/error.hpp"
#include "diescope/recording/format.hpp"
#include "diescope/recording/reader.hpp"
#include "nvml_fake.hpp"

namespace diescope::collect {
namespace {

namespace fs = std::filesystem;

template <class Record>
int count_records(std::unique_ptr<recording::RecordStream<Record>> stream) {
  Record r{};
  int n = 0;
  while (stream->next(r)) ++n;
  return n;
}

class RunCollect : public ::testing::Test {
 protected:
  void SetUp() override {
    nvml_ = std::make_unique<Nvml>(fake_nvml::fake_functions());
    dir_ = fs::temp_directory_path() / ("diescope-run-test-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    out_path_ = dir_ / "stdout.txt";
    out_file_ = std::fopen(out_path_.c_str(), "w");
  }
  void TearDown() override {
    if (out_file_) std::fclose(out_file_);
    fs::remove_all(dir_);
  }

  RunOptions options(std::vector<std::string> command, std::vector<std::string> fake_args = {}) {
    RunOptions o;
    o.command = std::move(command);
    o.interval_ms = 5;
    o.drain_ms = 50;
    o.poll_ms = 20;
    o.end_wait_ms = 200;
    o.output_dir = dir_ / "rec";
    o.sampler_executable = DIESCOPE_SAMPLER_FAKE;
    o.sampler_leading_args = {};
    o.sampler_extra_args = std::move(fake_args);
    o.stdout_fd = ::fileno(out_file_);
    return o;
  }
  std::string teed() {
    std::fflush(out_file_);
    std::ifstream in(out_path_);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  static std::vector<recording::Note> notes_about(const recording::Recording& source,
                                                  const std::string& text) {
    std::vector<recording::Note> found;
    for (const auto& n : source.side().notes)
      if (n.text.find(text) != std::string::npos) found.push_back(n);
    return found;
  }

  std::unique_ptr<Nvml> nvml_;
  fs::path dir_, out_path_;
  std::FILE* out_file_ = nullptr;
};

TEST_F(RunCollect, OrdinaryRunRecordsSamplesMarksUtilAndTheEnd) {
  auto o = options(
      {"/bin/sh", "-c",
       "echo hello; echo 'diescope: measure start'; sleep 0.4; echo 'diescope: measure stop'; exit 3"});
  RunOutcome outcome = record_run(o, *nvml_);

  EXPECT_EQ(outcome.exit_code, 3);
  EXPECT_EQ(outcome.ending, recording::RunEnding::exit());
  EXPECT_FALSE(outcome.interrupted);
  EXPECT_EQ(teed(), "hello\ndiescope: measure start\ndiescope: measure stop\n");
  ASSERT_EQ(outcome.recordings.size(), 1u);
  const GpuRecording& rec = outcome.recordings[0];
  EXPECT_EQ(rec.path, dir_ / "rec" / "gpu0.dsrec");
  EXPECT_TRUE(rec.counters) << rec.counters_why;
  // 0.4 s at 5 ms is 80 samples while the command sleeps, plus the setup sample and the last drain.
  EXPECT_GE(rec.samples, 60);

  auto source = recording::open_recording(rec.path);
  const recording::RecordingMeta& meta = source->meta();
  EXPECT_EQ(meta.unit_table, "hopper-gh100");
  EXPECT_EQ(meta.gpu.chip, "GH100");
  EXPECT_EQ(meta.gpu.model, "NVIDIA H200");
  EXPECT_EQ(meta.command.size(), 3u);
  EXPECT_EQ(meta.start_ns, outcome.start_ns);
  EXPECT_EQ(meta.interval_ms, 5);

  const recording::SideRecords& side = source->side();
  ASSERT_EQ(side.marks.size(), 2u);
  EXPECT_EQ(side.marks[0].kind, recording::MarkKind::start);
  EXPECT_EQ(side.marks[1].kind, recording::MarkKind::stop);
  // The command sleeps 0.4 s between its markers; the marks are timed when the lines arrive.
  EXPECT_GE(side.marks[1].ts_ns - side.marks[0].ts_ns, 350 * recording::kNsPerMs);
  ASSERT_EQ(side.counters.size(), 2u);
  EXPECT_TRUE(side.counters[0].on);
  EXPECT_FALSE(side.counters[1].on);
  EXPECT_EQ(side.counters[1].reason, "");
  EXPECT_LE(side.counters[0].ts_ns, outcome.start_ns);  // sampling was on before the command started
  ASSERT_TRUE(side.end.has_value());
  EXPECT_EQ(side.end->exit_code, 3);
  EXPECT_EQ(side.end->ts_ns, outcome.end_ns);

  // Sample k of the fake reads 10*(j+1) + k%10 for metric j of table_metrics(); a unit that is one
  // counter therefore reads its metric's value, a mean of two reads their average.
  const UnitTable* table = unit_table_by_name("hopper-gh100");
  ASSERT_NE(table, nullptr);
  const auto metrics = table_metrics(*table);
  auto metric_value = [&](const std::string& name, long k) {
    auto at = std::find(metrics.begin(), metrics.end(), name) - metrics.begin();
    return 10.0 * double(at + 1) + double(k % 10);
  };
  auto chips = source->stream<recording::ChipSample>();
  recording::ChipSample sample;
  long k = 0;
  recording::TimeNs previous_end = 0;
  while (chips->next(sample)) {
    ASSERT_EQ(sample.units.size(), meta.units.size());
    for (std::size_t u = 0; u < meta.units.size(); ++u) {
      const auto& recipe = meta.units[u].recipe;
      double expected = recipe.combine == recording::UnitRecipe::Combine::mean
                            ? (metric_value(recipe.counters[0], k) + metric_value(recipe.counters[1], k)) / 2
                            : metric_value(recipe.counters[0], k);
      EXPECT_DOUBLE_EQ(sample.units[u], expected) << "sample " << k << " unit " << meta.units[u].key;
    }
    if (k > 0) {
      EXPECT_EQ(sample.start_ns, previous_end);
    }
    previous_end = sample.end_ns;
    ++k;
  }
  EXPECT_EQ(k, rec.samples);

  // The fake driver keeps no GPU-Util samples: the reader polls (97%) and says why in a note.
  auto util = source->stream<recording::UtilSample>();
  recording::UtilSample u;
  int polled = 0;
  while (util->next(u)) {
    EXPECT_EQ(u.pct, 97);
    EXPECT_EQ(u.source, recording::UtilSource::polled);
    ++polled;
  }
  EXPECT_GE(polled, 10);  // every 20 ms over 0.4 s
  bool util_note = false;
  for (const auto& n : side.notes) util_note = util_note || n.topic == "gpu_util";
  EXPECT_TRUE(util_note);
  auto clocks = source->stream<recording::ClockReading>();
  recording::ClockReading clock;
  ASSERT_TRUE(clocks->next(clock));
  EXPECT_EQ(clock.sm_mhz, 1980);

  // Read cadence (docs/live-collection.md#policies): clocks at every 20 ms poll while the command
  // runs (0.4 s: about 20), the slow reads (engines, processes) once a second, so once in this run,
  // plus one engine reading when the command ends. The power line (draw, energy counter, limit) at
  // the first poll, at each window mark and at the command's end, where the run's and the window's
  // energy start and end: 0.4 s holds no second read by the clock (3 reads where the first poll and
  // the start mark fall together, else 4).
  int clock_readings = 1;
  while (clocks->next(clock)) ++clock_readings;
  EXPECT_GE(clock_readings, 15);
  EXPECT_EQ(count_records(source->stream<recording::EngineReading>()), 2);
  EXPECT_EQ(count_records(source->stream<recording::ProcessReading>()), 1);
  std::vector<recording::TimeNs> power_ts;
  auto powers = source->stream<recording::PowerLimitReading>();
  recording::PowerLimitReading power{};
  while (powers->next(power)) power_ts.push_back(power.ts_ns);
  ASSERT_GE(power_ts.size(), 3u);
  EXPECT_LE(power_ts.size(), 4u);
  EXPECT_LT(power_ts.front() - outcome.start_ns, 100 * recording::kNsPerMs);
  for (const recording::TimeNs at : {side.marks[0].ts_ns, side.marks[1].ts_ns, outcome.end_ns})
    EXPECT_NE(std::find(power_ts.begin(), power_ts.end(), at), power_ts.end()) << at;

  // The analysis reads it end to end and finds the marked window.
  analysis::Analysis analysis = analysis::analyze(*source);
  EXPECT_TRUE(analysis.window.found) << static_cast<int>(analysis.window.finding);
  EXPECT_GT(analysis.run.samples_used, 0);
}

// docs/energy.md#what-is-recorded: over a 1.3 s command without marks, polled every 20 ms, the power line
// is read at the first poll, at the poll nearest to 1 s after it (at least 0.99 s after), and at the
// command's end: 3 reads where the clocks have about 65. With the energy counter failing, the draw
// stands in for it and every poll reads the power line, as many as the clocks.
TEST_F(RunCollect, ThePowerLineIsReadOnceASecondAndAtTheEnd) {
  for (const bool failing : {false, true}) {
    auto o = options({"/bin/sh", "-c", "sleep 1.3"});
    fake_nvml::state().energy_result =
        failing ? fake_nvml::abi::kErrorNotSupported : fake_nvml::abi::kSuccess;
    RunOutcome outcome = record_run(o, *nvml_);
    ASSERT_EQ(outcome.exit_code, 0);
    auto source = recording::open_recording(outcome.recordings[0].path);
    std::vector<recording::TimeNs> power_ts;
    auto powers = source->stream<recording::PowerLimitReading>();
    recording::PowerLimitReading power{};
    while (powers->next(power)) power_ts.push_back(power.ts_ns);
    const int clock_readings = count_records(source->stream<recording::ClockReading>());
    EXPECT_GE(clock_readings, 40) << failing;
    if (failing) {
      EXPECT_GE(static_cast<int>(power_ts.size()), clock_readings) << "a read after a failure each poll";
      continue;
    }
    ASSERT_EQ(power_ts.size(), 3u);
    EXPECT_LT(power_ts[0] - outcome.start_ns, 100 * recording::kNsPerMs);
    EXPECT_GE(power_ts[1] - power_ts[0], 990 * recording::kNsPerMs);
    EXPECT_LT(power_ts[1] - power_ts[0], 1100 * recording::kNsPerMs);
    EXPECT_EQ(power_ts[2], outcome.end_ns);
    fs::remove_all(dir_ / "rec");
  }
}

// docs/live-collection.md#policies: run reads NVML's GPU-Util samples every 5 s (the driver's buffer
// holds 14 s on the H200) and, after the command's end, at every tick until one at or after the end.
// The "driver" stamps a sample every 100 ms and a read sees those up to its own time. A 1.3 s
// command, polled every 20 ms, reads them once while it runs (at the first tick; reading every
// second made it 2), and the recording still holds every sample from 1 s before the start (NVML's
// longest averaging period) to one at or after the end, 100 ms apart, none missing: what a read
// every second gives.
TEST_F(RunCollect, GpuUtilSamplesAreReadEveryFiveSecondsAndNoneIsMissed) {
  auto& fake = fake_nvml::state();
  struct Restore {  // the fake is one per process: a later test in it polls GPU-Util again
    ~Restore() {
      fake_nvml::state().samples.clear();
      fake_nvml::state().samples_until_now = false;
    }
  } restore;
  const auto now_us = static_cast<unsigned long long>(core::realtime_ns() / 1000);
  for (unsigned long long ts = now_us - 3'000'000; ts < now_us + 30'000'000; ts += 100'000)
    fake.samples.push_back(fake_nvml::util_sample(ts, 40));
  fake.samples_until_now = true;
  auto o = options({"/bin/sh", "-c", "sleep 1.3"});
  o.end_wait_ms = 2000;
  RunOutcome outcome = record_run(o, *nvml_);
  ASSERT_EQ(outcome.exit_code, 0);
  long reads_while_running = 0;
  for (unsigned long long at : fake.sample_read_us)
    if (static_cast<recording::TimeNs>(at) * 1000 < outcome.end_ns) ++reads_while_running;
  EXPECT_EQ(reads_while_running, 1);

  auto source = recording::open_recording(outcome.recordings[0].path);
  std::vector<recording::TimeNs> util_ts;
  auto utils = source->stream<recording::UtilSample>();
  recording::UtilSample util{};
  while (utils->next(util)) util_ts.push_back(util.ts_ns);
  ASSERT_FALSE(util_ts.empty());
  EXPECT_GT(util_ts.front(), outcome.start_ns - recording::kNsPerSecond);
  EXPECT_LE(util_ts.front(), outcome.start_ns - recording::kNsPerSecond + 100 * recording::kNsPerMs);
  EXPECT_GE(util_ts.back(), outcome.end_ns);
  for (std::size_t i = 1; i < util_ts.size(); ++i)
    ASSERT_EQ(util_ts[i] - util_ts[i - 1], 100 * recording::kNsPerMs)
        << "sample " << i << " of " << util_ts.size();
}

TEST_F(RunCollect, SamplerCrashKeepsItsSamplesAndSaysWhyTheyStop) {
  auto o = options({"/bin/sh", "-c", "sleep 0.5"}, {"--crash-after", "5"});
  RunOutcome outcome = record_run(o, *nvml_);
  EXPECT_EQ(outcome.exit_code, 0);
  ASSERT_EQ(outcome.recordings.size(), 1u);
  EXPECT_EQ(outcome.recordings[0].samples, 5);
  EXPECT_NE(outcome.recordings[0].counters_why.find("killed by signal SIGSEGV"), std::string::npos);
  ASSERT_FALSE(outcome.warnings.empty());
  EXPECT_NE(outcome.warnings[0].find("SIGSEGV"), std::string::npos);

  auto source = recording::open_recording(outcome.recordings[0].path);
  auto notes = notes_about(*source, "killed by signal SIGSEGV");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].topic, "sampler");
  EXPECT_NE(notes[0].text.find("after 5 samples"), std::string::npos);
  const auto& counters = source->side().counters;
  ASSERT_EQ(counters.size(), 2u);
  EXPECT_FALSE(counters[1].on);
  EXPECT_NE(counters[1].reason.find("SIGSEGV"), std::string::npos);
  ASSERT_TRUE(source->side().end.has_value());
  // The 5 samples cover 25 ms of a 0.5 s run: the analysis marks the result partial.
  analysis::Analysis analysis = analysis::analyze(*source);
  EXPECT_TRUE(analysis.run.partial);
}

TEST_F(RunCollect, SamplesSplitByADecodeAreCountedAndLeftOut) {
  auto o = options({"/bin/sh", "-c", "sleep 0.3"}, {"--blank-each-drain"});
  RunOutcome outcome = record_run(o, *nvml_);
  auto source = recording::open_recording(outcome.recordings[0].path);
  // The fake blanks the first sample of every drain after the first: count them in the recording.
  long nan_samples = 0;
  auto chips = source->stream<recording::ChipSample>();
  recording::ChipSample sample;
  while (chips->next(sample)) nan_samples += std::isnan(sample.units[0]) ? 1 : 0;
  ASSERT_GT(nan_samples, 0);
  auto notes = notes_about(*source, "split between two decodes");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].text.substr(0, notes[0].text.find(' ')), std::to_string(nan_samples));
  analysis::Analysis analysis = analysis::analyze(*source);
  EXPECT_GE(analysis.run.dropped_broken, 1);
}

TEST_F(RunCollect, CountersHeldElsewhereLeaveAGpuUtilOnlyRunThatSaysWhy) {
  auto o = options({"/bin/sh", "-c", "sleep 0.2"}, {"--fail-with", "busy"});
  RunOutcome outcome = record_run(o, *nvml_);
  EXPECT_EQ(outcome.exit_code, 0);
  EXPECT_FALSE(outcome.recordings[0].counters);
  ASSERT_FALSE(outcome.warnings.empty());
  EXPECT_NE(outcome.warnings[0].find("held by another profiler"), std::string::npos);
  auto source = recording::open_recording(outcome.recordings[0].path);
  EXPECT_EQ(notes_about(*source, "held by another profiler").size(), 1u);
  recording::ChipSample sample;
  EXPECT_FALSE(source->stream<recording::ChipSample>()->next(sample));
  recording::UtilSample util;
  EXPECT_TRUE(source->stream<recording::UtilSample>()->next(util));  // GPU-Util is still recorded
}

TEST_F(RunCollect, SourceAutoReadsGpmWhenTheCountersAreHeldAndSaysWhy) {
  // docs/method.md#gpm-as-a-second-chip-source: auto is PM sampling, GPM when PM sampling cannot start.
  auto o =
      options({"/bin/sh", "-c", "echo 'diescope: measure start'; sleep 0.6; echo 'diescope: measure stop'"},
              {"--fail-with", "busy"});
  o.source = ChipSourceSetting::automatic;
  RunOutcome outcome = record_run(o, *nvml_);
  const GpuRecording& rec = outcome.recordings[0];
  EXPECT_TRUE(rec.counters);
  EXPECT_EQ(rec.chip_source, ChipSource::gpm);
  // 0.6 s at GPM's 100 ms (the 5 ms asked for is below GPM's shortest): about 6 samples, and the
  // last one ends with the command.
  EXPECT_GE(rec.samples, 4);
  EXPECT_LE(rec.samples, 9);
  ASSERT_EQ(outcome.warnings.size(), 1u);
  EXPECT_NE(
      outcome.warnings[0].find("GPU 0: chip samples come from NVML GPM every 100 ms (PM sampling could "
                               "not start: the performance counters of GPU 0 are held by another profiler"),
      std::string::npos)
      << outcome.warnings[0];
  EXPECT_NE(outcome.warnings[0].find("GPM does not see L1, L2 or load/store"), std::string::npos);

  auto source = recording::open_recording(rec.path);
  const recording::RecordingMeta& meta = source->meta();
  EXPECT_EQ(meta.unit_table, "gpm");
  EXPECT_EQ(meta.interval_ms, 100);
  ASSERT_EQ(meta.units.size(), 6u);
  EXPECT_EQ(meta.units[0].key, "fp32");
  EXPECT_EQ(meta.units[0].source, recording::UnitSource::gpm);
  EXPECT_EQ(meta.units[0].recipe.counters, (std::vector<std::string>{"NVML_GPM_METRIC_FP32_UTIL"}));
  // The fake answers no IMMA metric: that diagnostic is left out, and a note says so.
  for (const auto& d : meta.diagnostics) EXPECT_NE(d.key, "tensor_imma");
  EXPECT_EQ(notes_about(*source, "NVML_GPM_METRIC_IMMA_TENSOR_UTIL: NVML_ERROR_NOT_SUPPORTED").size(), 1u);
  EXPECT_EQ(notes_about(*source, "PM sampling could not start").size(), 1u);
  ASSERT_EQ(source->side().counters.size(), 2u);
  EXPECT_TRUE(source->side().counters[0].on);
  EXPECT_FALSE(source->side().counters[1].on);

  recording::ChipSample sample;
  auto chips = source->stream<recording::ChipSample>();
  recording::TimeNs last_end = 0;
  while (chips->next(sample)) {
    EXPECT_DOUBLE_EQ(sample.units[0], 46.3);  // the fake's FP32_UTIL
    EXPECT_DOUBLE_EQ(sample.units[5], 4);     // DRAM_BW_UTIL
    last_end = sample.end_ns;
  }
  EXPECT_EQ(last_end, outcome.end_ns);
  const analysis::Analysis a = analysis::analyze(*source);
  EXPECT_NEAR(a.run.die_util_pct, 46.3, 1e-9);
  EXPECT_EQ(a.run.limiting_unit, "fp32");
}

TEST_F(RunCollect, SourcePmStaysGpuUtilOnlyAndNamesTheWayToGpm) {
  auto o = options({"/bin/sh", "-c", "sleep 0.2"}, {"--fail-with", "busy"});
  o.source = ChipSourceSetting::pm;
  RunOutcome outcome = record_run(o, *nvml_);
  EXPECT_FALSE(outcome.recordings[0].counters);
  EXPECT_FALSE(outcome.recordings[0].chip_source.has_value());
  ASSERT_EQ(outcome.warnings.size(), 1u);
  EXPECT_NE(outcome.warnings[0].find("until then the report has GPU-Util only; or run with --source auto to "
                                     "read NVML GPM instead"),
            std::string::npos)
      << outcome.warnings[0];
  EXPECT_EQ(fake_nvml::state().gpm_samples_taken, 0) << "--source pm never touches GPM";
}

TEST_F(RunCollect, SourceAutoWithoutGpmIsGpuUtilOnlyWithBothReasons) {
  auto o = options({"/bin/sh", "-c", "sleep 0.2"}, {"--fail-with", "busy"});
  o.source = ChipSourceSetting::automatic;
  fake_nvml::state().gpm_supported = false;
  RunOutcome outcome = record_run(o, *nvml_);
  EXPECT_FALSE(outcome.recordings[0].counters);
  ASSERT_EQ(outcome.warnings.size(), 1u);
  EXPECT_NE(outcome.warnings[0].find("held by another profiler"), std::string::npos);
  EXPECT_NE(outcome.warnings[0].find("NVML GPM cannot stand in: NVML GPM cannot be read on GPU 0: NVML says "
                                     "this GPU has no GPM"),
            std::string::npos)
      << outcome.warnings[0];
  EXPECT_NE(outcome.warnings[0].find("the report has GPU-Util only"), std::string::npos);
  auto source = recording::open_recording(outcome.recordings[0].path);
  EXPECT_EQ(notes_about(*source, "NVML GPM cannot stand in").size(), 1u);
}

TEST_F(RunCollect, SourceAutoReadsGpmWhenTheCountersAreForbidden) {
  auto o = options({"/bin/sh", "-c", "sleep 0.3"}, {"--fail-with", "permission"});
  o.source = ChipSourceSetting::automatic;
  RunOutcome outcome = record_run(o, *nvml_);
  EXPECT_EQ(outcome.recordings[0].chip_source, ChipSource::gpm);
  ASSERT_EQ(outcome.warnings.size(), 1u);
  EXPECT_NE(
      outcome.warnings[0].find("PM sampling could not start: no permission for GPU performance counters"),
      std::string::npos)
      << outcome.warnings[0];
}

TEST_F(RunCollect, SourceGpmStartsNoSampler) {
  auto o = options({"/bin/sh", "-c", "sleep 0.3"});
  o.sampler_executable = "/nonexistent/diescope-cupti";
  o.source = ChipSourceSetting::gpm;
  RunOutcome outcome = record_run(o, *nvml_);
  EXPECT_EQ(outcome.recordings[0].chip_source, ChipSource::gpm);
  EXPECT_TRUE(outcome.warnings.empty()) << outcome.warnings[0];
  auto source = recording::open_recording(outcome.recordings[0].path);
  EXPECT_EQ(notes_about(*source, "chip samples come from NVML GPM every 100 ms (--source gpm)").size(), 1u);
  // No CUPTI sampler named the chip: the fake's compute capability 9.0 does (the Hopper table lists
  // one chip), so the headline reads "NVIDIA H200 (GH100, ...", not "(, driver".
  EXPECT_EQ(source->meta().gpu.chip, "GH100");
}

TEST_F(RunCollect, WithoutASamplerTheRecordingReachesTheDiskEverySecond) {
  // No sampler child, so no drain flushes the writer: the slow tick (1 s) does. The command copies
  // the recording 1.5 s after it starts, while the run goes on: the copy already holds the GPM and
  // NVML lines of the first second (clocks every 20 ms poll, so about 50 of them), not just the header.
  const fs::path seen = dir_ / "seen.dsrec";
  auto o = options(
      {"/bin/sh", "-c", "sleep 1.5; cp " + (dir_ / "rec" / "gpu0.dsrec").string() + " " + seen.string()});
  o.sampler_executable = "/nonexistent/diescope-cupti";
  o.source = ChipSourceSetting::gpm;
  RunOutcome outcome = record_run(o, *nvml_);
  ASSERT_EQ(outcome.exit_code, 0);
  std::ifstream in(seen);
  int clock_lines = 0;
  for (std::string line; std::getline(in, line);)
    if (line.rfind(std::string(recording::ClockReading::kKindWord) + " ", 0) == 0) ++clock_lines;
  EXPECT_GE(clock_lines, 25) << "the recording was not flushed while the command ran";
}

TEST_F(RunCollect, GpmOnAComputeCapabilityOfSeveralChipsLeavesTheChipUnnamed) {
  // Compute capability 12.0 is the Blackwell table, which lists five chips: none is guessed.
  fake_nvml::state().cc_major = 12;
  auto o = options({"/bin/sh", "-c", "sleep 0.2"});
  o.sampler_executable = "/nonexistent/diescope-cupti";
  o.source = ChipSourceSetting::gpm;
  RunOutcome outcome = record_run(o, *nvml_);
  auto source = recording::open_recording(outcome.recordings[0].path);
  EXPECT_EQ(source->meta().gpu.chip, "");
}

TEST_F(RunCollect, OtherProcessesOnTheListsAreRecordedByPidNameAndRole) {
  // docs/recording-format.md#gpu-holders: the fake's compute list holds another process (pid 1,
  // which is in no one's tree but its own) and this test's own process (diescope's role: the
  // collector runs in it).
  std::string init_name;
  std::getline(std::ifstream("/proc/1/comm"), init_name);
  ASSERT_FALSE(init_name.empty()) << "/proc/1/comm cannot be read here";
  const auto self = static_cast<unsigned>(::getpid());
  fake_nvml::state().compute_pids = {1u, self};
  auto o = options({"/bin/sh", "-c", "sleep 0.3"});
  o.sampler_executable = "/nonexistent/diescope-cupti";
  o.source = ChipSourceSetting::gpm;
  RunOutcome outcome = record_run(o, *nvml_);
  auto source = recording::open_recording(outcome.recordings[0].path);
  const auto& holders = source->side().holders;
  ASSERT_EQ(holders.size(), 2u);  // new pids ascending: 1, then this process
  EXPECT_EQ(holders[0].pid, 1);
  EXPECT_EQ(holders[0].role, recording::HolderRole::other);
  EXPECT_EQ(holders[0].name, init_name);
  EXPECT_EQ(holders[1].pid, static_cast<std::int64_t>(self));
  EXPECT_EQ(holders[1].role, recording::HolderRole::diescope);
  const analysis::Analysis a = analysis::analyze(*source);
  ASSERT_EQ(a.hygiene.other_processes.size(), 1u);
  EXPECT_EQ(a.hygiene.other_processes[0].pid, 1);
  EXPECT_EQ(a.hygiene.other_processes_max, 1);
}

TEST(ChipSourceNames, RoundTrip) {
  EXPECT_EQ(chip_source_setting_name(ChipSourceSetting::automatic), "auto");
  EXPECT_EQ(chip_source_setting_from_name("gpm"), ChipSourceSetting::gpm);
  EXPECT_EQ(chip_source_setting_from_name("pm"), ChipSourceSetting::pm);
  EXPECT_EQ(chip_source_setting_from_name("auto"), ChipSourceSetting::automatic);
  EXPECT_FALSE(chip_source_setting_from_name("cupti").has_value());
  // What a recording got is one of the two sources, named as the setting that asks for it.
  EXPECT_EQ(chip_source_name(ChipSource::pm), "pm");
  EXPECT_EQ(chip_source_name(ChipSource::gpm), "gpm");
}

TEST_F(RunCollect, NoPermissionStopsBeforeTheCommandRuns) {
  const fs::path touched = dir_ / "ran";
  auto o = options({"/usr/bin/touch", touched.string()}, {"--fail-with", "permission"});
  try {
    record_run(o, *nvml_);
    FAIL() << "no permission must stop the run";
  } catch (const core::DeviceError& e) {
    EXPECT_EQ(e.cause(), "no permission for GPU performance counters on GPU 0 (fake sampler asked to fail)");
    EXPECT_NE(e.fix().find("NVreg_RestrictProfilingToAdminUsers=0"), std::string::npos);
    EXPECT_EQ(e.exit_code(), core::kExitDevice);
  }
  EXPECT_FALSE(fs::exists(touched));
}

TEST_F(RunCollect, AFailingWriterLeavesNoCommandRunning) {
  // The recording outgrows a file-size limit mid-run, as it would a full disk: record_run throws,
  // and the measured command must be killed and reaped, not left running for 30 s.
  const fs::path pid_file = dir_ / "command.pid";
  auto o = options({"/bin/sh", "-c", "echo $$ > '" + pid_file.string() + "'; exec sleep 30"});
  struct sigaction ignore {
  }, previous_xfsz{};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGXFSZ, &ignore, &previous_xfsz);  // past the limit write() fails (EFBIG) instead
  rlimit previous_limit{};
  ::getrlimit(RLIMIT_FSIZE, &previous_limit);
  rlimit limit = previous_limit;
  limit.rlim_cur = 64 * 1024;  // the meta fits; a few seconds of 5 ms samples do not
  ::setrlimit(RLIMIT_FSIZE, &limit);
  const auto began = std::chrono::steady_clock::now();
  EXPECT_THROW(record_run(o, *nvml_), core::Error);
  ::setrlimit(RLIMIT_FSIZE, &previous_limit);
  ::sigaction(SIGXFSZ, &previous_xfsz, nullptr);
  EXPECT_LT(std::chrono::steady_clock::now() - began, std::chrono::seconds(20));

  std::ifstream in(pid_file);
  pid_t pid = -1;
  ASSERT_TRUE(in >> pid) << "the command never started";
  EXPECT_EQ(::kill(pid, 0), -1) << "the command still runs (or is an unreaped zombie)";
  EXPECT_EQ(errno, ESRCH);
}

TEST_F(RunCollect, CommandNotFoundIsExit127) {
  auto o = options({"diescope-no-such-command-xyz"});
  try {
    record_run(o, *nvml_);
    FAIL() << "a missing command must throw";
  } catch (const core::Error& e) {
    EXPECT_EQ(e.cause(), "command not found: diescope-no-such-command-xyz");
    EXPECT_EQ(e.exit_code(), 127);
  }
}

TEST_F(RunCollect, GpuIndexThatDoesNotExistIsAUsageError) {
  auto o = options({"/bin/true"});
  o.gpus = std::vector<int>{3};
  try {
    record_run(o, *nvml_);
    FAIL() << "GPU 3 does not exist on a one-GPU machine";
  } catch (const core::UsageError& e) {
    EXPECT_EQ(e.cause(), "--gpus names GPU 3, which does not exist: this machine has 1 GPU (index 0)");
  }
}

TEST_F(RunCollect, SigtermIsForwardedAndTheRecordingStillEnds) {
  auto o = options({"/bin/sleep", "5"});
  // Signal only once the run has opened its recording: its handler is installed by then.
  const fs::path recording = o.output_dir / "gpu0.dsrec";
  std::thread killer([recording] {
    for (int i = 0; i < 1000 && !fs::exists(recording); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    ::kill(::getpid(), SIGTERM);
  });
  RunOutcome outcome = record_run(o, *nvml_);
  killer.join();
  EXPECT_TRUE(outcome.interrupted);
  EXPECT_EQ(outcome.ending, recording::RunEnding::killed_by(SIGTERM));
  EXPECT_EQ(outcome.exit_code, 128 + SIGTERM);
  EXPECT_LT(outcome.end_ns - outcome.start_ns, 3 * recording::kNsPerSecond);  // it did not sleep its 5 s
  auto source = recording::open_recording(outcome.recordings[0].path);
  ASSERT_TRUE(source->side().end.has_value());
  EXPECT_EQ(source->side().end->ending, recording::RunEnding::killed_by(SIGTERM));
  EXPECT_EQ(run_ending_text(source->side().end->ending), "signal SIGTERM");  // as the end line reads
  EXPECT_EQ(notes_about(*source, "forwarded to the command").size(), 1u);
}

// A window the command prints once it knows it (docs/method.md#a-window-printed-afterwards): the
// marks sit at the printed times, not when the line arrived, and a note says so.
TEST_F(RunCollect, AWindowPrintedAfterwardsBecomesMarksAtItsTimes) {
  auto o = options({"/bin/sh", "-c",
                    "s=$(date +%s.%N); sleep 0.3; e=$(date +%s.%N); sleep 0.3; "
                    "echo \"diescope: measure window $s $e\""});
  RunOutcome outcome = record_run(o, *nvml_);
  ASSERT_EQ(outcome.exit_code, 0);
  EXPECT_TRUE(outcome.warnings.empty()) << outcome.warnings.front();
  // The times as printed, to the nanosecond: "S.NNNNNNNNN" is S * 1e9 + NNNNNNNNN.
  const std::string out = teed();
  std::istringstream words(out.substr(std::string("diescope: measure window ").size()));
  std::string s_text, e_text;
  words >> s_text >> e_text;
  auto ns_of = [](const std::string& t) {
    const auto dot = t.find('.');
    return std::stoll(t.substr(0, dot)) * recording::kNsPerSecond + std::stoll(t.substr(dot + 1));
  };
  auto source = recording::open_recording(outcome.recordings[0].path);
  const auto& marks = source->side().marks;
  ASSERT_EQ(marks.size(), 2u);
  EXPECT_EQ(marks[0].kind, recording::MarkKind::start);
  EXPECT_EQ(marks[0].ts_ns, ns_of(s_text));
  EXPECT_EQ(marks[1].kind, recording::MarkKind::stop);
  EXPECT_EQ(marks[1].ts_ns, ns_of(e_text));
  // The line came 0.3 s after the stop: a marker line would have been timed then.
  EXPECT_GE(outcome.end_ns - marks[1].ts_ns, 250 * recording::kNsPerMs);
  EXPECT_EQ(notes_about(*source, "the command printed its window").size(), 1u);

  analysis::AnalysisOptions with_window;
  with_window.window = analysis::WindowMode::markers;
  const analysis::Analysis a = analysis::analyze(*source, with_window);
  ASSERT_TRUE(a.window.found);
  EXPECT_EQ(a.window.finding, analysis::WindowFinding::markers);
  EXPECT_EQ(a.window.results.start_ns, marks[0].ts_ns);
  EXPECT_EQ(a.window.results.end_ns, marks[1].ts_ns);
}

TEST_F(RunCollect, AWindowPrintedAsItsLengthEndsWhenTheLineArrives) {
  auto o = options({"/bin/sh", "-c", "sleep 0.4; echo 'diescope: measure last 0.25'; sleep 0.2"});
  RunOutcome outcome = record_run(o, *nvml_);
  ASSERT_EQ(outcome.exit_code, 0);
  auto source = recording::open_recording(outcome.recordings[0].path);
  const auto& marks = source->side().marks;
  ASSERT_EQ(marks.size(), 2u);
  EXPECT_EQ(marks[1].ts_ns - marks[0].ts_ns, 250 * recording::kNsPerMs);  // exactly the printed 0.25 s
  // It ends when the line arrived: after the 0.4 s sleep, and about 0.2 s before the command ended.
  EXPECT_GE(marks[1].ts_ns - outcome.start_ns, 350 * recording::kNsPerMs);
  EXPECT_GE(outcome.end_ns - marks[1].ts_ns, 150 * recording::kNsPerMs);
}

TEST_F(RunCollect, AWindowLineThatCannotBeUsedIsANoteAndAWarning) {
  auto o = options({"/bin/sh", "-c",
                    "echo 'diescope: measure window 5 3'; echo 'diescope: measure window soon'; "
                    "echo \"diescope: measure window $(date +%s) $(( $(date +%s) + 100 ))\"; "
                    "echo 'diescope: measure last -1'"});
  RunOutcome outcome = record_run(o, *nvml_);
  ASSERT_EQ(outcome.exit_code, 0);
  auto source = recording::open_recording(outcome.recordings[0].path);
  EXPECT_TRUE(source->side().marks.empty());
  EXPECT_EQ(notes_about(*source, "was left out").size(), 4u);
  EXPECT_EQ(notes_about(*source, "its stop time is not after its start time").size(), 1u);
  EXPECT_EQ(notes_about(*source, "does not hold two times").size(), 1u);
  EXPECT_EQ(notes_about(*source, "after the line reached diescope").size(), 1u);
  EXPECT_EQ(notes_about(*source, "does not hold one length").size(), 1u);
  EXPECT_EQ(outcome.warnings.size(), 4u);
}

// docs/energy.md#telling-diescope-the-flops: the line becomes a flops note the analysis reads; a line
// that cannot be read is a note and a warning.
TEST_F(RunCollect, FlopsTheProgramPrintsBecomeAFlopsNote) {
  auto o = options({"/bin/sh", "-c",
                    "echo 'diescope: measure start'; sleep 0.2; echo 'diescope: measure stop'; "
                    "echo 'diescope: measure flops 2.5e13'; echo 'diescope: measure flops 4e13 run'; "
                    "echo 'diescope: measure flops -1'"});
  RunOutcome outcome = record_run(o, *nvml_);
  ASSERT_EQ(outcome.exit_code, 0);
  auto source = recording::open_recording(outcome.recordings[0].path);
  std::vector<std::string> texts;
  for (const auto& n : source->side().notes)
    if (n.topic == "flops") texts.push_back(n.text);
  EXPECT_EQ(texts, (std::vector<std::string>{"2.5e+13 window", "4e+13 run"}));
  EXPECT_EQ(notes_about(*source, "its FLOPs are not above 0").size(), 1u);
  ASSERT_EQ(outcome.warnings.size(), 1u);
  analysis::AnalysisOptions with_window;
  with_window.window = analysis::WindowMode::markers;
  const analysis::Analysis a = analysis::analyze(*source, with_window);
  ASSERT_TRUE(a.window.found);
  EXPECT_DOUBLE_EQ(a.window.results.energy.flops, 2.5e13);
  EXPECT_DOUBLE_EQ(a.run.energy.flops, 4e13);
}

// run --duty 300/600 (docs/method.md#duty-cycles-in-run): counters on for the first 300 ms of every
// 600 ms from the command's start. The command runs 1.6 s: periods start at 0, 0.6 and 1.2 s, so the
// counters come on three times (the first before the command) and go off at about 0.3, 0.9 and
// 1.5 s.
TEST_F(RunCollect, DutyCycleStopsAndRestartsTheCountersEachPeriod) {
  auto o = options({"/bin/sh", "-c", "sleep 1.6"});
  o.duty_on_ms = 300;
  o.duty_period_ms = 600;
  RunOutcome outcome = record_run(o, *nvml_);
  ASSERT_EQ(outcome.exit_code, 0);
  EXPECT_TRUE(outcome.warnings.empty()) << outcome.warnings.front();
  auto source = recording::open_recording(outcome.recordings[0].path);
  EXPECT_EQ(source->meta().duty_on_ms, 300);
  EXPECT_EQ(source->meta().duty_period_ms, 600);
  const auto& counters = source->side().counters;
  ASSERT_EQ(counters.size(), 6u);
  for (std::size_t i = 0; i < counters.size(); ++i) EXPECT_EQ(counters[i].on, i % 2 == 0) << i;
  const recording::TimeNs ms = recording::kNsPerMs;
  // Each edge comes at the loop's next wake-up after it is due (20 ms polls here, samples every 50 ms).
  for (int k = 0; k < 3; ++k) {
    const recording::TimeNs off = counters[2 * k + 1].ts_ns - outcome.start_ns;
    EXPECT_GE(off, (600 * k + 300) * ms) << k;
    EXPECT_LE(off, (600 * k + 300 + 150) * ms) << k;
    if (k > 0) {
      const recording::TimeNs on = counters[2 * k].ts_ns - outcome.start_ns;
      EXPECT_GE(on, 600 * k * ms) << k;
      EXPECT_LE(on, (600 * k + 150) * ms) << k;
    }
  }
  const analysis::Analysis a = analysis::analyze(*source);
  // Scheduled: the union of the on-to-off stretches inside the run, the first from the command's
  // start; each is up to 300 ms, less the new sampler's start-up (periods 1 and 2).
  double scheduled_s = 0;
  for (int k = 0; k < 3; ++k)
    scheduled_s +=
        static_cast<double>(counters[2 * k + 1].ts_ns - std::max(counters[2 * k].ts_ns, outcome.start_ns)) *
        1e-9;
  EXPECT_NEAR(a.run.chip_scheduled_s, scheduled_s, 1e-6);
  EXPECT_GT(a.run.chip_scheduled_s, 0.6);
  EXPECT_LT(a.run.chip_scheduled_s, 0.9 + 0.45);
  EXPECT_FALSE(a.run.partial) << a.run.chip_coverage_pct;  // the samples cover the scheduled time
  EXPECT_LT(a.run.chip_coverage_pct, 100.0);
}

TEST(RunMarkers, WholeLinesOnlyInAnySplit) {
  MarkerScanner scanner;
  std::vector<recording::MarkKind> seen;
  auto on = [&](recording::MarkKind k) { seen.push_back(k); };
  scanner.feed("noise\ndiescope: meas", on);
  scanner.feed("ure start\r\nxdiescope: measure stop\n", on);  // the second is not a whole line
  scanner.feed("diescope: measure stop", on);                  // not ended yet
  EXPECT_EQ(seen, std::vector<recording::MarkKind>{recording::MarkKind::start});
  scanner.feed("\n", on);
  EXPECT_EQ(seen, (std::vector<recording::MarkKind>{recording::MarkKind::start, recording::MarkKind::stop}));
  scanner.feed(std::string(1000, 'x') + "diescope: measure start\n", on);  // an overlong line is not a marker
  EXPECT_EQ(seen.size(), 2u);
}

TEST(RunMarkers, WindowLinesAreReadToTheNanosecond) {
  auto w = parse_printed_window("diescope: measure window 1796112000.25 1796112012.1234567891");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->error, "");
  EXPECT_EQ(w->form, PrintedWindow::Form::times);
  EXPECT_EQ(w->start_ns, 1'796'112'000'250'000'000);
  EXPECT_EQ(w->stop_ns, 1'796'112'012'123'456'789);  // the tenth decimal is dropped
  w = parse_printed_window("diescope: measure last 12");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->form, PrintedWindow::Form::last);
  EXPECT_EQ(w->length_ns, 12'000'000'000);
  EXPECT_FALSE(parse_printed_window("diescope: measure windows 1 2"));
  EXPECT_FALSE(parse_printed_window("diescope: measure lasting 1"));
  for (const char* bad :
       {"diescope: measure window", "diescope: measure window 1 2 3", "diescope: measure window 1. 2",
        "diescope: measure window -1 2", "diescope: measure window 1e9 2e9", "diescope: measure window 2 2",
        "diescope: measure last 0", "diescope: measure last"}) {
    w = parse_printed_window(bad);
    ASSERT_TRUE(w) << bad;
    EXPECT_NE(w->error, "") << bad;
  }
  MarkerScanner scanner;
  std::vector<recording::TimeNs> starts;
  scanner.feed(
      "x\ndiescope: measure window 1.5 ", [](recording::MarkKind) {},
      [&](const PrintedWindow& pw) { starts.push_back(pw.start_ns); });
  scanner.feed(
      "2.5\r\n", [](recording::MarkKind) {}, [&](const PrintedWindow& pw) { starts.push_back(pw.start_ns); });
  EXPECT_EQ(starts, std::vector<recording::TimeNs>{1'500'000'000});
}

TEST(RunMarkers, FlopsLinesAreReadInOnePlace) {
  auto f = parse_printed_flops("diescope: measure flops 2.2e13");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->error, "");
  EXPECT_DOUBLE_EQ(f->note.flops, 2.2e13);
  EXPECT_EQ(f->note.scope, recording::FlopsScope::window);
  f = parse_printed_flops("diescope: measure flops  1000   run");
  ASSERT_TRUE(f);
  EXPECT_DOUBLE_EQ(f->note.flops, 1000);
  EXPECT_EQ(f->note.scope, recording::FlopsScope::run);
  EXPECT_FALSE(parse_printed_flops("diescope: measure flopsy 1"));
  EXPECT_FALSE(parse_printed_flops("diescope: measure start"));
  for (const char* bad :
       {"diescope: measure flops", "diescope: measure flops 0", "diescope: measure flops -5",
        "diescope: measure flops 1e400", "diescope: measure flops nan", "diescope: measure flops 1x",
        "diescope: measure flops 1 step", "diescope: measure flops 1 run 2"}) {
    f = parse_printed_flops(bad);
    ASSERT_TRUE(f) << bad;
    EXPECT_NE(f->error, "") << bad;
  }
  // The note's text reads back as the same note (docs/recording-format.md#flops-notes).
  const recording::FlopsNote note{2.2e13, recording::FlopsScope::run};
  EXPECT_EQ(recording::flops_note_text(note), "2.2e+13 run");
  const auto back = recording::parse_flops_note(recording::flops_note_text(note));
  ASSERT_TRUE(back);
  EXPECT_DOUBLE_EQ(back->flops, 2.2e13);
  EXPECT_EQ(back->scope, recording::FlopsScope::run);
  for (const char* bad : {"2.2e13", "2.2e13 window ", "0 window", "x run", "1 step", "-1 run", "inf run"})
    EXPECT_FALSE(recording::parse_flops_note(bad)) << bad;
  std::vector<double> seen;
  MarkerScanner scanner;
  scanner.feed(
      "diescope: measure flops 3e1", [](recording::MarkKind) {}, {},
      [&](const PrintedFlops& pf) { seen.push_back(pf.note.flops); });
  scanner.feed(
      "2\n", [](recording::MarkKind) {}, {}, [&](const PrintedFlops& pf) { seen.push_back(pf.note.flops); });
  EXPECT_EQ(seen, std::vector<double>{3e12});
}

}  // namespace
}  // namespace diescope::collect
