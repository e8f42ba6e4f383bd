// The plot on fixed tables: roofs with their values and sources, measured solid and counter peaks
// dashed, one point per row with FLOPs and DRAM bytes, a legend, and nothing fetched from a network.
#include <gtest/gtest.h>

#include <regex>

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
  for (const char* legend : {">ffma<", ">triad<", ">gemm<", "measured ceiling"})
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

// Every <text> of an SVG as the box it takes (docs/roofline.md#the-plot): x, y (baseline),
// text-anchor, font-size (11 unless given), and the y-axis title turned by -90 degrees about (x, y).
struct Text {
  std::string text;
  TextBox box;
};
std::vector<Text> svg_texts(const std::string& svg) {
  std::vector<Text> out;
  const std::regex element(R"re(<text ([^>]*)>([^<]*)</text>)re");
  const auto attr = [](const std::string& attrs, const std::string& name) -> std::optional<std::string> {
    std::smatch m;
    if (std::regex_search(attrs, m, std::regex(" ?" + name + R"re(="([^"]*)")re"))) return m[1].str();
    return std::nullopt;
  };
  for (std::sregex_iterator it(svg.begin(), svg.end(), element), end; it != end; ++it) {
    const std::string attrs = " " + (*it)[1].str();
    std::string text = (*it)[2].str();
    for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
             {"&amp;", "&"}, {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&#39;", "'"}})
      for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + 1))
        text.replace(at, from.size(), to);
    const double x = std::stod(attr(attrs, " x").value());
    const double y = std::stod(attr(attrs, " y").value());
    const double size = std::stod(attr(attrs, "font-size").value_or("11"));
    TextBox b = text_box(x, y, attr(attrs, "text-anchor").value_or("start"), size, text);
    if (attr(attrs, "transform")) {  // rotate(-90 x y): the box turned about the baseline's anchor
      b = TextBox{x - (y - b.y0), y - (b.x1 - x), x + (b.y1 - y), y + (x - b.x0)};
    }
    out.push_back({text, b});
  }
  return out;
}

std::string overlapping_texts(const std::string& svg) {
  const std::vector<Text> texts = svg_texts(svg);
  std::string found;
  for (std::size_t i = 0; i < texts.size(); ++i)
    for (std::size_t j = i + 1; j < texts.size(); ++j)
      if (texts[i].box.overlaps(texts[j].box))
        found += "'" + texts[i].text + "' and '" + texts[j].text + "'\n";
  return found;
}

TEST(Plot, TheOverlapCheckFindsTwoLabelsOnOnePlace) {
  // The check itself: fp16 and fp32 printed at one place (as they once were, reading "fp38") overlap;
  // two labels a line apart do not. 11 px text: "fp16" is 4 x 0.62 x 11 = 27.3 wide, 1.2 x 11 = 13.2 high.
  const std::string two =
      R"(<text x="100" y="50">fp16 66.5 TFLOP/s</text><text x="100" y="50">fp32 66.5 TFLOP/s</text>)";
  EXPECT_NE(overlapping_texts(two), "");
  const std::string apart = R"(<text x="100" y="50">fp16</text><text x="100" y="64">fp32</text>)";
  EXPECT_EQ(overlapping_texts(apart), "");
  const std::string beside = R"(<text x="100" y="50">fp16</text><text x="128" y="50">fp32</text>)";
  EXPECT_EQ(overlapping_texts(beside), "");
  const std::string touching = R"(<text x="100" y="50">fp16</text><text x="127" y="50">fp32</text>)";
  EXPECT_NE(overlapping_texts(touching), "");
  // The rotated y-axis title (a column 13.2 wide around x = 24) against a tick label at its side.
  const std::string rotated =
      R"~(<text x="24" y="300" text-anchor="middle" transform="rotate(-90 24 300)">performance</text>)~"
      R"(<text x="30" y="300" text-anchor="end">100 T</text>)";
  EXPECT_NE(overlapping_texts(rotated), "");
}

TEST(Plot, NoTwoTextsOverlapOnTheBundledPlots) {
  // docs/roofline.md#the-plot: every label (roofs, points, ticks, axis titles, legend) clear of the others.
  std::vector<std::vector<Row>> tables = {bundled_rows()};
  std::vector<Row> all;
  for (const auto& [file, name] :
       std::vector<std::pair<std::string, std::string>>{{"h200-ffma.raw.csv", "ffma"},
                                                        {"h200-triad.raw.csv", "triad"},
                                                        {"h200-gemm.raw.csv", "gemm"},
                                                        {"h200-dfma.raw.csv", "dfma"},
                                                        {"h200-resnet50.raw.csv", "resnet50"}}) {
    for (Row r : fixture_rows(file, name)) all.push_back(r);
  }
  all.resize(std::min<std::size_t>(all.size(), 40));
  tables.push_back(all);
  tables.push_back(fixture_rows("h200-resnet50.raw.csv", "resnet50"));
  for (const auto& rows : tables) {
    for (const ColorBy by : {ColorBy::executable, ColorBy::region}) {
      PlotOptions o;
      o.color_by = by;
      const std::string svg = render_svg(rows, o);
      EXPECT_EQ(overlapping_texts(svg), "") << rows.size() << " rows";
      for (const Text& t : svg_texts(svg))  // and inside the 1000 x 640 picture
        EXPECT_TRUE(t.box.x0 >= 0 && t.box.x1 <= 1000 && t.box.y0 >= 0 && t.box.y1 <= 640) << t.text;
      EXPECT_GT(svg_texts(svg).size(), 10u);
    }
  }
}

TEST(Plot, EqualRoofsAreOneRoofAndEachLevelHasItsOwnColour) {
  // Two precisions whose counter peaks read the same (three digits) are one roof naming both.
  // (Here fp16's peak per cycle is set to fp32's in every row: equal roofs, as unpacked halves give.)
  auto rows = bundled_rows();
  for (Row& r : rows)
    r.peak_flop_per_cycle[index(Precision::fp16)] = r.peak_flop_per_cycle[index(Precision::fp32)];
  Row half = rows[0];
  half.flop[index(Precision::fp32)] = 0;
  half.flop[index(Precision::fp16)] = rows[0].flop[index(Precision::fp32)];
  rows.push_back(half);
  std::vector<std::string> labels;
  for (const auto& r : plot_roofs(rows)) labels.push_back(r.label);
  std::size_t fp_counter = 0;
  for (const auto& l : labels) {
    if (l.find("(counter peak x clock)") != std::string::npos && l.rfind("fp", 0) == 0) {
      ++fp_counter;
      EXPECT_EQ(l.rfind("fp16, fp32 ", 0), 0u) << l;
    }
  }
  EXPECT_EQ(fp_counter, 1u);
  // dram, l2 and l1 roofs in three colours.
  const std::string svg = render_svg(rows, PlotOptions{});
  for (const char* colour : {"#8a3b12", "#1f6fb4", "#2a8a3a"})
    EXPECT_NE(svg.find(std::string("stroke=\"") + colour + "\""), std::string::npos) << colour;
}

TEST(Plot, TheTitleNamesTheGpu) {
  const auto rows = bundled_rows();
  PlotOptions o;
  o.title = "Roofline: 3 rows";
  EXPECT_EQ(plot_title(rows, o), "Roofline: 3 rows · NVIDIA H200");
  EXPECT_NE(render_svg(rows, o).find(">Roofline: 3 rows · NVIDIA H200</text>"), std::string::npos);
  EXPECT_NE(render_html(rows, o).find("<title>Roofline: 3 rows · NVIDIA H200</title>"), std::string::npos);
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
