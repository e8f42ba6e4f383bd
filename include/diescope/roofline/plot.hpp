// The roofline plot (docs/roofline.md#the-plot): a self-contained SVG, and an HTML page holding it
// and the table. Renderers only: they read rows and draw.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "diescope/roofline/table.hpp"

namespace diescope::roofline {

enum class ColorBy { executable, region };
ColorBy parse_color_by(std::string_view text);  // throws UsageError

struct PlotOptions {
  ColorBy color_by = ColorBy::executable;
  std::string title = "Roofline";
};

// One roof line of the plot: a compute ceiling (flat) or a bandwidth (slope 1).
struct RoofLine {
  std::string label;    // "fp32 66.1 TFLOP/s (calibration)", "fp16, fp32 66.5 TFLOP/s (counter peak x clock)"
  bool compute = true;  // flat when true
  bool measured = false;       // solid when measured, dashed for a counter peak
  double value = 0;            // FLOP/s or B/s
  std::optional<Level> level;  // a bandwidth's memory level (each has its own colour); none for compute
};
// The roofs drawn: for every precision with FLOPs in some row and every level with bytes, the
// measured ceiling and the counter peak (the median over the rows that have it). Roofs of one kind
// whose values read the same (three digits) are one roof naming them all: two labels on one line
// would print over each other.
std::vector<RoofLine> plot_roofs(const std::vector<Row>& rows);

// A text's box on the plot, in SVG user units, as the plot estimates it to keep labels apart
// (docs/roofline.md#the-plot): each character at most 0.62 of the font size wide (DejaVu Sans and
// Liberation Sans, the fonts a browser finds on Debian, average less), ascent 0.95 and descent 0.25
// of the size (DejaVu Sans's own are 0.93 and 0.24).
struct TextBox {
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  bool overlaps(const TextBox& o, double margin = 0) const {
    return x0 < o.x1 + margin && o.x0 < x1 + margin && y0 < o.y1 + margin && o.y0 < y1 + margin;
  }
};
inline constexpr double kCharWidthEm = 0.62;
// `anchor` is SVG's text-anchor: "start", "middle" or "end"; y is the baseline.
TextBox text_box(double x, double y, std::string_view anchor, double font_size, std::string_view text);

// The plot's title: options.title and the GPU (or GPUs) the rows were measured on.
std::string plot_title(const std::vector<Row>& rows, const PlotOptions& options);
std::string render_svg(const std::vector<Row>& rows, const PlotOptions& options);
std::string render_html(const std::vector<Row>& rows, const PlotOptions& options);

// "66.1 TFLOP/s", "4.45 TB/s": three significant digits with an SI prefix.
std::string si(double value, std::string_view unit);

}  // namespace diescope::roofline
