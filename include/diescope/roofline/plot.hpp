// The roofline plot (docs/roofline.md#the-plot): a self-contained SVG, and an HTML page holding it
// and the table. Renderers only: they read rows and draw.
#pragma once

#include <string>
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
  std::string label;      // "fp32 66.1 TFLOP/s (calibration)"
  bool compute = true;    // flat when true
  bool measured = false;  // solid when measured, dashed for a counter peak
  double value = 0;       // FLOP/s or B/s
};
// The roofs drawn: for every precision with FLOPs in some row and every level with bytes, the
// measured ceiling and the counter peak (the median over the rows that have it).
std::vector<RoofLine> plot_roofs(const std::vector<Row>& rows);

std::string render_svg(const std::vector<Row>& rows, const PlotOptions& options);
std::string render_html(const std::vector<Row>& rows, const PlotOptions& options);

// "66.1 TFLOP/s", "4.45 TB/s": three significant digits with an SI prefix.
std::string si(double value, std::string_view unit);

}  // namespace diescope::roofline
