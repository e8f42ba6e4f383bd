// Renderers behind one interface, fanned out by MultiRenderer; files written atomically.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include "diescope/core/atomic_file.hpp"
#include "diescope/core/error.hpp"
#include "diescope/recording/memory_recording.hpp"
#include "diescope/recording/synthetic.hpp"
#include "diescope/report/recording_report.hpp"
#include "diescope/report/renderer.hpp"
#include "diescope/report/report.hpp"
#include "fixtures.hpp"
#include "timeline.hpp"

namespace diescope {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

class Renderers : public ::testing::Test {
 protected:
  // One folder per test: ctest runs each test in its own process, two at a time.
  fs::path dir = fs::path(DIESCOPE_BINARY_DIR) / "report-renderer-test" /
                 ::testing::UnitTest::GetInstance()->current_test_info()->name();
  void SetUp() override {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override { fs::permissions(dir, fs::perms::owner_all, fs::perm_options::add); }
};

// Records what it was asked to do, to check the multiplexer's order.
class Probe final : public report::Renderer {
 public:
  Probe(std::string name, bool needs, std::vector<std::string>& log)
      : name_(std::move(name)), needs_(needs), log_(log) {}
  std::string name() const override { return name_; }
  bool needs_recording() const override { return needs_; }
  void render(const report::ReportInput&) override { log_.push_back(name_); }

 private:
  std::string name_;
  bool needs_;
  std::vector<std::string>& log_;
};

TEST_F(Renderers, MultiRendererRunsEachInOrder) {
  std::vector<std::string> log;
  report::MultiRenderer multi;
  EXPECT_TRUE(multi.empty());
  multi.add(std::make_unique<Probe>("a", false, log));
  multi.add(std::make_unique<Probe>("b", true, log));
  multi.add(std::make_unique<Probe>("c", false, log));
  EXPECT_EQ(multi.name(), "a+b+c");
  EXPECT_TRUE(multi.needs_recording());
  json r = report::build_report(test::hopper_analysis());
  recording::MemoryRecording rec;
  multi.render(report::ReportInput{r, &rec, nullptr});
  EXPECT_EQ(log, (std::vector<std::string>{"a", "b", "c"}));
}

TEST_F(Renderers, WithoutARecordingNothingRunsWhenOneNeedsIt) {
  std::vector<std::string> log;
  report::MultiRenderer multi;
  multi.add(std::make_unique<Probe>("a", false, log));
  multi.add(std::make_unique<Probe>("csv", true, log));
  json r = report::build_report(test::hopper_analysis());
  try {
    multi.render(report::ReportInput{r});
    FAIL() << "expected a UsageError";
  } catch (const core::UsageError& e) {
    EXPECT_NE(e.cause().find("csv"), std::string::npos);
    EXPECT_FALSE(e.fix().empty());
  }
  EXPECT_TRUE(log.empty());  // checked before anything was written
}

TEST_F(Renderers, JsonRendererWritesTheReportAtomically) {
  json r = report::build_report(test::hopper_analysis_with_window());
  report::JsonRenderer renderer(dir / "report.json");
  renderer.render(report::ReportInput{r});
  EXPECT_EQ(test::read_text(dir / "report.json"), report::dump_report(r));
  // Nothing but the report is left in the folder (no temporary).
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, 1u);
  // Kept for the schema test: exactly the bytes a user gets.
  fs::copy_file(dir / "report.json", test::test_reports_dir() / "json_renderer.json",
                fs::copy_options::overwrite_existing);
}

TEST_F(Renderers, AnUnwritableFolderIsAnErrorThatNamesTheFile) {
  if (::geteuid() == 0)
    GTEST_SKIP() << "root writes into read-only folders; this check needs an ordinary user";
  fs::permissions(dir, fs::perms::owner_read | fs::perms::owner_exec);
  json r = report::build_report(test::hopper_analysis());
  report::JsonRenderer renderer(dir / "report.json");
  try {
    renderer.render(report::ReportInput{r});
    FAIL() << "expected an Error";
  } catch (const core::Error& e) {
    EXPECT_NE(e.cause().find((dir / "report.json").string()), std::string::npos);
  }
}

TEST_F(Renderers, AFailedWriteLeavesTheOldFileWhole) {
  // The destination is a folder that cannot be replaced by a file: the rename fails, and the
  // temporary is removed.
  fs::create_directories(dir / "report.json" / "inside");
  json r = report::build_report(test::hopper_analysis());
  report::JsonRenderer renderer(dir / "report.json");
  EXPECT_THROW(renderer.render(report::ReportInput{r}), core::Error);
  EXPECT_TRUE(fs::is_directory(dir / "report.json" / "inside"));
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++entries;
  EXPECT_EQ(entries, 1u);
}

TEST_F(Renderers, CsvRendererStreamsTheRecording) {
  recording::MemoryRecording rec;
  rec.meta_data.units = {test::column("fp32", "FP32", "x")};
  rec.list<recording::ChipSample>() = {recording::OwnedChipSample{0, 10, {5}, {}, {}},
                                       recording::OwnedChipSample{10, 20, {7}, {}, {}}};
  json r = report::build_report(test::hopper_analysis());
  report::CsvRenderer csv(dir / "samples.csv");
  EXPECT_TRUE(csv.needs_recording());
  csv.render(report::ReportInput{r, &rec, nullptr});
  // 10 ns samples: 1e-05 ms each. No counters events, so the first is the setup.
  EXPECT_EQ(
      test::read_text(dir / "samples.csv"),
      "index,start_ns,end_ns,duration_ms,unit.fp32,die_util_pct,use,drop_reason,window_share\n"
      "0,0,10,1e-05,5,5,dropped_first,first sample after the counters started: it spans their setup,NaN\n"
      "1,10,20,1e-05,7,7,used,,NaN\n");
  EXPECT_THROW(csv.render(report::ReportInput{r}), core::UsageError);
}

// A MemoryRecording that counts the passes over its chip samples.
class CountingRecording final : public recording::Recording {
 public:
  recording::MemoryRecording inner;
  mutable int passes = 0;
  const recording::RecordingMeta& meta() const override { return inner.meta(); }
  const recording::SideRecords& side() const override { return inner.side(); }
  AnyStream open_stream(StreamTag kind) const override {
    if (std::holds_alternative<std::type_identity<recording::ChipSample>>(kind)) ++passes;
    return open_with(kind,
                     [this]<typename Record>(std::type_identity<Record>) { return inner.stream<Record>(); });
  }
  std::string name() const override { return inner.name(); }
};

TEST_F(Renderers, SampleRenderersShareOneWalkAndWriteWhatEachWritesAlone) {
  CountingRecording rec;
  rec.inner.meta_data.units = {test::column("fp32", "FP32", "x")};
  for (recording::TimeNs t = 0; t < 100; t += 10)
    rec.inner.list<recording::ChipSample>().push_back(
        recording::OwnedChipSample{t, t + 10, {double(t)}, {}, {}});
  json r = report::build_report(test::hopper_analysis());

  const fs::path alone = dir / "alone", shared = dir / "shared";
  fs::create_directories(alone);
  fs::create_directories(shared);
  report::CsvRenderer(alone / "samples.csv").render(report::ReportInput{r, &rec, nullptr});
  report::HtmlRenderer(alone / "report.html").render(report::ReportInput{r, &rec, nullptr});
  report::TraceRenderer(alone / "trace.json").render(report::ReportInput{r, &rec, nullptr});
  EXPECT_EQ(rec.passes, 3);  // one walk each

  rec.passes = 0;
  report::MultiRenderer multi;
  multi.add(std::make_unique<report::CsvRenderer>(shared / "samples.csv"));
  multi.add(std::make_unique<report::HtmlRenderer>(shared / "report.html"));
  multi.add(std::make_unique<report::TraceRenderer>(shared / "trace.json"));
  multi.render(report::ReportInput{r, &rec, nullptr});
  EXPECT_EQ(rec.passes, 1);
  for (const char* name : {"samples.csv", "report.html", "trace.json"}) {
    EXPECT_FALSE(test::read_text(shared / name).empty()) << name;
    EXPECT_EQ(test::read_text(shared / name), test::read_text(alone / name)) << name;
  }
}

TEST_F(Renderers, OnePassWritesWhatAnalysisThenRenderWrite) {
  // The long synthetic run (every output's columns, a steady window, drops) for 0.05 h: the outputs
  // fed from the analysis's own pass must equal, byte for byte, those of an analysis followed by a
  // walk of their own (docs/report.md#one-pass).
  const fs::path recording = dir / "long.dsrec";
  recording::write_synthetic_recording(recording, recording::long_run_spec(0.05));
  auto renderers_into = [](const fs::path& folder, std::ostream& headline) {
    fs::create_directories(folder);
    auto multi = std::make_unique<report::MultiRenderer>();
    multi->add(std::make_unique<report::TerminalRenderer>(headline));
    multi->add(std::make_unique<report::JsonRenderer>(folder / "report.json"));
    multi->add(std::make_unique<report::CsvRenderer>(folder / "samples.csv"));
    multi->add(std::make_unique<report::HtmlRenderer>(folder / "report.html"));
    multi->add(std::make_unique<report::TraceRenderer>(folder / "trace.json"));
    return multi;
  };
  std::ostringstream two_passes_headline, one_pass_headline;
  const report::RecordingReport analysed =
      report::analyse_recording(recording, analysis::WindowMode::markers);
  renderers_into(dir / "two-passes", two_passes_headline)
      ->render(report::ReportInput{analysed.report, analysed.source.get(), &analysed.analysis});
  const auto one_pass = renderers_into(dir / "one-pass", one_pass_headline);
  const report::RecordingReport again =
      report::analyse_and_render(recording, analysis::WindowMode::markers, {}, *one_pass);
  EXPECT_EQ(again.report, analysed.report);
  EXPECT_FALSE(one_pass_headline.str().empty());
  EXPECT_EQ(one_pass_headline.str(), two_passes_headline.str());
  for (const char* name : {"report.json", "samples.csv", "report.html", "trace.json"}) {
    EXPECT_FALSE(test::read_text(dir / "one-pass" / name).empty()) << name;
    EXPECT_EQ(test::read_text(dir / "one-pass" / name), test::read_text(dir / "two-passes" / name)) << name;
  }
}

TEST_F(Renderers, HtmlAndTraceSharingOneTimelineWriteWhatEachWritesAlone) {
  // report.html and trace.json fed from one timeline (one read of GPU-Util, clocks, power and
  // throttle reasons, each on its own grid; docs/report.md#one-pass) write, byte for byte, what each
  // writes from a timeline of its own, with and without smoothing (the long synthetic run: every
  // stream, a steady window, drops); the shared timeline serves a second walk as the first.
  const fs::path recording = dir / "long-shared.dsrec";
  recording::write_synthetic_recording(recording, recording::long_run_spec(0.05));
  const report::RecordingReport analysed =
      report::analyse_recording(recording, analysis::WindowMode::markers);
  const report::ReportInput input{analysed.report, analysed.source.get(), &analysed.analysis};
  for (const double smooth_s : {0.0, 0.1}) {
    const fs::path alone = dir / ("alone-" + std::to_string(smooth_s));
    const fs::path shared = dir / ("shared-" + std::to_string(smooth_s));
    fs::create_directories(alone);
    fs::create_directories(shared);
    report::HtmlRenderer(alone / "report.html", 1000, smooth_s).render(input);
    report::TraceRenderer(alone / "trace.json", 10000, smooth_s).render(input);
    auto timeline = std::make_shared<report::detail::SharedTimeline>();
    report::MultiRenderer multi;
    multi.add(std::make_unique<report::HtmlRenderer>(shared / "report.html", 1000, smooth_s, timeline));
    multi.add(std::make_unique<report::TraceRenderer>(shared / "trace.json", 10000, smooth_s, timeline));
    for (int walk = 0; walk < 2; ++walk) {
      multi.render(input);
      for (const char* name : {"report.html", "trace.json"}) {
        EXPECT_FALSE(test::read_text(shared / name).empty()) << name;
        EXPECT_EQ(test::read_text(shared / name), test::read_text(alone / name))
            << name << " smooth " << smooth_s << " walk " << walk;
      }
    }
  }
}

TEST(AtomicFileWriter, NothingAppearsUntilCommit) {
  fs::path dir = fs::path(DIESCOPE_BINARY_DIR) / "report-atomic-test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  {
    std::ofstream(dir / "out.txt") << "old";
    core::AtomicFileWriter w(dir / "out.txt");
    w.write("new");
    EXPECT_EQ(test::read_text(dir / "out.txt"), "old");
  }  // dropped without commit: the old file stays, the temporary goes
  EXPECT_EQ(test::read_text(dir / "out.txt"), "old");
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++entries;
  EXPECT_EQ(entries, 1u);
  {
    core::AtomicFileWriter w(dir / "out.txt");
    std::string big(200'000, 'x');  // more than the writer's buffer
    w.write(big);
    w.write("y");
    w.commit();
  }
  EXPECT_EQ(test::read_text(dir / "out.txt"), std::string(200'000, 'x') + "y");
}

}  // namespace
}  // namespace diescope

namespace diescope {
namespace {

// docs/report.md#holders: run's report carries who held the GPU, and its headline a line naming them.
TEST(RunReport, HoldersInTheReportAndUnderTheHeadline) {
  const std::filesystem::path dir = std::filesystem::path(DIESCOPE_BINARY_DIR) / "run-report-holders-test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::filesystem::path rec = dir / "gpu0.dsrec";
  std::filesystem::copy_file(std::filesystem::path(DIESCOPE_SOURCE_DIR) / "data/recordings/h200/ffma66.dsrec",
                             rec);
  const nlohmann::json block = {
      {"entries",
       {{{"kind", "pod"},
         {"key", "pod/3b1f2a9c-5d4e-4f6a-8b7c-9d0e1f2a3b4c"},
         {"name", "pod ml/train-7 (container trainer)"},
         {"labels",
          {{"pod", "train-7"}, {"namespace", "ml"}, {"container", "trainer"}, {"team", "say \"hi\""}}},
         {"pids", {4711}},
         {"commands", {"python"}},
         {"notes", nlohmann::json::array()},
         {"gpu_instance_id", nullptr},
         {"gpu_instance_id_reason", "MIG is off on this GPU"},
         {"gpu_instance_profile", ""}}}},
      {"split_approximate", false},
      {"notes", nlohmann::json::array()}};
  std::ostringstream out;
  report::report_run_recording(rec, 0, analysis::WindowMode::none, false, {}, out,
                               report::RunHolders{block, "held by: pod ml/train-7 (container trainer)\n"});
  EXPECT_NE(out.str().find("\nheld by: pod ml/train-7 (container trainer)\nrecording "), std::string::npos)
      << out.str();
  const nlohmann::json written =
      nlohmann::json::parse(test::read_text(dir / "gpu0.dsrec.report/report.json"));
  EXPECT_EQ(written["holders"], block);
  // Without holders (report PATH, run --no-attribution) the report has none.
  std::ostringstream plain;
  report::report_run_recording(rec, 0, analysis::WindowMode::none, false, {}, plain);
  EXPECT_FALSE(
      nlohmann::json::parse(test::read_text(dir / "gpu0.dsrec.report/report.json")).contains("holders"));
  EXPECT_EQ(plain.str().find("held by"), std::string::npos);
  // Kept for the schema test.
  test::keep_report("run_with_holders", written);
}

}  // namespace
}  // namespace diescope
