// report.html (self-contained, SVG timeline) and trace.json (Chrome trace events for Perfetto).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "diescope/analysis/analyze.hpp"
#include "diescope/core/error.hpp"
#include "diescope/recording/memory_recording.hpp"
#include "diescope/recording/synthetic.hpp"
#include "diescope/report/renderer.hpp"
#include "diescope/report/report.hpp"
#include "fixtures.hpp"

namespace diescope {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

using test::kMs;
using test::kT0;

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

// How often `needle` occurs in `hay`.
std::size_t count(const std::string& hay, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + needle.size()))
    ++n;
  return n;
}

TEST_F(HtmlAndTrace, HtmlTimelineHasTheBinnedValues) {
  report::HtmlRenderer html(dir / "report.html", 4);
  EXPECT_TRUE(html.needs_recording());
  html.render(report::ReportInput{report, &rec, &analysis});
  std::string page = test::read_text(dir / "report.html");
  // Four bins of 10 ms; the plot is 1000 units wide, so bin edges at x = 0, 250, 500, 750, 1000. The
  // main chart is 200 high over 0..100%: y = 200 - 2 x pct, so 50% -> 100, 100% -> 0, 20% -> 160.
  // DIE-Util: nothing in bin 0 (the dropped setup sample), then 50, 100, 20, drawn in red.
  EXPECT_NE(page.find("<polyline stroke=\"#c0392b\" points=\"250.0,100.0 500.0,100.0 500.0,0.0 750.0,0.0 "
                      "750.0,160.0 1000.0,160.0\"/>"),
            std::string::npos)
      << page;
  // GPU-Util (blue): 100 over bins 0 and 1 (the second before 20 ms), 50 over bins 2 and 3; bins in a
  // row at one height make one segment.
  EXPECT_NE(page.find("<polyline stroke=\"#2471a3\" points=\"0.0,0.0 500.0,0.0 500.0,100.0 1000.0,100.0\"/>"),
            std::string::npos);
  // One value per bin: lowest and highest equal the mean, so no band.
  EXPECT_EQ(page.find("class=\"band\""), std::string::npos);
  // The window [15, 35) ms: x from 1000 x 0.375 = 375 to 1000 x 0.875 = 875, in every chart (the main
  // one 200 high, FP32's 70).
  EXPECT_NE(page.find("<rect class=\"window\" x=\"375.0\" y=\"0\" width=\"500.0\" height=\"200\"/>"),
            std::string::npos);
  EXPECT_NE(page.find("<rect class=\"window\" x=\"375.0\" y=\"0\" width=\"500.0\" height=\"70\"/>"),
            std::string::npos);
  // Ticks every 10 ms over 40 ms, at 0, 25, 50, 75 and 100% of the width.
  EXPECT_NE(page.find("<span style=\"left:100.00%\">0.04 s</span>"), std::string::npos);
  // Limiting unit per bin: FP32 (colour 0) in bins 1 to 3, in one stretch from x 250 to 1000.
  EXPECT_NE(page.find("<rect x=\"250.0\" y=\"0\" width=\"750.0\" height=\"10\" fill=\"#c0392b\"/>"),
            std::string::npos);
  // The hover data: bins, the step, and DIE-Util's means with null for the empty bin.
  EXPECT_NE(page.find("{\"bins\":4,\"step_s\":0.01,\"series\":{\"0\":{\"d\":1,\"u\":\"%\",\"p\":1,"
                      "\"m\":[null,50,100,20],\"n\":[null,50,100,20],\"x\":[null,50,100,20]}"),
            std::string::npos);
  EXPECT_NE(page.find("\"limiting\":[-1,0,0,0],\"limiting_labels\":[\"FP32\"]"), std::string::npos);
  // The headline: used samples cover 30 of the run's 40 ms, 75%, so the run is partial (the window,
  // whose figures the cards show, is covered), and the terminal text is on the page too.
  EXPECT_NE(page.find("<p class=\"partial\">whole run: partial (counters covered 75% of the run)"),
            std::string::npos);
  EXPECT_EQ(page.find("<p class=\"partial\">steady window"), std::string::npos);
  EXPECT_NE(
      page.find("<pre>diescope: partial (counters covered 75% of the run): NVIDIA H200 (GH100, driver "),
      std::string::npos);
}

TEST_F(HtmlAndTrace, HtmlHasTheCardsPanelsAndReadOuts) {
  report::HtmlRenderer html(dir / "report.html", 4);
  html.render(report::ReportInput{report, &rec, &analysis});
  std::string page = test::read_text(dir / "report.html");
  // The four headline cards, with the window's figures (it was found) and the run's under them.
  const json& wh = report["window"]["results"]["headline"];
  for (const char* id : {"gpu-util", "die-util", "gap", "limiting"})
    EXPECT_NE(page.find(std::string("<div class=\"card\" id=\"card-") + id + "\">"), std::string::npos) << id;
  EXPECT_NE(page.find(fmt::format("<div class=\"cvalue\">{:.1f}%</div>", wh["gpu_util_pct"].get<double>())),
            std::string::npos);
  EXPECT_NE(page.find(fmt::format("<div class=\"cvalue\">{:.1f}%</div>", wh["die_util_pct"].get<double>())),
            std::string::npos);
  EXPECT_NE(page.find(fmt::format("<div class=\"cvalue\">{:.1f} points</div>",
                                  wh["stranded_points"].get<double>())),
            std::string::npos);
  EXPECT_NE(page.find("<div class=\"cvalue\">FP32</div>"), std::string::npos);
  EXPECT_NE(page.find("<div class=\"crun\">run: "), std::string::npos);
  // The sections, in order.
  std::size_t at = 0;
  for (const char* h2 : {"<h2 id=\"run\">Over the run", "<h2 id=\"units\">Units",
                         "<h2 id=\"clocks\">Clocks, power and throttle reasons", "<h2 id=\"host\">Host",
                         "<h2 id=\"notes\">Notes", "<h2 id=\"terminal\">As the terminal prints it"}) {
    const std::size_t found = page.find(std::string(h2) + "</h2>", at);
    EXPECT_NE(found, std::string::npos) << h2;
    if (found != std::string::npos) at = found;
  }
  // A chart per unit (one here), and the main chart: each has a read-out filled under the pointer.
  EXPECT_EQ(count(page, "<div class=\"chart unit\">"), 1u);
  EXPECT_EQ(count(page, "<div class=\"chart main\">"), 1u);
  EXPECT_GE(count(page, "class=\"read\" data-s=\""), 3u);
  EXPECT_NE(page.find("addEventListener('mousemove'"), std::string::npos);
  EXPECT_NE(page.find("addEventListener('touchmove'"), std::string::npos);
  // This recording has no clocks, throttle readings or host streams, and says so.
  EXPECT_NE(page.find("The recording holds no clock readings."), std::string::npos);
  EXPECT_NE(page.find("No throttle reason held the clocks."), std::string::npos);
  EXPECT_NE(page.find("This recording holds no host streams"), std::string::npos);
  // Readable on a phone: the viewport is the device's.
  EXPECT_NE(page.find("<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"),
            std::string::npos);
}

TEST_F(HtmlAndTrace, HtmlLineBreaksWhereThereIsNoValue) {
  rec.list<recording::ChipSample>()[2].units = {analysis::kNaN};  // [20, 30) ms is now broken and dropped
  analysis = analysis::analyze(rec);
  report = report::build_report(analysis);
  report::HtmlRenderer html(dir / "report.html", 4);
  html.render(report::ReportInput{report, &rec, &analysis});
  std::string page = test::read_text(dir / "report.html");
  // Bin 1 (50%) and bin 3 (20%) are separate lines: y 100 from x 250 to 500, y 160 from 750 to 1000.
  EXPECT_NE(page.find("<polyline stroke=\"#c0392b\" points=\"250.0,100.0 500.0,100.0\"/>"
                      "<polyline stroke=\"#c0392b\" points=\"750.0,160.0 1000.0,160.0\"/>"),
            std::string::npos);
}

// docs/report.md#reporthtml: NVML's readings come once a drain, fewer than the bins: each is held
// until the next one (a step line), not drawn as a dash in its own bin with gaps between.
TEST_F(HtmlAndTrace, HtmlPolledReadingsAreStepLines) {
  // SM clock 1980 MHz at 5 ms (bin 0), 990 MHz at 35 ms (bin 3); nothing in bins 1 and 2. The chart's
  // top: 1980 x 1.05 = 2079 -> 2500 (the next of 1, 1.2, 1.5, 2, 2.5, ... x 10^n); 70 high:
  // 1980 -> 70 x (1 - 0.792) = 14.6, 990 -> 70 x (1 - 0.396) = 42.3.
  rec.list<recording::ClockReading>() = {recording::ClockReading{kT0 + 5 * kMs, 1980, 3201},
                                         recording::ClockReading{kT0 + 35 * kMs, 990, 3201}};
  analysis = analysis::analyze(rec);
  report = report::build_report(analysis);
  report::HtmlRenderer html(dir / "report.html", 4);
  html.render(report::ReportInput{report, &rec, &analysis});
  const std::string page = test::read_text(dir / "report.html");
  EXPECT_NE(page.find("points=\"0.0,14.6 750.0,14.6 750.0,42.3 1000.0,42.3\"/>"), std::string::npos) << page;
  EXPECT_EQ(page.find("points=\"0.0,14.6 250.0,14.6\"/>"), std::string::npos);
  // Half-way up the axis: 1250 MHz.
  EXPECT_NE(page.find("<span class=\"ymid\">1250 MHz</span>"), std::string::npos);
}

// docs/report.md#reporthtml: power itself beside its limit, both held as step lines. Draw 350 W at
// 5 ms (bin 0) and 700 W at 35 ms (bin 3), limit 700 W. The top: 700 x 1.05 = 735 -> 800; 70 high:
// 350 -> 70 x (1 - 350/800) = 39.375 -> 39.4, 700 -> 70 x (1 - 700/800) = 8.75 -> 8.8.
TEST_F(HtmlAndTrace, HtmlDrawsPowerItselfBesideItsLimit) {
  rec.list<recording::ClockReading>() = {recording::ClockReading{kT0 + 5 * kMs, 1980, 3201}};
  rec.list<recording::PowerLimitReading>() = {
      recording::PowerLimitReading{kT0 + 5 * kMs, 700, 350, 1e6},
      recording::PowerLimitReading{kT0 + 35 * kMs, 700, 700, 1e6 + 10500}};
  analysis = analysis::analyze(rec);
  report = report::build_report(analysis);
  report::HtmlRenderer html(dir / "report.html", 4);
  html.render(report::ReportInput{report, &rec, &analysis});
  const std::string page = test::read_text(dir / "report.html");
  EXPECT_NE(page.find("<span class=\"title\">power</span>"), std::string::npos) << page;
  EXPECT_NE(page.find("draw <b class=\"read\""), std::string::npos);
  EXPECT_NE(page.find("limit <b class=\"read\""), std::string::npos);
  EXPECT_NE(page.find("points=\"0.0,39.4 750.0,39.4 750.0,8.8 1000.0,8.8\"/>"), std::string::npos) << page;
  EXPECT_NE(page.find("points=\"0.0,8.8 1000.0,8.8\"/>"), std::string::npos);
  EXPECT_EQ(page.find("the recording holds no power draw"), std::string::npos);
  // The energy beside the cards: the window [15, 35) ms lies between the readings at 5 and 35 ms,
  // whose counter rose 10500 mJ in 30 ms; 20 ms of it hold 7000 mJ: 7.0 J at 7 J / 0.02 s = 350 W.
  EXPECT_NE(
      page.find("<div class=\"idle\" id=\"energy\"><span class=\"ctitle\">Energy</span> <b>7.0 J (NVML's "
                "energy counter), 350 W mean; 0.0 J stranded"),
      std::string::npos)
      << page;
  EXPECT_NE(page.find("<div class=\"cdetail\">whole run: "), std::string::npos);
  EXPECT_EQ(page.find("joules-per-tflop"), std::string::npos);  // no FLOPs in the recording

  // docs/energy.md#joules-per-tflop: the program's 1.4e12 FLOPs for the window: 7 J / 1.4 TFLOP = 5.
  rec.side_records.notes.push_back(recording::Note{kT0 + 36 * kMs, "flops", "1.4e+12 window"});
  analysis = analysis::analyze(rec);
  report = report::build_report(analysis);
  report::HtmlRenderer with_flops(dir / "flops.html", 4);
  with_flops.render(report::ReportInput{report, &rec, &analysis});
  const std::string flops_page = test::read_text(dir / "flops.html");
  EXPECT_NE(flops_page.find("<div class=\"cdetail\" id=\"joules-per-tflop\">5 J per TFLOP: 7.0 J over 1.4 "
                            "TFLOP (NVML's energy counter; FLOPs printed by the program)</div>"),
            std::string::npos)
      << flops_page;
  rec.side_records.notes.pop_back();

  // Without a draw (a recording before format 4): the limit alone, and the page says why.
  rec.list<recording::PowerLimitReading>() = {recording::PowerLimitReading{kT0 + 5 * kMs, 700}};
  analysis = analysis::analyze(rec);
  report = report::build_report(analysis);
  report::HtmlRenderer old(dir / "old.html", 4);
  old.render(report::ReportInput{report, &rec, &analysis});
  EXPECT_NE(test::read_text(dir / "old.html").find("the recording holds no power draw"), std::string::npos);
}

// docs/report.md#reporthtml: what a reader misread or could not find, each on the page.
TEST_F(HtmlAndTrace, HtmlSaysWhatEachChartCoversAndWhatToReadWithCare) {
  // A raw clock note (nanosecond counters) is left out of the notes list and counted.
  report["notes"].push_back(
      json{{"ts_ns", kT0},
           {"topic", "clock"},
           {"text", "cuptiGetTimestamp 1796134821715445367, CLOCK_REALTIME 1796134821715446235"}});
  report::HtmlRenderer html(dir / "report.html", 4);
  html.render(report::ReportInput{report, &rec, &analysis});
  const std::string page = test::read_text(dir / "report.html");
  // FP32's mean over the run: 10 ms each at 50, 100 and 20 = 56.7%; over the window [15, 35) ms:
  // 5 ms at 50, 10 at 100, 5 at 20 = 1350 / 20 = 67.5%.
  EXPECT_NE(page.find("mean of peak: whole run 56.7%, steady window 67.5%"), std::string::npos) << page;
  EXPECT_GE(count(page, "<span class=\"span\">whole run, steady window shaded</span>"), 2u);
  // Every small chart has its own time axis under its plot (the main one shares the strip's).
  EXPECT_NE(page.find("<div class=\"cursor\"></div></div>\n<div class=\"axis\">"), std::string::npos);
  // The y axis is labelled half-way: FP32's 0..100% has 50.0% between.
  EXPECT_NE(page.find("<span class=\"ymid\">50.0%</span>"), std::string::npos);
  // The caveats sit beside the cards, before the charts.
  const std::size_t caveats = page.find("<div class=\"caveats\" id=\"caveats\">");
  ASSERT_NE(caveats, std::string::npos);
  EXPECT_LT(caveats, page.find("<h2 id=\"run\">"));
  EXPECT_NE(page.find("<b>Calibration unvalidated</b>", caveats), std::string::npos);
  EXPECT_NE(page.find("<b>DIE-Util is experimental</b>", caveats), std::string::npos);
  // No raw timestamps in the notes list; the terminal block keeps its lines whole (wrapped, not cut).
  const std::size_t notes = page.find("<h2 id=\"notes\">"), terminal = page.find("<h2 id=\"terminal\">");
  ASSERT_NE(notes, std::string::npos);
  EXPECT_EQ(page.substr(notes, terminal - notes).find("1796134821715445367"), std::string::npos);
  EXPECT_NE(page.find("1 note of raw clock readings (nanosecond counters) left out here", notes),
            std::string::npos);
  EXPECT_NE(page.find("pre{background:#f0f0f0;padding:10px;font-size:12px;white-space:pre-wrap"),
            std::string::npos);
}

TEST_F(HtmlAndTrace, HtmlSaysFirstThatARecordingWasCutOff) {
  report::HtmlRenderer whole(dir / "whole.html", 4);
  whole.render(report::ReportInput{report, &rec, &analysis});
  EXPECT_EQ(test::read_text(dir / "whole.html").find("id=\"cut-off\""), std::string::npos);
  // The run spans 40 ms: 0.04 s.
  report["source"]["cut_off"] = true;
  report::HtmlRenderer html(dir / "report.html", 4);
  html.render(report::ReportInput{report, &rec, &analysis});
  const std::string page = test::read_text(dir / "report.html");
  const std::size_t cut =
      page.find("<p class=\"partial\" id=\"cut-off\">The recording was cut off at 0.04 s");
  ASSERT_NE(cut, std::string::npos) << page.substr(0, 3000);
  EXPECT_LT(cut, page.find("<div class=\"cards\">"));
}

TEST_F(HtmlAndTrace, HtmlStrandedBarHasALegend) {
  // Without the window the cards show the run: DIE-Util 56.7 used, active 10.0 and idle 33.3 (GPU-Util
  // 66.7 over the counter time: idle 100 - 66.7, active 66.7 - 56.7), each colour named with its points.
  report["window"]["found"] = false;
  report::HtmlRenderer html(dir / "report.html", 4);
  html.render(report::ReportInput{report, &rec, &analysis});
  const std::string page = test::read_text(dir / "report.html");
  EXPECT_NE(
      page.find("<div class=\"splitkeys\"><span><i style=\"background:#c0392b\"></i>used (DIE-Util) 56.7"
                "</span><span><i style=\"background:#e59866\"></i>active: a kernel ran 10.0</span><span><i "
                "style=\"background:#bfc9ca\"></i>idle: nothing ran 33.3</span></div>"),
      std::string::npos)
      << page.substr(page.find("card-gap"), 1200);
}

// Two samples in one bin: the band spans their lowest and highest values around the mean. One bin
// of 40 ms holds FP32 at 50 (10 ms), 100 (10 ms) and 20 (10 ms): mean 170 / 3 = 56.67, lowest 20,
// highest 100. In FP32's chart (70 high): y = 70 - 0.7 x pct: 100 -> 0, 20 -> 56, mean -> 30.3.
TEST_F(HtmlAndTrace, HtmlBandsSpanTheLowestAndHighestValueOfEachBin) {
  report::HtmlRenderer html(dir / "report.html", 1);
  html.render(report::ReportInput{report, &rec, &analysis});
  std::string page = test::read_text(dir / "report.html");
  EXPECT_NE(
      page.find(
          "<polygon class=\"band\" fill=\"#c0392b\" points=\"0.0,0.0 1000.0,0.0 1000.0,56.0 0.0,56.0\"/>"
          "<polyline stroke=\"#c0392b\" points=\"0.0,30.3 1000.0,30.3\"/>"),
      std::string::npos)
      << page;
}

TEST_F(HtmlAndTrace, HtmlIsSelfContained) {
  report::HtmlRenderer html(dir / "report.html");
  html.render(report::ReportInput{report, &rec, &analysis});
  std::string page = test::read_text(dir / "report.html");
  ASSERT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  // Nothing fetched: no URLs, no linked files; its scripts are inline (no src).
  for (const char* external :
       {"http:", "https:", "//cdn", "src=", "href=", "<link", "url(", "@import", "<img", "<iframe"})
    EXPECT_EQ(page.find(external), std::string::npos) << external;
  EXPECT_EQ(count(page, "<script"), 2u);  // the data block and the read-outs
  EXPECT_NE(page.find("<script type=\"application/json\" id=\"diescope-data\">"), std::string::npos);
  EXPECT_NE(page.find("<svg "), std::string::npos);
  EXPECT_NE(page.find("</html>\n"), std::string::npos);
}

TEST_F(HtmlAndTrace, HtmlEscapesText) {
  report["source"]["recording"] = "<b>&\"x\".dsrec";
  report["notes"] = json::array({json{{"ts_ns", kT0}, {"topic", "t"}, {"text", "</script><b>"}}});
  report::HtmlRenderer html(dir / "report.html");
  html.render(report::ReportInput{report, &rec, &analysis});
  std::string page = test::read_text(dir / "report.html");
  EXPECT_EQ(page.find("<b>&"), std::string::npos);
  EXPECT_NE(page.find("&lt;b&gt;&amp;&quot;x&quot;.dsrec"), std::string::npos);
  EXPECT_EQ(page.find("</script><b>"), std::string::npos);
}

// The page's size depends on the series, not the recording's length: a 15-minute recording of 10 ms
// samples (90,000) makes a page within 25% of a 1-minute one's, both far under 10 MB. (A 24-hour one:
// bench/report/html_trace_size.sh.)
TEST(HtmlAndTraceSize, BoundedWhateverTheRecordingsLength) {
  const fs::path dir = fs::path(DIESCOPE_BINARY_DIR) / "report-html-trace-test" / "size";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::map<std::string, std::uintmax_t> html_bytes, trace_bytes;
  for (double minutes : {1.0, 15.0}) {
    auto rec = recording::make_synthetic_recording(recording::long_run_spec(minutes / 60));
    analysis::Analysis a = analysis::analyze(*rec);
    json r = report::build_report(a);
    const std::string tag = fmt::format("{:g}", minutes);
    report::MultiRenderer both;
    both.add(std::make_unique<report::HtmlRenderer>(dir / (tag + ".html")));
    both.add(std::make_unique<report::TraceRenderer>(dir / (tag + ".json")));
    both.render(report::ReportInput{r, rec.get(), &a});
    html_bytes[tag] = fs::file_size(dir / (tag + ".html"));
    trace_bytes[tag] = fs::file_size(dir / (tag + ".json"));
    json t = json::parse(test::read_text(dir / (tag + ".json")));
    for (const json& e : t["traceEvents"])
      if (e.contains("ts")) {
        ASSERT_GE(e["ts"].get<double>(), 0.0) << e.dump();
      }
  }
  EXPECT_LT(html_bytes["15"], 10u << 20);
  EXPECT_LT(static_cast<double>(html_bytes["15"]), 1.25 * static_cast<double>(html_bytes["1"]));
  // The trace: at most 10,000 bins per track, so 15 minutes (90,000 samples) stays under 10,000 x
  // 20 tracks x 100 bytes = 20 MB; unbounded it would be about 90,000 x 13 x 80 bytes = 94 MB.
  EXPECT_LT(trace_bytes["15"], 20'000'000u);
}

TEST_F(HtmlAndTrace, TraceHasCounterTracksSlicesAndNotes) {
  report::TraceRenderer trace(dir / "trace.json");
  trace.render(report::ReportInput{report, &rec, &analysis});
  json t = json::parse(test::read_text(dir / "trace.json"));
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
  // The grid: 10 ms bins (the sampling interval) from the run's start. Used samples fill bins 1 to 3,
  // at 10,000, 20,000 and 30,000 us.
  using Points = std::vector<std::pair<double, double>>;
  EXPECT_EQ(counters["DIE-Util %"], (Points{{10000, 50}, {20000, 100}, {30000, 20}}));
  EXPECT_EQ(counters["unit FP32 %"], (Points{{10000, 50}, {20000, 100}, {30000, 20}}));
  // GPU-Util: 100 over bins 0 and 1 (the NVML sample at 20 ms stands for the second before it, cut at
  // the run's start), 50 over bins 2 and 3; a counter holds its value, so only the changes are written.
  EXPECT_EQ(counters["GPU-Util %"], (Points{{0, 100}, {20000, 50}}));
  EXPECT_EQ(counters.size(), 3u);
  // The dropped setup sample [0, 10) ms and the steady window [15, 35) ms as slices.
  ASSERT_EQ(slices.size(), 2u);
  EXPECT_EQ(slices[0]["name"], "dropped: first sample after the counters started: it spans their setup");
  EXPECT_EQ(slices[0]["ts"], 0.0);
  EXPECT_EQ(slices[0]["dur"], 10000.0);
  EXPECT_EQ(slices[0]["args"]["samples"], 1);
  EXPECT_EQ(slices[1]["name"], "steady window");
  EXPECT_EQ(slices[1]["ts"], 15000.0);
  EXPECT_EQ(slices[1]["dur"], 20000.0);
  EXPECT_EQ(instants.size(), report["notes"].size());
  ASSERT_FALSE(meta.empty());
  EXPECT_EQ(meta[0]["args"]["name"], "GPU 0: NVIDIA H200 (GH100)");
}

// Perfetto drops events before the trace's origin: what began before the run is drawn from its start.
// A setup sample from 5 ms before the run to 10 ms after it and a note 5 ms before it.
TEST_F(HtmlAndTrace, TraceHasNoNegativeTimestamps) {
  rec.list<recording::ChipSample>()[0].start_ns = kT0 - 5 * kMs;
  rec.side_records.notes = {recording::Note{kT0 - 5 * kMs, "sampler", "before the run"}};
  analysis = analysis::analyze(rec);
  report = report::build_report(analysis, {"four.dsrec", rec.side_records.end});
  report::TraceRenderer trace(dir / "trace.json");
  trace.render(report::ReportInput{report, &rec, &analysis});
  json t = json::parse(test::read_text(dir / "trace.json"));
  bool saw_note = false;
  for (const json& e : t["traceEvents"]) {
    if (!e.contains("ts")) continue;
    EXPECT_GE(e["ts"].get<double>(), 0.0) << e.dump();
    if (e["ph"] == "i" && e["args"]["text"] == "before the run") {
      saw_note = true;
      EXPECT_EQ(e["ts"], 0.0);
      EXPECT_EQ(e["args"]["ts_ns"], kT0 - 5 * kMs);  // its own time kept
    }
    if (e["ph"] == "X" && e["args"].contains("first_index")) {
      EXPECT_EQ(e["ts"], 0.0);
      EXPECT_EQ(e["dur"], 10000.0);
      EXPECT_EQ(e["args"]["start_ns"], kT0 - 5 * kMs);
    }
  }
  EXPECT_TRUE(saw_note);
}

// Dropped samples in a row with one reason make one slice: samples 1 and 2 broken the same way.
TEST_F(HtmlAndTrace, TraceMergesRunsOfDroppedSamples) {
  rec.list<recording::ChipSample>()[1].units = {analysis::kNaN};
  rec.list<recording::ChipSample>()[2].units = {analysis::kNaN};
  analysis = analysis::analyze(rec);
  report = report::build_report(analysis);
  report::TraceRenderer trace(dir / "trace.json");
  trace.render(report::ReportInput{report, &rec, &analysis});
  json t = json::parse(test::read_text(dir / "trace.json"));
  std::vector<json> dropped;
  for (const json& e : t["traceEvents"])
    if (e["ph"] == "X" && e["args"].contains("first_index")) dropped.push_back(e);
  ASSERT_EQ(dropped.size(), 2u);  // the setup sample, then [10, 30) ms
  EXPECT_EQ(dropped[1]["ts"], 10000.0);
  EXPECT_EQ(dropped[1]["dur"], 20000.0);
  EXPECT_EQ(dropped[1]["args"]["first_index"], 1);
  EXPECT_EQ(dropped[1]["args"]["samples"], 2);
}

// Host streams are drawn from their descriptors: the synthetic input-bound recording (8 CPUs, a main
// process and 4 data-loader workers) gets host panels in the page and host tracks in the trace.
TEST(HtmlAndTraceHost, HostPanelsAndTracksFromDescriptors) {
  const fs::path dir = fs::path(DIESCOPE_BINARY_DIR) / "report-html-trace-test" / "host";
  fs::remove_all(dir);
  fs::create_directories(dir);
  auto rec = recording::make_synthetic_recording(recording::input_bound_spec());
  analysis::Analysis a = analysis::analyze(*rec);
  json r = report::build_report(a);
  report::MultiRenderer both;
  both.add(std::make_unique<report::HtmlRenderer>(dir / "report.html"));
  both.add(std::make_unique<report::TraceRenderer>(dir / "trace.json"));
  both.render(report::ReportInput{r, rec.get(), &a});
  const std::string page = test::read_text(dir / "report.html");
  EXPECT_EQ(page.find("holds no host streams"), std::string::npos);
  EXPECT_GE(count(page, "<div class=\"chart host\">"), 4u);
  // CPU: system busy and iowait and 8 cores make 10 lines; 8 are drawn, the 2 with the lowest means
  // are counted.
  EXPECT_NE(
      page.find("<span class=\"title\">Host CPU (%)</span> <span class=\"sub\">the 8 with the highest means; "
                "2 more not drawn</span>"),
      std::string::npos);
  // Processes are named by their task records.
  EXPECT_NE(page.find("pt_data_worker (pid 1001)"), std::string::npos);
  json t = json::parse(test::read_text(dir / "trace.json"));
  std::set<std::string> host_tracks;
  bool host_group = false;
  for (const json& e : t["traceEvents"]) {
    if (e["ph"] == "M" && e["pid"] == 2 && e["args"]["name"] == "host") host_group = true;
    if (e["ph"] == "C" && e["pid"] == 2) host_tracks.insert(e["name"].get<std::string>());
    if (e.contains("ts")) {
      ASSERT_GE(e["ts"].get<double>(), 0.0);
    }
  }
  EXPECT_TRUE(host_group);
  EXPECT_TRUE(host_tracks.count("Process CPU · pt_data_worker (pid 1001) %")) << json(host_tracks).dump();
  // At most 8 tracks per panel: 8 of the 10 CPU lines.
  std::size_t cpu = 0;
  for (const std::string& name : host_tracks)
    cpu += name.rfind("CPU busy", 0) == 0 || name.rfind("CPU iowait", 0) == 0;
  EXPECT_LE(cpu, 8u);
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
