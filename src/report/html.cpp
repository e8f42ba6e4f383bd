// report.html: the headline and a DIE-Util / GPU-Util timeline in one self-contained page.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "diescope/core/printable.hpp"
#include "diescope/analysis/analyze.hpp"
#include "diescope/core/atomic_file.hpp"
#include "diescope/report/renderer.hpp"
#include "diescope/report/samples_csv.hpp"

namespace diescope::report {

using nlohmann::json;

namespace {

// Plot geometry, in SVG user units.
constexpr double kWidth = 1000, kHeight = 320;
constexpr double kLeft = 50, kRight = 990, kTop = 10, kBottom = 290;

std::string escape(std::string_view s) {
  return core::markup_escaped(s);
}

// Time-weighted means over equal slices of [lo, hi).
class Bins {
 public:
  Bins(recording::TimeNs lo, recording::TimeNs hi, int n)
      : lo_(lo),
        width_(static_cast<double>(hi - lo) / n),
        n_(n),
        weighted_(static_cast<std::size_t>(n), 0.0),
        covered_(static_cast<std::size_t>(n), 0.0) {}

  void add(recording::TimeNs a, recording::TimeNs b, double value) {
    if (!std::isfinite(value) || b <= a || width_ <= 0) return;
    const double fa = static_cast<double>(a - lo_), fb = static_cast<double>(b - lo_);
    int i = std::max(0, static_cast<int>(std::floor(fa / width_)));
    for (; i < n_; ++i) {
      const double bin_lo = i * width_, bin_hi = (i + 1) * width_;
      if (bin_lo >= fb) break;
      const double overlap = std::min(fb, bin_hi) - std::max(fa, bin_lo);
      if (overlap <= 0) continue;
      weighted_[static_cast<std::size_t>(i)] += value * overlap;
      covered_[static_cast<std::size_t>(i)] += overlap;
    }
  }
  std::optional<double> value(int i) const {
    const auto k = static_cast<std::size_t>(i);
    if (covered_[k] <= 0) return std::nullopt;
    return weighted_[k] / covered_[k];
  }
  int size() const { return n_; }

 private:
  recording::TimeNs lo_;
  double width_;
  int n_;
  std::vector<double> weighted_, covered_;
};

double x_of(double fraction) {
  return kLeft + (kRight - kLeft) * fraction;
}
double y_of(double pct) {
  return kBottom - (kBottom - kTop) * std::clamp(pct, 0.0, 100.0) / 100.0;
}

// A step line through the bins that have a value; a bin without one breaks the line. Bins in a
// row that draw at the same height make one segment.
std::string polylines(const Bins& bins, const char* css_class) {
  std::string out, points;
  std::optional<double> level;  // height of the open segment
  auto point = [&](double x, double y) {
    if (!points.empty()) points += ' ';
    points += fmt::format("{:.1f},{:.1f}", x, y);
  };
  auto close = [&](int i) {
    if (level) point(x_of(static_cast<double>(i) / bins.size()), *level);
    if (!points.empty()) out += fmt::format("<polyline class=\"{}\" points=\"{}\"/>\n", css_class, points);
    points.clear();
    level.reset();
  };
  for (int i = 0; i < bins.size(); ++i) {
    auto v = bins.value(i);
    if (!v) {
      close(i);
      continue;
    }
    const double y = std::round(y_of(*v) * 10) / 10;  // as printed
    if (level && *level == y) continue;
    const double x = x_of(static_cast<double>(i) / bins.size());
    if (level) point(x, *level);
    point(x, y);
    level = y;
  }
  close(bins.size());
  return out;
}

// About five round steps (1, 2 or 5 times a power of ten) across `span_s`.
double tick_step(double span_s) {
  if (!(span_s > 0)) return 1;
  const double raw = span_s / 5;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0})
    if (m * power >= raw) return m * power;
  return 10 * power;
}

std::string svg(const Bins& die, const Bins& util, double span_s,
                std::optional<std::pair<double, double>> window) {
  std::string out = fmt::format(
      "<svg viewBox=\"0 0 {:g} {:g}\" role=\"img\" "
      "aria-label=\"DIE-Util and GPU-Util over the run\">\n",
      kWidth, kHeight);
  if (window)
    out += fmt::format("<rect class=\"window\" x=\"{:.1f}\" y=\"{:g}\" width=\"{:.1f}\" height=\"{:g}\"/>\n",
                       x_of(window->first), kTop, x_of(window->second) - x_of(window->first), kBottom - kTop);
  for (int pct = 0; pct <= 100; pct += 25)
    out += fmt::format(
        "<line class=\"grid\" x1=\"{:g}\" x2=\"{:g}\" y1=\"{:.1f}\" y2=\"{:.1f}\"/>"
        "<text x=\"{:g}\" y=\"{:.1f}\" text-anchor=\"end\">{}%</text>\n",
        kLeft, kRight, y_of(pct), y_of(pct), kLeft - 4, y_of(pct) + 4, pct);
  const double step = tick_step(span_s);
  for (double t = 0; span_s > 0 && t <= span_s * (1 + 1e-9); t += step)
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:g}\" text-anchor=\"middle\">{:g} s</text>\n",
                       x_of(t / span_s), kBottom + 16, t);
  out += polylines(util, "gpu");
  out += polylines(die, "die");
  out += "</svg>\n";
  return out;
}

const char* kStyle =
    "body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222}"
    "pre{background:#f6f6f6;padding:1em;overflow-x:auto}"
    "svg{width:100%;height:auto;font-size:11px}"
    ".grid{stroke:#ddd}.window{fill:#fff3c4}"
    "polyline{fill:none;stroke-width:1.5}.die{stroke:#c0392b}.gpu{stroke:#2471a3}"
    ".key-die{color:#c0392b}.key-gpu{color:#2471a3}";

}  // namespace

struct HtmlRenderer::State {
  State(recording::TimeNs lo_ns, recording::TimeNs hi_ns, int bins)
      : lo(lo_ns), hi(hi_ns), die(lo_ns, hi_ns, bins) {}
  recording::TimeNs lo, hi;
  Bins die;  // DIE-Util from the used samples, as the analysis weighs them
};

HtmlRenderer::HtmlRenderer(std::filesystem::path path, int bins) : path_(std::move(path)), bins_(bins) {}
HtmlRenderer::~HtmlRenderer() = default;

void HtmlRenderer::begin(const ReportInput& input) {
  const json& results = input.report.at("results");
  const recording::TimeNs lo = results.at("start_ns").get<recording::TimeNs>();
  const recording::TimeNs hi = std::max(lo + 1, results.at("end_ns").get<recording::TimeNs>());
  state_ = std::make_unique<State>(lo, hi, std::max(1, bins_));
}

void HtmlRenderer::sample(const WalkedSample& w) {
  if (w.verdict.use == SampleUse::used) state_->die.add(w.sample->start_ns, w.sample->end_ns, w.die_util_pct);
}

void HtmlRenderer::finish(const ReportInput& input) {
  const json& report = input.report;
  const recording::TimeNs lo = state_->lo, hi = state_->hi;
  const double span_s = static_cast<double>(hi - lo) / 1e9;
  const int bins = std::max(1, bins_);
  const Bins& die = state_->die;
  // GPU-Util over the time the analysis books each NVML sample to.
  Bins util(lo, hi, bins);
  analysis::for_each_booked_util(*input.recording,
                                 [&](const analysis::BookedUtil& b) { util.add(b.lo, b.hi, b.pct); });
  std::optional<std::pair<double, double>> window;
  const json& w = report.at("window");
  if (w.value("found", false)) {
    const double a =
        static_cast<double>(w.at("start_ns").get<recording::TimeNs>() - lo) / static_cast<double>(hi - lo);
    const double b =
        static_cast<double>(w.at("end_ns").get<recording::TimeNs>() - lo) / static_cast<double>(hi - lo);
    window = std::make_pair(std::clamp(a, 0.0, 1.0), std::clamp(b, 0.0, 1.0));
  }

  const json& gpu = report.at("gpu");
  std::string html = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  html += fmt::format("<title>diescope report: {} ({})</title>\n", escape(gpu.value("model", "")),
                      escape(report.at("source").value("recording", "")));
  html += fmt::format("<style>{}</style>\n</head>\n<body>\n", kStyle);
  html += fmt::format("<h1>diescope report</h1>\n<p>{} &middot; schema {} &middot; method {}</p>\n",
                      escape(report.at("source").value("recording", "")), report.value("schema", 0),
                      report.value("method", 0));
  html += "<pre>" + escape(render_terminal(report)) + "</pre>\n";
  html += "<h2>Over the run</h2>\n";
  html +=
      "<p><b class=\"key-die\">DIE-Util</b> (busiest unit of each used sample) and "
      "<b class=\"key-gpu\">GPU-Util</b> (NVML), each a time-weighted mean over ";
  html += fmt::format("{} equal slices of the {:.2f} s run", bins, span_s);
  if (window) html += "; the shaded band is the steady window";
  html +=
      ". A break in a line is time with no value (dropped samples, no reading). "
      "Single samples above 100% are drawn at 100%.</p>\n";
  html += svg(die, util, span_s, window);
  html += "</body>\n</html>\n";
  core::write_file_atomically(path_, html);
  state_.reset();
}

}  // namespace diescope::report
