// report.html: one self-contained page a person reads (docs/report.md#reporthtml): headline cards,
// the run's timeline, every unit, the limiting unit per stretch of time, clocks, power and throttle
// reasons, the host panels, the notes; read-outs under the pointer. Every series comes through the
// post-processing pipeline onto one grid (timeline.hpp), so the page's size depends on the number of
// series, never on the recording's length.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <vector>

#include "diescope/analysis/analyze.hpp"
#include "diescope/core/atomic_file.hpp"
#include "diescope/core/printable.hpp"
#include "diescope/metrics/postprocess.hpp"
#include "diescope/report/renderer.hpp"
#include "diescope/report/samples_csv.hpp"
#include "capture_box.hpp"
#include "timeline.hpp"

namespace diescope::report {

using detail::Role;
using detail::Timeline;
using detail::TimelineSeries;
using nlohmann::json;

namespace {

// Plot geometry in SVG user units; the plots stretch to their box (preserveAspectRatio="none") and
// all text is HTML around them, so it stays readable at any width.
constexpr double kPlotWidth = 1000;
// Lines in one host panel (docs/report.md#reporthtml): a machine's 128 cores or a loader's 32
// workers would make a panel nobody can read and a page of many megabytes.
constexpr std::size_t kMaxHostLines = 8;

constexpr std::array<const char*, 10> kPalette = {"#c0392b", "#2471a3", "#27ae60", "#8e44ad", "#d68910",
                                                  "#17a589", "#6c7a89", "#2e4053", "#e84393", "#935116"};

std::string escape(std::string_view s) {
  return core::markup_escaped(s);
}

std::string color(std::size_t i) {
  return kPalette[i % kPalette.size()];
}

// How a series' values are shown: the pipeline's display scale for its largest value, and the
// decimals that give three significant digits there (percents one decimal, clocks none).
struct Shown {
  double divisor = 1;
  std::string symbol;
  int decimals = 1;
};

double largest(const metrics::Envelope& e) {
  double m = 0;
  for (double v : e.max)
    if (std::isfinite(v)) m = std::max(m, std::fabs(v));
  return m;
}

Shown shown(const TimelineSeries& s) {
  const metrics::Unit unit = s.descriptor.unit;
  const double top = largest(s.envelope);
  const metrics::DisplayScale scale = metrics::display_scale(unit, top);
  Shown out{scale.divisor, scale.symbol, 1};
  if (unit == metrics::Unit::pct) return out;
  if (unit == metrics::Unit::mhz || unit == metrics::Unit::watts) {
    out.decimals = 0;
    return out;
  }
  const double scaled = top / scale.divisor;
  out.decimals = scaled > 0 ? std::max(0, 2 - static_cast<int>(std::floor(std::log10(scaled)))) : 0;
  return out;
}

std::string shown_value(double v, const Shown& s) {
  if (!std::isfinite(v)) return "n/a";
  std::string out = fmt::format("{:.{}f}", v / s.divisor, s.decimals);
  if (s.symbol == "%") return out + "%";
  return s.symbol.empty() ? out : out + " " + s.symbol;
}

// A round top for an axis: 1, 2 or 5 times a power of ten at or above `v`.
double nice_top(double v) {
  if (!(v > 0)) return 1;
  const double power = std::pow(10.0, std::floor(std::log10(v)));
  for (double m : {1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0})
    if (m * power >= v * (1 - 1e-12)) return m * power;
  return 10 * power;
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

std::string time_text(double s, double step) {
  if (step >= 3600 && std::fmod(s, 3600) == 0) return fmt::format("{:g} h", s / 3600);
  if (step >= 60 && std::fmod(s, 60) == 0) return fmt::format("{:g} min", s / 60);
  return fmt::format("{:g} s", s);
}

struct Page {
  const json& report;
  const Timeline& timeline;
  double span_s = 0;                                // the grid's span
  std::optional<std::pair<double, double>> window;  // as fractions of the grid
  std::vector<Shown> shown;                         // per timeline series
};

double x_of_bin_edge(const Page& p, std::size_t k) {
  return kPlotWidth * static_cast<double>(k) / static_cast<double>(p.timeline.grid.bins);
}

// How long a polled reading is held across bins without one (docs/report.md#reporthtml): NVML's
// clocks, power limit and engines and the host probes are read once per drain or probe (1 s, 100 ms),
// fewer times than there are bins, so each reading is drawn until the next one, as a step; a gap
// longer than this (a stop) breaks the line.
constexpr double kHoldSeconds = 3.0;

// Step lines through the bins' means, each value held until the next one (up to kHoldSeconds), broken
// where longer stretches have no value; bins in a row at one height make one segment. Then, under it,
// the band from each bin's lowest to highest value, where they differ.
std::string lines(const Page& p, const TimelineSeries& s, std::size_t color_index, double top, double height,
                  bool band) {
  const std::size_t n = p.timeline.grid.bins;
  // Readings polled now and then are held; chip samples cover their own time, and a bin without one
  // (a dropped sample, counters off) stays a gap.
  const bool polled = s.role == Role::sm_clock || s.role == Role::mem_clock || s.role == Role::power_limit ||
                      s.role == Role::power_draw || s.role == Role::engine || s.role == Role::host;
  const auto hold_bins = polled ? static_cast<std::size_t>(kHoldSeconds * 1e9 /
                                                           static_cast<double>(std::max<recording::TimeNs>(
                                                               1, p.timeline.grid.step_ns)))
                                : std::size_t{0};
  auto y = [&](double v) { return std::round(height * (1 - std::clamp(v / top, 0.0, 1.0)) * 10) / 10; };
  std::string out;
  if (band) {
    bool differs = false;
    for (std::size_t k = 0; k < n && !differs; ++k)
      differs = std::isfinite(s.envelope.min[k]) && std::isfinite(s.envelope.max[k]) &&
                y(s.envelope.min[k]) != y(s.envelope.max[k]);
    if (differs) {
      for (std::size_t k = 0; k < n;) {
        if (!std::isfinite(s.envelope.max[k])) {
          ++k;
          continue;
        }
        std::size_t end = k;
        while (end < n && std::isfinite(s.envelope.max[end])) ++end;
        std::string pts;
        for (std::size_t i = k; i < end; ++i)
          pts += fmt::format("{:.1f},{:.1f} {:.1f},{:.1f} ", x_of_bin_edge(p, i), y(s.envelope.max[i]),
                             x_of_bin_edge(p, i + 1), y(s.envelope.max[i]));
        for (std::size_t i = end; i-- > k;)
          pts += fmt::format("{:.1f},{:.1f} {:.1f},{:.1f} ", x_of_bin_edge(p, i + 1), y(s.envelope.min[i]),
                             x_of_bin_edge(p, i), y(s.envelope.min[i]));
        pts.pop_back();
        out += fmt::format("<polygon class=\"band\" fill=\"{}\" points=\"{}\"/>", color(color_index), pts);
        k = end;
      }
    }
  }
  std::string points;
  std::optional<double> level;
  auto point = [&](double x, double yv) {
    if (!points.empty()) points += ' ';
    points += fmt::format("{:.1f},{:.1f}", x, yv);
  };
  auto close = [&](std::size_t k) {
    if (level) point(x_of_bin_edge(p, k), *level);
    if (!points.empty())
      out += fmt::format("<polyline stroke=\"{}\" points=\"{}\"/>", color(color_index), points);
    points.clear();
    level.reset();
  };
  std::size_t last = 0;  // the last bin with a value
  for (std::size_t k = 0; k < n; ++k) {
    const double v = s.envelope.mean[k];
    if (!std::isfinite(v)) {
      if (level && k - last > hold_bins) close(last + 1);  // too long without a reading: the line ends
      continue;
    }
    const double yv = y(v);
    last = k;
    if (level && *level == yv) continue;
    if (level) point(x_of_bin_edge(p, k), *level);
    point(x_of_bin_edge(p, k), yv);
    level = yv;
  }
  if (level) close(last + 1);
  return out + "\n";
}

std::string window_rect(const Page& p, double height) {
  if (!p.window) return "";
  return fmt::format("<rect class=\"window\" x=\"{:.1f}\" y=\"0\" width=\"{:.1f}\" height=\"{:g}\"/>",
                     kPlotWidth * p.window->first, kPlotWidth * (p.window->second - p.window->first), height);
}

std::string time_axis(const Page& p) {
  std::string out = "<div class=\"axis\">";
  const double step = tick_step(p.span_s);
  for (double t = 0; p.span_s > 0 && t <= p.span_s * (1 + 1e-9); t += step)
    out += fmt::format("<span style=\"left:{:.2f}%\">{}</span>", 100 * t / p.span_s, time_text(t, step));
  return out + "</div>\n";
}

struct Member {
  std::size_t series;  // index into the timeline
  std::size_t color;
};

// One chart: a header with the title, a legend that doubles as the read-out under the pointer, the
// y-axis top, and the plot.
std::string chart(const Page& p, const std::string& title, const std::string& subtitle,
                  const std::vector<Member>& members, std::optional<double> fixed_top, double height,
                  const char* css_class, const std::vector<std::string>& legends = {}, bool own_axis = true) {
  double top = 0;
  for (const Member& m : members) top = std::max(top, largest(p.timeline.series[m.series].envelope));
  top = fixed_top ? *fixed_top : nice_top(top * 1.05);  // a line at the top stays in view
  const Shown& axis_shown = p.shown[members.front().series];
  std::string out =
      fmt::format("<div class=\"chart {}\">\n<div class=\"head\"><span class=\"title\">{}</span>", css_class,
                  escape(title));
  if (!subtitle.empty()) out += fmt::format(" <span class=\"sub\">{}</span>", escape(subtitle));
  // What the line covers (docs/report.md#reporthtml): always the whole run, the window shaded.
  out += fmt::format("<span class=\"span\">whole run{}</span>", p.window ? ", steady window shaded" : "");
  out += "<span class=\"legend\">";
  for (std::size_t j = 0; j < members.size(); ++j) {
    const Member& m = members[j];
    const TimelineSeries& s = p.timeline.series[m.series];
    out += fmt::format("<span class=\"key\"><i style=\"background:{}\"></i>", color(m.color));
    if (j < legends.size())
      out += escape(legends[j]) + " ";
    else if (members.size() > 1)
      out += escape(s.label) + " ";
    out += fmt::format("<b class=\"read\" data-s=\"{}\"></b></span>", m.series);
  }
  out += "</span></div>\n";
  out += fmt::format(
      "<div class=\"plot\" style=\"height:{:g}px\"><span class=\"ytop\">{}</span><span "
      "class=\"ymid\">{}</span><span class=\"ybottom\">0</span>"
      "<svg viewBox=\"0 0 {:g} {:g}\" preserveAspectRatio=\"none\">",
      height, escape(shown_value(top, axis_shown)), escape(shown_value(top / 2, axis_shown)), kPlotWidth,
      height);
  out += window_rect(p, height);
  for (double f : {0.25, 0.5, 0.75})
    out += fmt::format("<line class=\"grid\" x1=\"0\" x2=\"{:g}\" y1=\"{:.1f}\" y2=\"{:.1f}\"/>", kPlotWidth,
                       height * f, height * f);
  out += "\n";
  for (const Member& m : members) out += lines(p, p.timeline.series[m.series], m.color, top, height, true);
  out += "</svg><div class=\"cursor\"></div></div>\n";
  // Each chart its own time axis, under its own plot (a shared one lines up with none of a grid's).
  if (own_axis) out += time_axis(p);
  return out + "</div>\n";
}

// A strip of coloured stretches: per bin, the colour of its category (-1: none); bins in a row of
// one category make one rectangle.
std::string strip(const Page& p, const std::vector<int>& category, const std::vector<double>& opacity,
                  const std::string& fill_one) {
  const std::size_t n = category.size();
  std::string out = fmt::format(
      "<div class=\"plot strip\"><svg viewBox=\"0 0 {:g} 10\" preserveAspectRatio=\"none\">", kPlotWidth);
  for (std::size_t k = 0; k < n;) {
    std::size_t end = k + 1;
    auto same = [&](std::size_t i) {
      return category[i] == category[k] &&
             (opacity.empty() || std::round(opacity[i] * 10) == std::round(opacity[k] * 10));
    };
    while (end < n && same(end)) ++end;
    if (category[k] >= 0 && (opacity.empty() || opacity[k] > 0)) {
      const std::string fill = fill_one.empty() ? color(static_cast<std::size_t>(category[k])) : fill_one;
      out += fmt::format("<rect x=\"{:.1f}\" y=\"0\" width=\"{:.1f}\" height=\"10\" fill=\"{}\"",
                         x_of_bin_edge(p, k), x_of_bin_edge(p, end) - x_of_bin_edge(p, k), fill);
      if (!opacity.empty()) out += fmt::format(" fill-opacity=\"{:.1f}\"", std::round(opacity[k] * 10) / 10);
      out += "/>";
    }
    k = end;
  }
  return out + "</svg><div class=\"cursor\"></div></div>\n";
}

// A note that quotes a nanosecond clock reading: a run of 16 or more digits.
bool has_raw_timestamp(std::string_view text) {
  std::size_t run = 0;
  for (char c : text) {
    run = c >= '0' && c <= '9' ? run + 1 : 0;
    if (run >= 16) return true;
  }
  return false;
}

std::optional<double> number(const json& o, const char* key) {
  auto it = o.find(key);
  if (it == o.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::string reason(const json& o, const std::string& key) {
  auto it = o.find(key + "_reason");
  return it != o.end() && it->is_string() ? it->get<std::string>() : std::string("not available");
}

std::string one_decimal(double v) {
  return fmt::format("{:.1f}", v);
}

std::string limiting_words(const json& span) {
  const json& lu = span.at("limiting_unit");
  if (!lu.is_string()) return "none";
  return span.value("limiting_unit_label", lu.get<std::string>());
}

std::optional<double> limiting_mean(const json& span) {
  const json& lu = span.at("limiting_unit");
  if (!lu.is_string()) return std::nullopt;
  for (const json& u : span.value("units", json::array()))
    if (u.value("key", "") == lu.get<std::string>()) return number(u, "mean_pct");
  return std::nullopt;
}

// What to keep in mind when reading the cards, beside them (docs/report.md#reporthtml): the
// calibration's state, DIE-Util's algorithm status, and units read through stand-in counters or
// measuring something else than their name says (the flags of the units table).
std::string caveats(const json& report, const json& span) {
  std::vector<std::string> items;
  const json& cal = report.at("calibration");
  if (const std::string status = cal.value("status", ""); !status.empty() && status != "validated")
    items.push_back(
        fmt::format("<b>Calibration {}</b>: {}", escape(status), escape(cal.value("reason", ""))));
  const json& algo = report.value("die_util_algorithm", json::object());
  if (algo.value("status", "") == "experimental")
    items.push_back(fmt::format(
        "<b>DIE-Util is experimental</b>: the busiest unit of each sample ({}), not yet checked on every "
        "workload",
        escape(algo.value("name", ""))));
  for (const auto& [flag, words] : std::vector<std::pair<std::string, std::string>>{
           {"stand_in_counter", "read a stand-in counter, not the unit's own"},
           {"different_measure", "measure something other than their name says"}}) {
    std::string names;
    for (const json& u : span.value("units", json::array())) {
      const json flags = u.value("flags", json::array());
      if (std::find(flags.begin(), flags.end(), flag) != flags.end())
        names += (names.empty() ? "" : ", ") + u.value("label", u.value("key", ""));
    }
    if (!names.empty()) items.push_back(fmt::format("<b>{}</b> {} ({})", escape(names), words, flag));
  }
  if (items.empty()) return "";
  std::string out = "<div class=\"caveats\" id=\"caveats\"><span class=\"ctitle\">Read with care</span><ul>";
  for (const std::string& i : items) out += "<li>" + i + "</li>";
  return out + "</ul></div>\n";
}

// The headline as four cards, for the window when there is one (the run's figures beside it).
std::string cards(const json& report) {
  const json& w = report.at("window");
  const bool in_window = w.value("found", false);
  const json& span = in_window ? w.at("results") : report.at("results");
  const json& run = report.at("results");
  const json& h = span.at("headline");
  std::string out;
  if (in_window) {
    out += fmt::format(
        "<p class=\"scope\">The steady window, {:.2f} s to {:.2f} s after the start (shaded below); "
        "the whole run's figure under each.</p>\n",
        w.value("start_s", 0.0), w.value("end_s", 0.0));
  }
  // A cut-off recording says so first, as the terminal's headline does (docs/report.md#reporthtml).
  if (report.at("source").value("cut_off", false))
    out += fmt::format(
        "<p class=\"partial\" id=\"cut-off\">The recording was cut off at {:.2f} s (it ends early): every "
        "figure covers only what was written before the cut.</p>\n",
        number(run, "span_s").value_or(0.0));
  const json& gate = span.at("chip_coverage_gate");
  if (gate.value("partial", false))
    out += fmt::format("<p class=\"partial\">{}{}: every figure covers only that share.</p>\n",
                       in_window ? "steady window: " : "", escape(gate.value("wording", "partial")));
  const json& run_gate = run.at("chip_coverage_gate");
  if (in_window && run_gate.value("partial", false))
    out += fmt::format("<p class=\"partial\">whole run: {}: its figures cover only that share.</p>\n",
                       escape(run_gate.value("wording", "partial")));
  out += "<div class=\"cards\">\n";
  auto card = [&](const char* id, const char* title, const std::string& value, const std::string& detail,
                  const std::string& extra) {
    out += fmt::format(
        "<div class=\"card\" id=\"card-{}\"><div class=\"ctitle\">{}</div><div class=\"cvalue\">{}</div>"
        "<div class=\"cdetail\">{}</div>{}</div>\n",
        id, title, escape(value), escape(detail), extra);
  };
  auto pct = [](std::optional<double> v) { return v ? one_decimal(*v) + "%" : std::string("n/a"); };
  auto run_line = [&](const std::string& s) {
    return in_window ? fmt::format("<div class=\"crun\">run: {}</div>", escape(s)) : std::string();
  };
  const json& rh = run.at("headline");
  card("gpu-util", "GPU-Util", pct(number(h, "gpu_util_pct")),
       number(h, "gpu_util_pct") ? "nvidia-smi's figure: a kernel was running" : reason(h, "gpu_util_pct"),
       run_line(pct(number(rh, "gpu_util_pct"))));
  card("die-util", "DIE-Util", pct(number(h, "die_util_pct")),
       number(h, "die_util_pct") ? "the busiest unit, sample by sample" : reason(h, "die_util_pct"),
       run_line(pct(number(rh, "die_util_pct"))));
  {
    auto stranded = number(h, "stranded_points");
    auto idle = number(h, "idle_points");
    auto active = number(h, "active_points");
    std::string detail, bar;
    if (stranded && idle && active) {
      detail = fmt::format("idle {} (nothing ran) + active {} (a kernel ran)", one_decimal(*idle),
                           one_decimal(*active));
      bar = fmt::format(
          "<div class=\"split\"><span class=\"busy\" style=\"width:{:.1f}%\"></span><span class=\"active\" "
          "style=\"width:{:.1f}%\"></span><span class=\"idle\" style=\"width:{:.1f}%\"></span></div>",
          std::max(0.0, 100 - *stranded), std::max(0.0, *active), std::max(0.0, *idle));
      // The bar's legend: what each colour is, with its points.
      bar += fmt::format(
          "<div class=\"splitkeys\"><span><i style=\"background:#c0392b\"></i>used (DIE-Util) {}</span>"
          "<span><i style=\"background:#e59866\"></i>active: a kernel ran {}</span>"
          "<span><i style=\"background:#bfc9ca\"></i>idle: nothing ran {}</span></div>",
          one_decimal(std::max(0.0, 100 - *stranded)), one_decimal(*active), one_decimal(*idle));
    } else {
      detail = stranded ? "idle and active n/a: " + reason(h, "idle_points") : reason(h, "stranded_points");
    }
    auto r_idle = number(rh, "idle_points");
    auto r_active = number(rh, "active_points");
    card("gap", "Stranded capacity", stranded ? one_decimal(*stranded) + " points" : "n/a", detail,
         bar + run_line(r_idle && r_active
                            ? fmt::format("idle {} + active {}", one_decimal(*r_idle), one_decimal(*r_active))
                            : std::string("n/a")));
  }
  {
    auto mean = limiting_mean(span);
    const std::string detail = span.at("limiting_unit").is_string()
                                   ? (mean ? one_decimal(*mean) + "% of its peak on average" : "")
                                   : reason(span, "limiting_unit");
    card("limiting", "Limiting unit", limiting_words(span), detail, run_line(limiting_words(run)));
  }
  out += "</div>\n";
  out += caveats(report, span);
  // Why the GPU idled, when the recording has host streams (docs/method.md#stranded-idle-explained):
  // the analysis's verdict and what the host was doing, as report.json words them.
  if (auto it = span.find("idle_explained"); it != span.end() && it->is_object()) {
    const json& x = *it;
    out += "<div class=\"idle\" id=\"idle-explained\"><span class=\"ctitle\">Why the GPU idled</span> ";
    if (x.contains("wording") && x.at("wording").is_string())
      out += "<b>" + escape(x.at("wording").get<std::string>()) + "</b>";
    if (x.contains("host") && x.at("host").is_string())
      out += "<div class=\"cdetail\">" + escape(x.at("host").get<std::string>()) + "</div>";
    out += "</div>\n";
  }
  // The span's energy (docs/energy.md#in-the-report), and the whole run's beside a window's; a
  // report.json written before energy was reported has none.
  auto energy_words = [](const json& s) -> std::string {
    auto it = s.find("energy");
    return it != s.end() && it->is_object() && it->contains("wording") ? it->at("wording").get<std::string>()
                                                                       : std::string();
  };
  if (const std::string words = energy_words(span); !words.empty()) {
    out +=
        "<div class=\"idle\" id=\"energy\"><span class=\"ctitle\">Energy</span> <b>" + escape(words) + "</b>";
    // docs/energy.md#joules-per-tflop: only where the recording holds the program's FLOPs, under the
    // span's own figure.
    if (const json& e = span.at("energy"); e.contains("joules_per_tflop_wording"))
      out += "<div class=\"cdetail\" id=\"joules-per-tflop\">" +
             escape(e.at("joules_per_tflop_wording").get<std::string>()) + "</div>";
    if (in_window && !energy_words(run).empty())
      out += "<div class=\"cdetail\">whole run: " + escape(energy_words(run)) + "</div>";
    out += "</div>\n";
  }
  return out;
}

// The hover data: per drawn series its label, how to show it and its envelope, numbers to four
// significant digits and null where a bin has no value.
std::string data_block(const Page& p, const std::vector<bool>& drawn, const std::vector<int>& limiting,
                       const std::vector<std::string>& limiting_labels) {
  const Timeline& t = p.timeline;
  std::string out = fmt::format("{{\"bins\":{},\"step_s\":{:.9g},\"series\":{{", t.grid.bins,
                                static_cast<double>(t.grid.step_ns) / 1e9);
  auto values = [&](const std::vector<double>& v) {
    std::string s = "[";
    for (std::size_t k = 0; k < v.size(); ++k) {
      if (k) s += ',';
      if (std::isfinite(v[k]))
        fmt::format_to(std::back_inserter(s), "{:.4g}", v[k]);
      else
        s += "null";
    }
    return s + "]";
  };
  bool first = true;
  for (std::size_t i = 0; i < t.series.size(); ++i) {
    if (!drawn[i]) continue;
    const Shown& sh = p.shown[i];
    out +=
        fmt::format("{}\"{}\":{{\"d\":{:g},\"u\":{},\"p\":{},\"m\":{},\"n\":{},\"x\":{}}}", first ? "" : ",",
                    i, sh.divisor, json(sh.symbol).dump(), sh.decimals, values(t.series[i].envelope.mean),
                    values(t.series[i].envelope.min), values(t.series[i].envelope.max));
    first = false;
  }
  out += "},\"limiting\":[";
  for (std::size_t k = 0; k < limiting.size(); ++k) out += (k ? "," : "") + std::to_string(limiting[k]);
  out += "],\"limiting_labels\":" + json(limiting_labels).dump() + "}";
  // The block is inside a <script> element: no "</" may end it early.
  std::string safe;
  for (const char c : out) {
    if (c == '<') {
      safe += "\\u003c";
    } else {
      safe += c;
    }
  }
  return safe;
}

const char* kStyle = R"(
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;padding:12px 16px 40px;max-width:1400px;color:#1d2329;background:#fafafa}
h1{font-size:1.4em;margin:.3em 0 0}h2{font-size:1.1em;margin:1.6em 0 .4em;border-bottom:1px solid #ddd;padding-bottom:3px}
.meta{color:#555;margin:.2em 0 .8em;font-size:.9em;overflow-wrap:anywhere}
.scope{margin:.3em 0;color:#333}.partial{background:#fdebd0;padding:6px 10px;border-radius:4px}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(200px,1fr));gap:10px}
.card{background:#fff;border:1px solid #ddd;border-radius:6px;padding:10px 12px}
.ctitle{font-size:.8em;text-transform:uppercase;letter-spacing:.05em;color:#666}
.cvalue{font-size:1.9em;font-weight:600;margin:2px 0}.cdetail{font-size:.85em;color:#444}.crun{font-size:.8em;color:#777;margin-top:4px}
#card-gpu-util .cvalue{color:#2471a3}#card-die-util .cvalue{color:#c0392b}
.idle{background:#fff;border:1px solid #ddd;border-left:4px solid #e59866;border-radius:6px;padding:8px 12px;margin-top:10px}
.split{display:flex;height:10px;margin-top:6px;border-radius:3px;overflow:hidden;background:#eee}
.split .busy{background:#c0392b}.split .active{background:#e59866}.split .idle{background:#bfc9ca}
.bar{position:sticky;top:0;z-index:5;background:#fafafa;padding:4px 0;font-size:.85em;color:#333;min-height:1.6em;border-bottom:1px solid #eee}
.grid2{display:grid;grid-template-columns:repeat(auto-fill,minmax(320px,1fr));gap:8px 18px}
.chart{margin:6px 0}.head{font-size:.85em;display:flex;flex-wrap:wrap;gap:2px 10px;align-items:baseline}
.title{font-weight:600}.sub{color:#666}.legend{display:flex;flex-wrap:wrap;gap:2px 10px;margin-left:auto}
.key i{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:3px;vertical-align:-1px}
.read{font-weight:500;font-variant-numeric:tabular-nums}
.plot{position:relative;margin:2px 0 0 44px;background:#fff;border:1px solid #e3e3e3}
.plot svg{display:block;width:100%;height:100%}
.plot.strip{height:16px}
.ytop,.ymid,.ybottom{position:absolute;left:-44px;width:40px;text-align:right;font-size:10px;color:#666}
.ytop{top:-2px}.ybottom{bottom:-2px}.ymid{top:calc(50% - 7px)}
.span{color:#888;font-size:.9em}
.splitkeys{display:flex;flex-wrap:wrap;gap:0 10px;font-size:.75em;color:#555;margin-top:3px}
.splitkeys i{display:inline-block;width:9px;height:9px;border-radius:2px;margin-right:3px;vertical-align:-1px}
.caveats{background:#fff;border:1px solid #ddd;border-left:4px solid #7f8c8d;border-radius:6px;padding:6px 12px;margin-top:10px;font-size:.85em}
.caveats ul{margin:2px 0;padding-left:1.2em}
.grid{stroke:#eee;vector-effect:non-scaling-stroke}.window{fill:#fff3c4}
polyline{fill:none;stroke-width:1.5;vector-effect:non-scaling-stroke}.band{fill-opacity:.18;stroke:none}
.cursor{position:absolute;top:0;bottom:0;width:1px;background:#000;opacity:.5;display:none;pointer-events:none}
.axis{position:relative;height:16px;margin-left:44px;font-size:10px;color:#666}
.axis span{position:absolute;transform:translateX(-50%);white-space:nowrap}
.axis span:first-child{transform:none}
.keys{font-size:.8em;display:flex;flex-wrap:wrap;gap:2px 12px;margin:2px 0 0 44px}
.keys i{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:3px;vertical-align:-1px}
.empty{color:#666;font-size:.9em}
ul.notes{font-size:.85em;padding-left:1.2em}ul.notes li{margin:2px 0;overflow-wrap:anywhere}
.notes .t{color:#666;font-variant-numeric:tabular-nums}
pre{background:#f0f0f0;padding:10px;font-size:12px;white-space:pre-wrap;overflow-wrap:anywhere}
@media (max-width:600px){body{padding:8px}.cards{grid-template-columns:1fr 1fr;gap:6px}.card{padding:6px 8px}.cvalue{font-size:1.5em}.plot{margin-left:36px}.ytop,.ymid,.ybottom{left:-36px;width:32px}.axis,.keys{margin-left:36px}}
)";

// Read-outs under the pointer (mouse or touch): the time, the limiting unit, and each chart's values
// at that bin. No library, nothing fetched.
const char* kScript = R"(
(function(){
var D=JSON.parse(document.getElementById('diescope-data').textContent);
var bar=document.getElementById('readout');
function fmt(s,v){if(v===null||v===undefined)return 'n/a';var t=(v/s.d).toFixed(s.p);return s.u==='%'?t+'%':(s.u?t+' '+s.u:t);}
function show(f){
 f=Math.max(0,Math.min(0.999999,f));var k=Math.floor(f*D.bins);
 document.querySelectorAll('.cursor').forEach(function(c){c.style.display='block';c.style.left=(f*100)+'%';});
 document.querySelectorAll('.read').forEach(function(r){var s=D.series[r.dataset.s];if(!s)return;
  var m=s.m[k],lo=s.n[k],hi=s.x[k];var t=fmt(s,m);
  if(m!==null&&lo!==null&&hi!==null&&fmt(s,lo)!==fmt(s,hi))t+=' ('+fmt(s,lo)+' to '+fmt(s,hi)+')';r.textContent=t;});
 var lim=D.limiting[k];
 bar.textContent=(k*D.step_s).toFixed(D.step_s<0.1?3:1)+' s to '+((k+1)*D.step_s).toFixed(D.step_s<0.1?3:1)+' s'+
  (lim>=0?' \u00b7 limiting unit '+D.limiting_labels[lim]:'');
}
function at(e){var r=e.currentTarget.getBoundingClientRect();var x=(e.touches?e.touches[0].clientX:e.clientX);show((x-r.left)/r.width);}
document.querySelectorAll('.plot').forEach(function(p){p.addEventListener('mousemove',at);p.addEventListener('touchmove',at,{passive:true});});
})();
)";

}  // namespace

struct HtmlRenderer::State {
  State(std::shared_ptr<detail::SharedTimeline> shared, const ReportInput& input,
        const detail::TimelineOptions& options)
      : timeline(std::move(shared)), who(timeline->join(input, options)) {}
  std::shared_ptr<detail::SharedTimeline> timeline;
  std::size_t who;
};

HtmlRenderer::HtmlRenderer(std::filesystem::path path, int bins, double smooth_s,
                           std::shared_ptr<detail::SharedTimeline> timeline)
    : path_(std::move(path)), bins_(bins), smooth_s_(smooth_s), timeline_(std::move(timeline)) {}
HtmlRenderer::~HtmlRenderer() = default;

void HtmlRenderer::begin(const ReportInput& input) {
  detail::TimelineOptions options;
  options.max_bins = static_cast<std::size_t>(std::max(1, bins_));
  options.smooth_s = smooth_s_;
  state_ = std::make_unique<State>(timeline_ ? timeline_ : std::make_shared<detail::SharedTimeline>(), input,
                                   options);
}

void HtmlRenderer::sample(const WalkedSample& w) {
  state_->timeline->sample(state_->who, w);
}

void HtmlRenderer::finish(const ReportInput& input) {
  const json& report = input.report;
  const Timeline t = state_->timeline->finish(state_->who, input);
  state_.reset();
  const recording::TimeNs lo = t.grid.origin_ns, hi = t.grid.end_ns();
  Page p{report, t, static_cast<double>(hi - lo) / 1e9, std::nullopt, {}};
  for (const TimelineSeries& s : t.series) p.shown.push_back(shown(s));
  const json& w = report.at("window");
  if (w.value("found", false)) {
    auto frac = [&](recording::TimeNs ns) {
      return std::clamp(static_cast<double>(ns - lo) / static_cast<double>(hi - lo), 0.0, 1.0);
    };
    p.window = std::make_pair(frac(w.at("start_ns").get<recording::TimeNs>()),
                              frac(w.at("end_ns").get<recording::TimeNs>()));
  }
  std::vector<bool> drawn(t.series.size(), false);
  auto members = [&](const std::vector<std::size_t>& idx) {
    std::vector<Member> m;
    for (std::size_t i = 0; i < idx.size(); ++i) {
      m.push_back({idx[i], i});
      drawn[idx[i]] = true;
    }
    return m;
  };
  const json& run = report.at("results");
  // A unit's mean over the whole run and, beside it, over the steady window, which the cards show
  // (docs/report.md#reporthtml): a title that read the run's 16.7% under a card's 38.8% misled.
  const json* window_results = w.value("found", false) ? &w.at("results") : nullptr;
  auto unit_mean = [&](const char* list, const std::string& key) -> std::string {
    auto mean_of = [&](const json& span) -> std::string {
      for (const json& u : span.value(list, json::array()))
        if (u.value("key", "") == key) {
          auto m = number(u, "mean_pct");
          return m ? one_decimal(*m) + "%" : "n/a (" + reason(u, "mean_pct") + ")";
        }
      return "n/a";
    };
    std::string out = "mean of peak: whole run " + mean_of(run);
    if (window_results) out += ", steady window " + mean_of(*window_results);
    return out;
  };

  const json& gpu = report.at("gpu");
  std::string html = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  html += "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n";
  html += fmt::format("<title>diescope report: {} ({})</title>\n", escape(gpu.value("model", "")),
                      escape(report.at("source").value("recording", "")));
  html += fmt::format("<style>{}</style>\n</head>\n<body>\n", kStyle);
  html += "<h1>diescope report</h1>\n";
  html += fmt::format(
      "<p class=\"meta\">{} ({}, driver {}) &middot; {} &middot; {:.2f} s run &middot; {} &middot; "
      "schema {} &middot; method {}</p>\n",
      escape(gpu.value("model", "")), escape(gpu.value("chip", "")), escape(gpu.value("driver", "")),
      escape(report.value("run_type", "")), p.span_s, escape(report.at("source").value("recording", "")),
      report.value("schema", 0), report.value("method", 0));
  // A capture's page leads with why it was taken (docs/agent.md#what-a-capture-holds).
  html += detail::capture_box_html(report);
  html += cards(report);
  html += "<div class=\"bar\" id=\"readout\">Point at a chart to read its values.</div>\n";

  // The run: DIE-Util beside GPU-Util, then the limiting unit per stretch of time.
  html += "<h2 id=\"run\">Over the run</h2>\n";
  std::vector<std::size_t> headline = t.of(Role::die_util);
  for (std::size_t i : t.of(Role::gpu_util)) headline.push_back(i);
  html += chart(
      p, "DIE-Util and GPU-Util",
      fmt::format("time-weighted means of {} bins of {:.3g} s; the band spans each bin's lowest to highest "
                  "value{}",
                  t.grid.bins, static_cast<double>(t.grid.step_ns) / 1e9,
                  p.window ? "; the steady window is shaded" : ""),
      members(headline), 100.0, 200, "main", {}, false);
  const std::vector<int> limiting = t.limiting_per_bin();
  std::vector<std::string> limiting_labels;
  for (std::size_t i : t.of(Role::limiting_share)) limiting_labels.push_back(t.series[i].label);
  html +=
      "<div class=\"chart\"><div class=\"head\"><span class=\"title\">Limiting unit</span> <span "
      "class=\"sub\">the "
      "unit busiest for the longest time in each bin</span></div>" +
      strip(p, limiting, {}, "") + "</div>\n";
  html += "<div class=\"keys\">";
  for (std::size_t i = 0; i < limiting_labels.size(); ++i)
    if (std::find(limiting.begin(), limiting.end(), static_cast<int>(i)) != limiting.end())
      html +=
          fmt::format("<span><i style=\"background:{}\"></i>{}</span>", color(i), escape(limiting_labels[i]));
  html += "</div>\n" + time_axis(p);

  // Every unit, each on its own 0..100% axis; then diagnostics and counted rates.
  html += "<h2 id=\"units\">Units</h2>\n<div class=\"grid2\">\n";
  // Each unit in its colour of the limiting-unit strip.
  std::size_t unit_colour = 0;
  for (std::size_t i : t.of(Role::unit)) {
    drawn[i] = true;
    html += chart(p, t.series[i].label, unit_mean("units", t.series[i].key), {{i, unit_colour++}}, 100.0, 70,
                  "unit");
  }
  for (std::size_t i : t.of(Role::engine)) {
    drawn[i] = true;
    html += chart(p, t.series[i].label, "NVML engine; " + unit_mean("units", t.series[i].key),
                  {{i, unit_colour++}}, 100.0, 70, "unit");
  }
  html += "</div>\n";
  const std::vector<std::size_t> diags = t.of(Role::diagnostic), rates = t.of(Role::rate);
  if (!diags.empty() || !rates.empty()) {
    html += "<h2 id=\"diagnostics\">Diagnostics and counted rates</h2>\n<div class=\"grid2\">\n";
    for (std::size_t i : diags)
      html +=
          chart(p, t.series[i].label, "diagnostic, not part of DIE-Util", members({i}), 100.0, 70, "diag");
    for (std::size_t i : rates)
      html += chart(p, t.series[i].label + " per second", "counted", members({i}), std::nullopt, 70, "rate");
    html += "</div>\n";
  }

  // Clocks, power limit, throttle reasons.
  html += "<h2 id=\"clocks\">Clocks, power and throttle reasons</h2>\n";
  std::vector<std::size_t> clocks = t.of(Role::sm_clock);
  for (std::size_t i : t.of(Role::mem_clock)) clocks.push_back(i);
  if (clocks.empty()) {
    html += "<p class=\"empty\">The recording holds no clock readings.</p>\n";
  } else {
    html += "<div class=\"grid2\">\n";
    for (std::size_t i = 0; i < clocks.size(); ++i)
      html += chart(p, t.series[clocks[i]].label, "MHz", {{clocks[i], 2 + i}}, std::nullopt, 70, "clock");
    for (std::size_t i : clocks) drawn[i] = true;
    // Power itself beside its limit (docs/report.md#reporthtml), both as step lines; a recording
    // before format 4 holds the limit alone.
    const std::vector<std::size_t> draw = t.of(Role::power_draw), limit = t.of(Role::power_limit);
    if (!draw.empty()) {
      std::vector<Member> m{{draw.front(), 5}};
      std::vector<std::string> legends{"draw"};
      if (!limit.empty()) {
        m.push_back({limit.front(), 4});
        legends.emplace_back("limit");
      }
      html += chart(p, "power", "W, NVML's draw as read and the enforced limit", m, std::nullopt, 70, "power",
                    legends);
      for (const Member& x : m) drawn[x.series] = true;
    } else {
      for (std::size_t i : limit) {
        html += chart(p, t.series[i].label, "enforced, W (the recording holds no power draw)", {{i, 4}},
                      std::nullopt, 70, "power");
        drawn[i] = true;
      }
    }
    html += "</div>\n";
  }
  const std::vector<std::size_t> throttle = t.of(Role::throttle);
  if (throttle.empty()) {
    html += "<p class=\"empty\">No throttle reason held the clocks.</p>\n";
  } else {
    html +=
        "<p class=\"sub\">Throttle reasons: the darker, the larger the share of the bin's time it held the "
        "clocks.</p>\n";
    for (std::size_t i : throttle) {
      const metrics::Envelope& e = t.series[i].envelope;
      std::vector<int> cat(e.mean.size(), -1);
      std::vector<double> opacity(e.mean.size(), 0);
      for (std::size_t k = 0; k < e.mean.size(); ++k) {
        if (!std::isfinite(e.mean[k])) continue;
        cat[k] = 0;
        opacity[k] = e.mean[k] / 100;
      }
      html += fmt::format(
                  "<div class=\"chart\"><div class=\"head\"><span class=\"title\">{}</span> <span "
                  "class=\"sub\">share of time</span><span class=\"legend\"><b class=\"read\" "
                  "data-s=\"{}\"></b></span></div>",
                  escape(t.series[i].label), i) +
              strip(p, cat, opacity, "#d35400") + "</div>\n";
      drawn[i] = true;
    }
  }
  html += time_axis(p);

  // Host panels: whatever host streams the recording carries, grouped by entity and unit.
  html += "<h2 id=\"host\">Host</h2>\n";
  const std::vector<std::size_t> host = t.of(Role::host);
  if (host.empty()) {
    html +=
        "<p class=\"empty\">This recording holds no host streams (CPU, memory, disk, the command's "
        "processes): it was recorded without host probes.</p>\n";
  } else {
    html += "<div class=\"grid2\">\n";
    for (const detail::HostPanel& panel : detail::host_panels(t, kMaxHostLines)) {
      std::vector<Member> m;
      for (std::size_t j = 0; j < panel.series.size(); ++j) {
        m.push_back({panel.series[j], j});
        drawn[panel.series[j]] = true;
      }
      const std::string sub = panel.left_out > 0
                                  ? fmt::format("the {} with the highest means; {} more not drawn",
                                                panel.series.size(), panel.left_out)
                                  : std::string();
      // A percent's peak is its axis; a level's peak (memory's capacity, say) would flatten the lines.
      const bool percent = t.series[panel.series.front()].descriptor.unit == metrics::Unit::pct;
      html += chart(p, panel.title, sub, m, percent ? panel.peak : std::nullopt, 90, "host", panel.legends);
    }
    html += "</div>\n";
  }

  // Notes, in time order, with their time after the run's start.
  html += "<h2 id=\"notes\">Notes</h2>\n";
  const json& notes = report.at("notes");
  if (notes.empty()) {
    html += "<p class=\"empty\">No notes.</p>\n";
  } else {
    html += "<ul class=\"notes\">\n";
    std::size_t raw = 0;
    for (const json& n : notes) {
      // Raw clock readings (CUPTI's and the host's nanosecond counters) help no reader here: they
      // stay in report.json and the terminal's notes (docs/report.md#reporthtml).
      if (has_raw_timestamp(n.value("text", ""))) {
        ++raw;
        continue;
      }
      const double at_s = static_cast<double>(n.value("ts_ns", recording::TimeNs{0}) -
                                              run.at("start_ns").get<recording::TimeNs>()) /
                          1e9;
      html += fmt::format("<li><span class=\"t\">{:+.3f} s</span> <b>{}</b> {}</li>\n", at_s,
                          escape(n.value("topic", "")), escape(n.value("text", "")));
    }
    if (raw > 0)
      html += fmt::format(
          "<li><span class=\"t\"></span> {} note{} of raw clock readings (nanosecond counters) left out "
          "here: report.json and the terminal keep them</li>\n",
          raw, raw == 1 ? "" : "s");
    html += "</ul>\n";
  }
  html += "<h2 id=\"terminal\">As the terminal prints it</h2>\n<pre>" + escape(render_terminal(report)) +
          "</pre>\n";
  html += "<script type=\"application/json\" id=\"diescope-data\">" +
          data_block(p, drawn, limiting, limiting_labels) + "</script>\n";
  html += fmt::format("<script>{}</script>\n", kScript);
  html += "</body>\n</html>\n";
  core::write_file_atomically(path_, html);
}

}  // namespace diescope::report
