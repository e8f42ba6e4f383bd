// The plot on fixed tables: roofs with their values and sources, measured solid and counter peaks
// dashed, one point per row with FLOPs and DRAM bytes, a legend, and nothing fetched from a network.
#include <gtest/gtest.h>

#include "diescope/roofline/ncu.hpp"
#include "diescope/roofline/plot.hpp"
#include "fixtures.hpp"

namespace diescope::roofline {
namespace {

using test::fixture_rows;
using test::read_file;

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

std::vector<Row> bundled_rows() {
  std::vector<Row> rows;
  for (const auto& [file, name] : std::vector<std::pair<std::string, std::string>>{
           {"h200-ffma.raw.csv", "ffma"}, {"h200-triad.raw.csv", "triad"}, {"h200-gemm.raw.csv", "gemm"}}) {
    const auto got = fixture_rows(file, name);
    rows.push_back(got.back());
  }
  const MeasuredCeilings c = ceilings_from_calibration_json(
      read_file(std::string(DIESCOPE_SOURCE_DIR) +
                "/bench/results/calibrate/2026-11-29-h200-wgmma/calibration-full.json"),
      "calibration-full.json");
  apply_ceilings(rows, c);
  return rows;
}

TEST(Plot, SiPrefixes) {
  EXPECT_EQ(si(4452551862360.51, "B/s"), "4.45 TB/s");
  EXPECT_EQ(si(66.1e12, "FLOP/s"), "66.1 TFLOP/s");
  EXPECT_EQ(si(0.5, "FLOP/B"), "500 mFLOP/B");
}

TEST(Plot, RoofsAreThePrecisionsAndLevelsInUseMeasuredAndCounted) {
  const auto rows = bundled_rows();
  const auto roofs = plot_roofs(rows);
  std::vector<std::string> labels;
  for (const auto& r : roofs) labels.push_back(r.label);
  // STREAM from the calibration file; the counter peak: 1504 B/cycle x the median DRAM clock of the
  // three rows (3,196,015,424.16; 3,199,357,982.46; 3,199,393,525.89 Hz) = 4.81 TB/s.
  EXPECT_NE(std::find(labels.begin(), labels.end(), "dram 4.45 TB/s (STREAM, diescope calibrate)"),
            labels.end());
  EXPECT_NE(std::find(labels.begin(), labels.end(), "dram 4.81 TB/s (counter peak x clock)"), labels.end());
  // fp32: 98.81% x 33,792 FLOP/cycle x 1979.9 MHz = 66.1 TFLOP/s measured; bf16 tensor 947.6 TFLOP/s.
  EXPECT_NE(std::find(labels.begin(), labels.end(), "fp32 66.1 TFLOP/s (diescope calibrate)"), labels.end());
  EXPECT_NE(std::find(labels.begin(), labels.end(), "tensor bf16 948 TFLOP/s (diescope calibrate)"),
            labels.end());
  // No fp64 or tf32 work in these rows: no roof for them. The L1 has no measured ceiling.
  for (const auto& l : labels) {
    EXPECT_EQ(l.find("fp64"), std::string::npos) << l;
    EXPECT_EQ(l.find("tf32"), std::string::npos) << l;
    EXPECT_FALSE(l.rfind("l1", 0) == 0 && l.find("calibrate") != std::string::npos) << l;
  }
}

TEST(Plot, SvgDrawsEveryPointAndRoofAndIsSelfContained) {
  const auto rows = bundled_rows();
  const std::string svg = render_svg(rows, PlotOptions{});
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_EQ(count(svg, "<circle class=\"pt\""), 3u);  // one point per row
  EXPECT_NE(svg.find("arithmetic intensity at DRAM [FLOP/B]"), std::string::npos);
  EXPECT_NE(svg.find("performance [FLOP/s]"), std::string::npos);
  const auto roofs = plot_roofs(rows);
  std::size_t dashed = 0;
  for (const auto& r : roofs) dashed += r.measured ? 0 : 1;
  // every counter-peak roof is dashed on the plot, plus its sample in the legend for bandwidths and
  // the legend's own dashed sample
  EXPECT_GE(count(svg, "stroke-dasharray"), dashed + 1);
  EXPECT_EQ(count(svg, "http"), 1u);  // the SVG namespace, nothing fetched
  for (const char* legend : {">ffma<", ">triad<", ">gemm<", "measured ceiling (diescope calibrate)"})
    EXPECT_NE(svg.find(legend), std::string::npos) << legend;
}

TEST(Plot, HtmlHoldsThePlotAndTheTable) {
  const auto rows = bundled_rows();
  PlotOptions o;
  o.color_by = ColorBy::region;
  const std::string html = render_html(rows, o);
  EXPECT_EQ(count(html, "<svg"), 1u);
  EXPECT_EQ(count(html, "<tr>"), 4u);  // header and three rows
  EXPECT_EQ(count(html, "<script"), 0u);
  EXPECT_EQ(count(html, "http"), 1u);
  EXPECT_NE(html.find(">(no region)<"), std::string::npos);
  EXPECT_NE(html.find("nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_NNT"), std::string::npos);
}

// docs/roofline.md#dram-bytes-and-the-cache-flush: each point's tooltip and table row say how its
// caches were; a page mixing two states says so above the table, as the command line does.
TEST(Plot, APageMixingCacheStatesSaysSo) {
  auto rows = bundled_rows();
  EXPECT_EQ(render_html(rows, PlotOptions{}).find("caches in different states"), std::string::npos);
  rows[0].caches = "flushed";
  rows[1].caches = "flushed";
  EXPECT_EQ(render_html(rows, PlotOptions{}).find("caches in different states"), std::string::npos);
  rows[2].profiler = Profiler::range;
  rows[2].caches = "program";
  const std::string html = render_html(rows, PlotOptions{});
  EXPECT_EQ(count(html, "<p class=warn>"), 1u);
  EXPECT_NE(html.find("2 row(s) (ncu) from caches flushed before every kernel (ncu's default); 1 row(s) "
                      "(range) from the caches the program left"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<td class=t>range</td><td class=t>program</td>"), std::string::npos);
  EXPECT_EQ(count(html, " | caches flushed</title>"), 2u);
  EXPECT_EQ(count(html, " | caches program</title>"), 1u);
}

TEST(Plot, ManyPointsAreDrawnUnlabelled) {
  std::vector<Row> rows;
  const Row base = fixture_rows("h200-triad.raw.csv", "triad")[0];
  for (int i = 0; i < 100; ++i) {
    Row r = base;
    r.launch = i;
    r.duration_s *= 1.0 + i / 100.0;
    rows.push_back(r);
  }
  const std::string svg = render_svg(rows, PlotOptions{});
  EXPECT_EQ(count(svg, "<circle class=\"pt\""), 100u);
  EXPECT_EQ(count(svg, "font-size=\"9\""), 0u);
}

}  // namespace
}  // namespace diescope::roofline
