// report.html (self-contained, SVG timeline) and trace.json (Chrome trace events for Perfetto).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "diescope/analysis/analyze.hpp"
#include "diescope/core/error.hpp"
#include "diescope/recording/memory_recording.hpp"
#include "diescope/report/renderer.hpp"
#include "diescope/report/report.hpp"
#include "fixtures.hpp"

namespace diescope {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr recording::TimeNs kT0 = 1'000'000'000;
constexpr recording::TimeNs kMs = recording::kNsPerMs;

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A 40 ms run (T0 = 1 s): the counters start at T0, so sample [0, 10) ms is the setup and dropped;
// then FP32 reads 50, 100 and 20 over [10, 20), [20, 30) and [30, 40). NVML GPU-Util reads 100 at
// 20 ms (standing for the second before it) and 50 at 40 ms (for (20, 40]). Markers at 15 and 35 ms.
recording::MemoryRecording four_samples() {
  recording::MemoryRecording rec;
  recording::RecordingMeta& m = rec.meta_data;
  m.units = {test::column("fp32", "FP32", "sm__inst_executed_pipe_fma")};
  m.start_ns = kT0;
  m.gpu.index = 0;
  m.gpu.model = "NVIDIA H200";
  m.gpu.chip = "GH100";
  rec.side_records.counters = {recording::CountersEvent{kT0, true, ""}};
  rec.side_records.marks = {recording::Mark{kT0 + 15 * kMs, recording::MarkKind::start},
                            recording::Mark{kT0 + 35 * kMs, recording::MarkKind::stop}};
  rec.side_records.end = recording::RunEnd{kT0 + 40 * kMs, 0, recording::RunEnding::exit()};
  rec.side_records.last_ts_ns = kT0 + 40 * kMs;
  rec.list<recording::ChipSample>() = {
      recording::OwnedChipSample{kT0, kT0 + 10 * kMs, {0.69}, {}, {}},
      recording::OwnedChipSample{kT0 + 10 * kMs, kT0 + 20 * kMs, {50}, {}, {}},
      recording::OwnedChipSample{kT0 + 20 * kMs, kT0 + 30 * kMs, {100}, {}, {}},
      recording::OwnedChipSample{kT0 + 30 * kMs, kT0 + 40 * kMs, {20}, {}, {}}};
  rec.list<recording::UtilSample>() = {
      recording::UtilSample{kT0 + 20 * kMs, 100, recording::UtilSource::samples},
      recording::UtilSample{kT0 + 40 * kMs, 50, recording::UtilSource::samples}};
  return rec;
}

class HtmlAndTrace : public ::testing::Test {
 protected:
  // One folder per test: ctest runs each test in its own process, two at a time.
  fs::path dir = fs::path(DIESCOPE_BINARY_DIR) / "report-html-trace-test" /
                 ::testing::UnitTest::GetInstance()->current_test_info()->name();
  recording::MemoryRecording rec = four_samples();
  analysis::Analysis analysis;
  json report;
  void SetUp() override {
    fs::remove_all(dir);
    fs::create_directories(dir);
    analysis = analysis::analyze(rec);
    report = report::build_report(analysis, {"four.dsrec", rec.side_records.end});
    test::keep_report("four_samples", report);
  }
};

TEST_F(HtmlAndTrace, HtmlTimelineHasTheBinnedValues) {
  report::HtmlRenderer html(dir / "report.html", 4);
  EXPECT_TRUE(html.needs_recording());
  html.render(report::ReportInput{report, &rec, &analysis});
  std::string page = read(dir / "report.html");
  // Four bins of 10 ms over the plot's x from 50 to 990: edges at 50, 285, 520, 755, 990.
  // y = 290 - 2.8 x pct: 50% -> 150, 100% -> 10, 20% -> 234.
  // DIE-Util: nothing in bin 0 (the dropped setup sample), then 50, 100, 20.
  EXPECT_NE(page.find("<polyline class=\"die\" points=\"285.0,150.0 520.0,150.0 520.0,10.0 755.0,10.0 "
                      "755.0,234.0 990.0,234.0\"/>"),
            std::string::npos)
      << page;
  // GPU-Util: 100 over bins 0 and 1 (the second before 20 ms), 50 over bins 2 and 3; bins in a row
  // at one height make one segment.
  EXPECT_NE(page.find("<polyline class=\"gpu\" points=\"50.0,10.0 520.0,10.0 520.0,150.0 990.0,150.0\"/>"),
            std::string::npos);
  // The window [15, 35) ms: x from 50 + 940 x 0.375 = 402.5 to 50 + 940 x 0.875 = 872.5.
  EXPECT_NE(page.find("<rect class=\"window\" x=\"402.5\" y=\"10\" width=\"470.0\" height=\"280\"/>"),
            std::string::npos);
  // Ticks every 10 ms over 40 ms.
  EXPECT_NE(page.find(">0.04 s</text>"), std::string::npos);
  // The headline is on the page: used samples cover 30 of the run's 40 ms, 75%, so it is partial.
  EXPECT_NE(
      page.find("<pre>diescope: partial (counters covered 75% of the run): NVIDIA H200 (GH100, driver "),
      std::string::npos);
}

TEST_F(HtmlAndTrace, HtmlLineBreaksWhereThereIsNoValue) {
  rec.list<recording::ChipSample>()[2].units = {analysis::kNaN};  // [20, 30) ms is now broken and dropped
  analysis = analysis::analyze(rec);
  report = report::build_report(analysis);
  report::HtmlRenderer html(dir / "report.html", 4);
  html.render(report::ReportInput{report, &rec, &analysis});
  std::string page = read(dir / "report.html");
  // Bin 1 (50%) and bin 3 (20%) are separate lines: y 150 from x 285 to 520, y 234 from 755 to 990.
  EXPECT_NE(page.find("<polyline class=\"die\" points=\"285.0,150.0 520.0,150.0\"/>\n"
                      "<polyline class=\"die\" points=\"755.0,234.0 990.0,234.0\"/>"),
            std::string::npos);
}

TEST_F(HtmlAndTrace, HtmlIsSelfContained) {
  report::HtmlRenderer html(dir / "report.html");
  html.render(report::ReportInput{report, &rec, &analysis});
  std::string page = read(dir / "report.html");
  ASSERT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  for (const char* external : {"http:", "https:", "src=", "href=", "<link", "<script", "url(", "@import"})
    EXPECT_EQ(page.find(external), std::string::npos) << external;
  EXPECT_NE(page.find("<svg "), std::string::npos);
  EXPECT_NE(page.find("</html>\n"), std::string::npos);
}

TEST_F(HtmlAndTrace, HtmlEscapesText) {
  report["source"]["recording"] = "<b>&\"x\".dsrec";
  report::HtmlRenderer html(dir / "report.html");
  html.render(report::ReportInput{report, &rec, &analysis});
  std::string page = read(dir / "report.html");
  EXPECT_EQ(page.find("<b>&"), std::string::npos);
  EXPECT_NE(page.find("&lt;b&gt;&amp;&quot;x&quot;.dsrec"), std::string::npos);
}

TEST_F(HtmlAndTrace, TraceHasCounterTracksSlicesAndNotes) {
  report::TraceRenderer trace(dir / "trace.json");
  trace.render(report::ReportInput{report, &rec, &analysis});
  json t = json::parse(read(dir / "trace.json"));
  EXPECT_EQ(t["displayTimeUnit"], "ms");
  EXPECT_EQ(t["otherData"]["time_origin_ns"], kT0);
  std::map<std::string, std::vector<std::pair<double, double>>> counters;  // name -> (ts us, value)
  std::vector<json> slices, instants, meta;
  for (const json& e : t["traceEvents"]) {
    const std::string ph = e["ph"];
    if (ph == "C") counters[e["name"]].emplace_back(e["ts"].get<double>(), e["args"]["value"].get<double>());
    if (ph == "X") slices.push_back(e);
    if (ph == "i") instants.push_back(e);
    if (ph == "M") meta.push_back(e);
  }
  // Used samples start at 10, 20 and 30 ms = 10,000, 20,000 and 30,000 us after the run's start.
  using Points = std::vector<std::pair<double, double>>;
  EXPECT_EQ(counters["DIE-Util %"], (Points{{10000, 50}, {20000, 100}, {30000, 20}}));
  EXPECT_EQ(counters["unit FP32 %"], (Points{{10000, 50}, {20000, 100}, {30000, 20}}));
  // GPU-Util from where each NVML sample's time begins: 20 ms - 1 s = -980,000 us, then 20,000 us.
  EXPECT_EQ(counters["GPU-Util %"], (Points{{-980000, 100}, {20000, 50}}));
  EXPECT_EQ(counters.size(), 3u);
  // The dropped setup sample [0, 10) ms and the steady window [15, 35) ms as slices.
  ASSERT_EQ(slices.size(), 2u);
  EXPECT_EQ(slices[0]["name"], "dropped: first sample after the counters started: it spans their setup");
  EXPECT_EQ(slices[0]["ts"], 0.0);
  EXPECT_EQ(slices[0]["dur"], 10000.0);
  EXPECT_EQ(slices[1]["name"], "steady window");
  EXPECT_EQ(slices[1]["ts"], 15000.0);
  EXPECT_EQ(slices[1]["dur"], 20000.0);
  EXPECT_EQ(instants.size(), report["notes"].size());
  ASSERT_FALSE(meta.empty());
  EXPECT_EQ(meta[0]["args"]["name"], "GPU 0: NVIDIA H200 (GH100)");
}

TEST_F(HtmlAndTrace, BothNeedTheRecording) {
  report::HtmlRenderer html(dir / "report.html");
  report::TraceRenderer trace(dir / "trace.json");
  EXPECT_THROW(html.render(report::ReportInput{report}), core::UsageError);
  EXPECT_THROW(trace.render(report::ReportInput{report}), core::UsageError);
  EXPECT_FALSE(fs::exists(dir / "report.html"));
  EXPECT_FALSE(fs::exists(dir / "trace.json"));
}

}  // namespace
}  // namespace diescope
