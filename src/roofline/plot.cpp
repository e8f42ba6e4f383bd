#include "diescope/core/printable.hpp"
#include "diescope/roofline/plot.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "diescope/core/error.hpp"
#include "internal.hpp"

namespace diescope::roofline {

namespace {

using detail::kNaN;
// Plot geometry, in SVG user units.
constexpr double kWidth = 1000, kHeight = 640;
constexpr double kLeft = 90, kRight = 760, kTop = 40, kBottom = 560;
// Above this many points, points are not labelled (labels would cover the plot).
constexpr std::size_t kMaxLabelledPoints = 40;
const char* const kPalette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};

std::string escape(std::string_view s) {
  return core::markup_escaped(s);
}

double median(std::vector<double> v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return !std::isfinite(x) || x <= 0; }), v.end());
  if (v.empty()) return kNaN;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

// A kernel name cut to its function name: "void ns::k<int>(float *)" -> "ns::k<int>", at most 60 characters.
std::string short_kernel(const std::string& k) {
  std::string s = k;
  if (s.rfind("void ", 0) == 0) s = s.substr(5);
  int depth = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '<') ++depth;
    if (s[i] == '>') --depth;
    if (s[i] == '(' && depth == 0) {
      s = s.substr(0, i);
      break;
    }
  }
  if (s.size() > 60) s = s.substr(0, 59) + "~";
  return s;
}

std::string point_label(const Row& r) {
  // A summed row stands for a whole region: its name says enough.
  if (!r.region.empty() && r.kernel.find(" kernels; most time: ") != std::string::npos) return r.region;
  if (!r.region.empty()) return r.region + ": " + short_kernel(r.kernel);
  return short_kernel(r.kernel);
}

struct Scale {
  double lo, hi, a, b;  // log10 range -> pixel range
  double operator()(double v) const { return a + (std::log10(v) - lo) / (hi - lo) * (b - a); }
};

// docs/roofline.md#the-plot: ncu's points are circles, the range profiler's squares, the sampled
// backend's diamonds. `attrs` goes into the element, `inner` inside it.
std::string marker(Profiler profiler, double x, double y, const char* fill, const std::string& attrs,
                   const std::string& inner) {
  switch (profiler) {
    case Profiler::ncu:
      return fmt::format(R"(<circle{} cx="{:.1f}" cy="{:.1f}" r="4.5" fill="{}">{}</circle>)", attrs, x, y,
                         fill, inner);
    case Profiler::range:
      return fmt::format(R"(<rect{} x="{:.1f}" y="{:.1f}" width="8" height="8" fill="{}">{}</rect>)", attrs,
                         x - 4, y - 4, fill, inner);
    case Profiler::sampled:
      break;
  }
  return fmt::format(
      R"(<polygon{} points="{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}" fill="{}">{}</polygon>)",
      attrs, x, y - 5.5, x + 5.5, y, x, y + 5.5, x - 5.5, y, fill, inner);
}

}  // namespace

ColorBy parse_color_by(std::string_view text) {
  if (text == "executable") return ColorBy::executable;
  if (text == "region") return ColorBy::region;
  throw core::UsageError("--color-by " + std::string(text) + " is not one of executable, region",
                         "give --color-by executable or --color-by region");
}

std::string si(double value, std::string_view unit) {
  if (!std::isfinite(value)) return "n/a";
  static const std::pair<double, const char*> kPrefixes[] = {{1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"},
                                                             {1e3, "k"},  {1, ""},     {1e-3, "m"}};
  for (const auto& [f, p] : kPrefixes) {
    if (std::fabs(value) >= f) return fmt::format("{:.3g} {}{}", value / f, p, unit);
  }
  return fmt::format("{:.3g} {}", value, unit);
}

std::vector<RoofLine> plot_roofs(const std::vector<Row>& rows) {
  // docs/roofline.md#the-plot
  struct Drawn {
    std::string names, value_text, source;
    bool compute, measured;
    double value;
    std::optional<Level> level;
  };
  std::vector<Drawn> roofs;
  // One roof per kind and value as printed: "fp16, fp32 66.5 TFLOP/s" rather than two labels on one line.
  const auto add = [&](const std::string& name, double value, const std::string& unit,
                       const std::string& source, bool compute, bool measured, std::optional<Level> level) {
    const std::string text = si(value, unit);
    for (Drawn& r : roofs) {
      if (r.compute == compute && r.measured == measured && r.value_text == text && r.source == source) {
        r.names += ", " + name;
        return;
      }
    }
    roofs.push_back({name, text, source, compute, measured, value, level});
  };
  for (Precision p : kAllPrecisions) {
    bool used = false;
    std::vector<double> counter, measured;
    for (const Row& r : rows) {
      if (std::isfinite(r.flop[index(p)]) && r.flop[index(p)] > 0) used = true;
      counter.push_back(counter_peak_flop_per_s(r, p));
      measured.push_back(r.measured_flop_per_s[index(p)]);
    }
    if (!used) continue;
    const std::string unit = std::string(precision_unit(p)) + "/s";
    const double m = median(measured), c = median(counter);
    if (std::isfinite(m)) add(std::string(precision_name(p)), m, unit, "diescope calibrate", true, true, {});
    if (std::isfinite(c))
      add(std::string(precision_name(p)), c, unit, "counter peak x clock", true, false, {});
  }
  for (Level l : kAllLevels) {
    bool used = false;
    std::vector<double> counter, measured;
    for (const Row& r : rows) {
      if (std::isfinite(r.bytes[index(l)]) && r.bytes[index(l)] > 0) used = true;
      counter.push_back(counter_peak_bytes_per_s(r, l));
      measured.push_back(r.measured_bytes_per_s[index(l)]);
    }
    if (!used) continue;
    const double m = median(measured), c = median(counter);
    const char* measured_source = l == Level::dram ? "STREAM, diescope calibrate" : "diescope calibrate";
    if (std::isfinite(m)) add(std::string(level_name(l)), m, "B/s", measured_source, false, true, l);
    if (std::isfinite(c)) add(std::string(level_name(l)), c, "B/s", "counter peak x clock", false, false, l);
  }
  std::vector<RoofLine> out;
  out.reserve(roofs.size());
  for (const Drawn& r : roofs)
    out.push_back({fmt::format("{} {} ({})", r.names, r.value_text, r.source), r.compute, r.measured, r.value,
                   r.level});
  return out;
}

TextBox text_box(double x, double y, std::string_view anchor, double font_size, std::string_view text) {
  std::size_t chars = 0;  // UTF-8 code points
  for (unsigned char c : text)
    if ((c & 0xC0) != 0x80) ++chars;
  const double w = kCharWidthEm * font_size * static_cast<double>(chars);
  const double x0 = anchor == "end" ? x - w : anchor == "middle" ? x - w / 2 : x;
  return TextBox{x0, y - 0.95 * font_size, x0 + w, y + 0.25 * font_size};
}

namespace {

// docs/roofline.md#the-plot: each memory level its own colour (measured solid, counter peak dashed).
const char* level_colour(std::optional<Level> l) {
  if (!l) return "#222";
  switch (*l) {
    case Level::dram:
      return "#8a3b12";
    case Level::l2:
      return "#1f6fb4";
    case Level::l1:
      return "#2a8a3a";
  }
  return "#222";
}

// The texts placed so far; a new one goes where it overlaps none (docs/roofline.md#the-plot).
class Placer {
 public:
  bool free(const TextBox& b) const {
    for (const TextBox& o : taken_)
      if (b.overlaps(o, 1)) return false;
    return true;
  }
  void take(const TextBox& b) { taken_.push_back(b); }

 private:
  std::vector<TextBox> taken_;
};

// One <text>, its box taken.
std::string text_at(Placer& placer, double x, double y, std::string_view anchor, double size,
                    const std::string& text, const std::string& attrs = "") {
  placer.take(text_box(x, y, anchor, size, text));
  return fmt::format(R"(<text x="{:.1f}" y="{:.1f}"{}{}{}>{}</text>)"
                     "\n",
                     x, y, anchor == "start" ? "" : fmt::format(R"( text-anchor="{}")", anchor),
                     size == 11 ? "" : fmt::format(R"( font-size="{:g}")", size), attrs, escape(text));
}

}  // namespace

std::string plot_title(const std::vector<Row>& rows, const PlotOptions& options) {
  // The GPU the rows were measured on belongs in the title: ceilings are per GPU.
  std::vector<std::string> gpus;
  for (const Row& r : rows)
    if (!r.gpu.empty() && std::find(gpus.begin(), gpus.end(), r.gpu) == gpus.end()) gpus.push_back(r.gpu);
  std::string title = options.title;
  for (std::size_t i = 0; i < gpus.size(); ++i) title += (i == 0 ? " · " : ", ") + gpus[i];
  return title;
}

std::string render_svg(const std::vector<Row>& rows, const PlotOptions& options) {
  const std::vector<RoofLine> roofs = plot_roofs(rows);
  // Points: x = intensity at DRAM, y = performance (docs/roofline.md#the-plot).
  struct Point {
    double x, y;
    std::string group, label;
    Profiler profiler;
    std::string caches;
    std::size_t number;  // 1-based, as the HTML table's # column
  };
  std::vector<Profiler> profilers;  // the backends of the rows, in order of first appearance
  std::vector<Point> points;
  std::size_t unplotted = 0;
  std::vector<std::string> groups;
  for (const Row& r : rows) {
    const double x = intensity(r, Level::dram), y = performance(r);
    const std::string group = options.color_by == ColorBy::executable ? r.executable
                              : r.region.empty()                      ? std::string("(no region)")
                                                                      : r.region;
    if (std::find(groups.begin(), groups.end(), group) == groups.end()) groups.push_back(group);
    if (std::find(profilers.begin(), profilers.end(), r.profiler) == profilers.end())
      profilers.push_back(r.profiler);
    if (!std::isfinite(x) || !std::isfinite(y) || x <= 0 || y <= 0) {
      ++unplotted;
      continue;
    }
    points.push_back({x, y, group, point_label(r), r.profiler, r.caches, points.size() + 1});
  }
  double max_compute = 0, max_bw = 0, min_bw = std::numeric_limits<double>::infinity();
  for (const RoofLine& l : roofs) {
    if (l.compute)
      max_compute = std::max(max_compute, l.value);
    else {
      max_bw = std::max(max_bw, l.value);
      min_bw = std::min(min_bw, l.value);
    }
  }
  double xmin = std::numeric_limits<double>::infinity(), xmax = 0,
         ymin = std::numeric_limits<double>::infinity(), ymax = max_compute;
  for (const Point& p : points) {
    xmin = std::min(xmin, p.x);
    xmax = std::max(xmax, p.x);
    ymin = std::min(ymin, p.y);
    ymax = std::max(ymax, p.y);
  }
  for (const RoofLine& l : roofs) {
    if (!l.compute || max_bw <= 0) continue;
    const double ridge = l.value / max_bw;  // where the roof meets the highest bandwidth
    xmin = std::min(xmin, ridge);
    xmax = std::max(xmax, l.value / min_bw);
  }
  if (!std::isfinite(xmin) || xmax <= 0) {
    xmin = 0.01;
    xmax = 100;
  }
  if (!std::isfinite(ymin) || ymax <= 0) {
    ymin = 1e9;
    ymax = 1e15;
  }
  const Scale sx{std::floor(std::log10(xmin)) - 1, std::ceil(std::log10(xmax)) + 1, kLeft, kRight};
  const double ylo_data = std::min(ymin, max_bw > 0 ? std::pow(10.0, sx.lo) * min_bw : ymin);
  const Scale sy{std::floor(std::log10(ylo_data)), std::ceil(std::log10(ymax * 1.5)), kBottom, kTop};

  Placer placer;
  std::string s = fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}" font-family="sans-serif" font-size="11">)"
      "\n",
      kWidth, kHeight);
  s += fmt::format(R"(<rect width="{}" height="{}" fill="white"/>)"
                   "\n",
                   kWidth, kHeight);
  s += text_at(placer, kLeft, 22, "start", 15, plot_title(rows, options), R"( font-weight="bold")");
  s += fmt::format(R"(<clipPath id="area"><rect x="{}" y="{}" width="{}" height="{}"/></clipPath>)"
                   "\n",
                   kLeft, kTop, kRight - kLeft, kBottom - kTop);
  // Axes and decade grid. Tick labels carry the SI prefix only; the axis titles name the units, so
  // the y-axis title stays clear of the ticks.
  for (double e = sx.lo; e <= sx.hi + 1e-9; e += 1) {
    const double x = sx(std::pow(10.0, e));
    s += fmt::format(R"(<line x1="{0:.1f}" y1="{1}" x2="{0:.1f}" y2="{2}" stroke="#e4e4e4"/>)"
                     "\n",
                     x, kTop, kBottom);
    s += text_at(placer, x, kBottom + 16, "middle", 11, si(std::pow(10.0, e), ""));
  }
  for (double e = sy.lo; e <= sy.hi + 1e-9; e += 1) {
    const double y = sy(std::pow(10.0, e));
    s += fmt::format(R"(<line x1="{1}" y1="{0:.1f}" x2="{2}" y2="{0:.1f}" stroke="#e4e4e4"/>)"
                     "\n",
                     y, kLeft, kRight);
    // The lowest can meet the x axis's first label in the corner: then the x label stays.
    if (placer.free(text_box(kLeft - 6, y + 4, "end", 11, si(std::pow(10.0, e), ""))))
      s += text_at(placer, kLeft - 6, y + 4, "end", 11, si(std::pow(10.0, e), ""));
  }
  s += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#333"/>)"
                   "\n",
                   kLeft, kTop, kRight - kLeft, kBottom - kTop);
  s += text_at(placer, (kLeft + kRight) / 2, kBottom + 36, "middle", 11,
               "arithmetic intensity at DRAM [FLOP/B]");
  {
    // Rotated: its box is the column at x = 24 (ascent left of the baseline).
    const std::string title = "performance [FLOP/s] (dominant precision)";
    const TextBox flat = text_box(0, 0, "middle", 11, title);
    const double half = (flat.x1 - flat.x0) / 2, mid = (kTop + kBottom) / 2;
    placer.take(TextBox{24 - 0.95 * 11, mid - half, 24 + 0.25 * 11, mid + half});
    s +=
        fmt::format(R"~(<text x="24" y="{0}" text-anchor="middle" transform="rotate(-90 24 {0})">{1}</text>)~"
                    "\n",
                    mid, escape(title));
  }

  // The legend on the right, placed first: it never moves.
  std::string legend;
  double ly = kTop + 10;
  legend +=
      text_at(placer, kRight + 16, ly, "start", 11,
              options.color_by == ColorBy::executable ? "executable" : "region", R"( font-weight="bold")");
  for (std::size_t g = 0; g < groups.size(); ++g) {
    ly += 16;
    legend += fmt::format(R"(<circle cx="{}" cy="{}" r="4.5" fill="{}"/>)", kRight + 22, ly - 4,
                          kPalette[g % std::size(kPalette)]);
    // Cut to the picture's width (the HTML table has the whole name).
    const auto room = static_cast<std::size_t>((kWidth - kRight - 36) / (kCharWidthEm * 11));
    legend += text_at(placer, kRight + 32, ly, "start", 11,
                      groups[g].size() > room ? groups[g].substr(0, room - 1) + "~" : groups[g]);
  }
  // docs/roofline.md#the-plot: each backend has its own mark.
  ly += 24;
  legend += text_at(placer, kRight + 16, ly, "start", 11, "backend", R"( font-weight="bold")");
  for (const Profiler b : profilers) {
    ly += 16;
    legend += marker(b, kRight + 22, ly - 4, "#888",
                     R"( class="backend-mark" stroke="#222" stroke-width="0.5")", "");
    legend += text_at(placer, kRight + 32, ly, "start", 11, std::string(profiler_name(b)));
  }
  ly += 28;
  legend += fmt::format(R"(<line x1="{0}" y1="{1}" x2="{2}" y2="{1}" stroke="#222" stroke-width="1.5"/>)",
                        kRight + 16, ly - 4, kRight + 40);
  legend += text_at(placer, kRight + 46, ly, "start", 11, "measured ceiling");
  ly += 16;
  legend += fmt::format(
      R"(<line x1="{0}" y1="{1}" x2="{2}" y2="{1}" stroke="#222" stroke-width="1.5" stroke-dasharray="6 4"/>)",
      kRight + 16, ly - 4, kRight + 40);
  legend += text_at(placer, kRight + 46, ly, "start", 11, "counter peak x clock");
  ly += 24;
  legend += text_at(placer, kRight + 16, ly, "start", 11,
                    fmt::format("{} points{}", points.size(),
                                unplotted > 0 ? fmt::format("; {} not drawn", unplotted) : ""));
  if (unplotted > 0) {
    ly += 14;
    legend += text_at(placer, kRight + 16, ly, "start", 11, "(without FLOPs or DRAM bytes)");
  }

  // Markers next: labels must not cover them.
  const bool label_points = points.size() <= kMaxLabelledPoints;
  std::string marks;
  for (const Point& p : points) {
    const auto g =
        static_cast<std::size_t>(std::find(groups.begin(), groups.end(), p.group) - groups.begin());
    const char* colour = kPalette[g % std::size(kPalette)];
    marks +=
        marker(p.profiler, sx(p.x), sy(p.y), colour,
               R"( class="pt" fill-opacity="0.85" stroke="#222" stroke-width="0.5")",
               "<title>" +
                   escape(fmt::format("#{} ", p.number) + std::string(profiler_name(p.profiler)) + " | " +
                          p.group + " | " + p.label + (p.caches.empty() ? "" : " | caches " + p.caches)) +
                   "</title>") +
        "\n";
    if (label_points) placer.take(TextBox{sx(p.x) - 6, sy(p.y) - 6, sx(p.x) + 6, sy(p.y) + 6});
  }

  // Roofs: measured solid, counter peaks dashed; each memory level its own colour.
  s += R"~(<g clip-path="url(#area)">)~"
       "\n";
  std::string labels;
  double bw_row = kBottom - 10;
  for (const RoofLine& l : roofs) {
    const char* dash = l.measured ? "" : R"( stroke-dasharray="6 4")";
    const char* colour = level_colour(l.level);
    if (l.compute) {
      const double x0 =
          max_bw > 0 ? std::max(std::pow(10.0, sx.lo), l.value / max_bw) : std::pow(10.0, sx.lo);
      s += fmt::format(
          R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="{}" stroke-width="1.5"{}/>)"
          "\n",
          sx(x0), sy(l.value), kRight, sy(l.value), colour, dash);
      // Measured labels above their roof, counter peaks below theirs, at the right end; where that
      // covers another text, the other side, then further left along the roof, then a row further
      // away at a time.
      const double above = sy(l.value) - 3, below = sy(l.value) + 11;
      const double near = l.measured ? above : below, far = l.measured ? below : above;
      const double width = text_box(0, 0, "start", 11, l.label).x1;
      std::vector<std::pair<double, double>> spots;  // (right end x, baseline y)
      for (double x : {kRight - 4, kRight - 4 - width - 16, sx(x0) + width + 8})
        if (x - width >= sx(x0) - 1 && x <= kRight - 4) {
          spots.emplace_back(x, near);
          spots.emplace_back(x, far);
        }
      for (int step = 1; step <= 12; ++step)
        spots.emplace_back(kRight - 4, near + (l.measured ? -12 : 12) * step);
      std::pair<double, double> at = spots.back();
      for (const auto& spot : spots) {
        if (placer.free(text_box(spot.first, spot.second, "end", 11, l.label))) {
          at = spot;
          break;
        }
      }
      labels +=
          text_at(placer, at.first, at.second, "end", 11, l.label, fmt::format(R"( fill="{}")", colour));
    } else {
      const double x0 = std::pow(10.0, sx.lo);
      const double x1 = max_compute > 0 ? max_compute / l.value : std::pow(10.0, sx.hi);
      s += fmt::format(
          R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="{}" stroke-width="1.5"{}/>)"
          "\n",
          sx(x0), sy(x0 * l.value), sx(x1), sy(x1 * l.value), colour, dash);
      // Bandwidth labels stack at the lower left, each with a sample of its line.
      while (bw_row > kTop + 20 && !placer.free(text_box(kLeft + 280, bw_row, "start", 11, l.label)))
        bw_row -= 14;
      labels += fmt::format(
          R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="{}" stroke-width="1.5"{}/>)",
          kLeft + 250, bw_row - 4, kLeft + 275, bw_row - 4, colour, dash);
      labels +=
          text_at(placer, kLeft + 280, bw_row, "start", 11, l.label, fmt::format(R"( fill="{}")", colour));
      bw_row -= 14;
    }
  }
  s += "</g>\n" + labels + legend + marks;

  // Point labels: "#number name" where it covers no other text or mark, else the number alone
  // (the HTML table lists every number), else none (docs/roofline.md#the-plot).
  if (label_points) {
    for (const Point& p : points) {
      const double x = sx(p.x), y = sy(p.y);
      const struct {
        double dx, dy;
        const char* anchor;
      } spots[] = {{7, -6, "start"},  {7, 13, "start"}, {-7, -6, "end"},  {-7, 13, "end"},
                   {7, -18, "start"}, {7, 25, "start"}, {-7, -18, "end"}, {-7, 25, "end"},
                   {7, -30, "start"}, {7, 37, "start"}, {-7, -30, "end"}, {-7, 37, "end"}};
      bool placed = false;
      for (const std::string& text : {fmt::format("{} {}", p.number, p.label), fmt::format("{}", p.number)}) {
        for (const auto& spot : spots) {
          const TextBox b = text_box(x + spot.dx, y + spot.dy, spot.anchor, 9, text);
          if (b.x0 < kLeft || b.x1 > kRight || b.y0 < kTop || b.y1 > kBottom || !placer.free(b)) continue;
          s += text_at(placer, x + spot.dx, y + spot.dy, spot.anchor, 9, text,
                       R"( fill="#333" class="pt-label")");
          placed = true;
          break;
        }
        if (placed) break;
      }
    }
  }
  s += "</svg>\n";
  return s;
}

std::string render_html(const std::vector<Row>& rows, const PlotOptions& options) {
  std::string h =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" +
      escape(plot_title(rows, options)) +
      "</title>\n<style>body{font-family:sans-serif;margin:16px}table{border-collapse:collapse;font-size:"
      "12px}td,th{border:1px solid #ccc;padding:2px "
      "6px;text-align:right}td.t{text-align:left}p.warn{border-left:4px solid "
      "#e15759;padding-left:8px;max-width:900px}"
      "</style></head><body>\n";
  h += render_svg(rows, options);
  h += "<p>Solid roofs: ceilings measured by <code>diescope calibrate</code>; dashed: Nsight Compute's "
       "counter peak "
       "per cycle times the clock the unit ran at (median over the rows). docs/roofline.md says how each "
       "figure is "
       "made.</p>\n";
  // docs/roofline.md#dram-bytes-and-the-cache-flush: the page says what the command line said.
  if (const auto w = mixed_caches_warning(rows))
    h += "<p class=warn><b>Warning:</b> " + escape(*w) + "</p>\n";
  h += "<table><tr><th>#</th><th>backend</th><th>caches</th><th>executable</th><th>region</th><th>kernel</th>"
       "<th>launches</th><th>duration [s]</th>"
       "<th>precision</th><th>work [FLOP]</th><th>DRAM [B]</th><th>intensity DRAM [FLOP/B]</th>"
       "<th>performance [FLOP/s]</th><th>roof [FLOP/s]</th><th>roof from</th><th>of roof [%]</th>"
       "<th>energy [J/TFLOP]</th></tr>\n";
  std::size_t number = 0;  // the plot's point numbers: rows with FLOPs and DRAM bytes, in order
  for (const Row& r : rows) {
    const auto p = dominant_precision(r);
    const Roof roof = binding_roof(r);
    const double x = intensity(r, Level::dram), y = performance(r);
    const bool drawn = std::isfinite(x) && std::isfinite(y) && x > 0 && y > 0;
    h += drawn ? fmt::format("<tr><td>{}</td>", ++number) : std::string("<tr><td></td>");
    h += fmt::format(
        "<td class=t>{}</td><td class=t>{}</td><td class=t>{}</td><td class=t>{}</td><td "
        "class=t>{}</td><td>{}</td><td>{:.4g}</td><td "
        "class=t>{}</td><td>{:.4g}</td><td>{:.4g}</td><td>{:.4g}</td><td>{}</td><td>{}</td><td "
        "class=t>{}</td><td>{:."
        "1f}</td>",
        escape(std::string(profiler_name(r.profiler))), escape(r.caches), escape(r.executable),
        escape(r.region), escape(short_kernel(r.kernel)), r.launches, r.duration_s,
        p ? precision_name(*p) : "", dominant_flop(r), r.bytes[index(Level::dram)], intensity(r, Level::dram),
        si(performance(r), "FLOP/s"), si(roof.flop_per_s, "FLOP/s"),
        roof.which.empty() ? "" : roof.which + (roof.measured ? " (measured)" : " (counter peak)"),
        pct_of_roof(r));
    // docs/roofline.md#energy: an empty cell says why in its title.
    const double jt = joules_per_tflop(r);
    h += std::isfinite(jt) ? fmt::format("<td>{:.4g}</td></tr>\n", jt)
                           : "<td title=\"" + escape(joules_per_tflop_missing(r)) + "\"></td></tr>\n";
  }
  h += "</table>\n</body></html>\n";
  return h;
}

}  // namespace diescope::roofline
