#include "diescope/metrics/postprocess.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <set>

namespace diescope::metrics {
namespace {

constexpr double kNsPerSecond = 1e9;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr std::int64_t kMaxResampleBins =
    100'000'000;  // a grid larger than this is a mistake in step or origin

std::string number_text(double v) {
  return fmt::format("{:g}", v);
}

std::optional<MetricError> check_time_order(std::span<const Point> series, std::string_view what) {
  for (std::size_t i = 1; i < series.size(); ++i) {
    if (series[i].ts_ns < series[i - 1].ts_ns) {
      return MetricError{std::string(what) + ": timestamps go backwards at point " + std::to_string(i) +
                         " (" + std::to_string(series[i].ts_ns) + " ns after " +
                         std::to_string(series[i - 1].ts_ns) + " ns); sort the series first"};
    }
  }
  return std::nullopt;
}

Expected<std::int64_t> seconds_to_ns(double seconds, std::string_view what) {
  if (!std::isfinite(seconds) || seconds <= 0) {
    return MetricError{std::string(what) + " must be a positive number of seconds, got " +
                       number_text(seconds)};
  }
  const double ns = std::round(seconds * kNsPerSecond);
  if (ns < 1 || ns > 9e18) {
    return MetricError{std::string(what) + " of " + number_text(seconds) + " s is outside 1 ns to 9e9 s"};
  }
  return static_cast<std::int64_t>(ns);
}

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

// Running mean of the finite values that enter and leave a window.
struct FiniteMean {
  long double sum = 0;
  std::int64_t count = 0;
  void add(double v) {
    if (!std::isfinite(v)) return;
    sum += v;
    ++count;
  }
  void remove(double v) {
    if (!std::isfinite(v)) return;
    sum -= v;
    --count;
  }
  double mean() const {
    return count > 0 ? static_cast<double>(sum / static_cast<long double>(count)) : kNaN;
  }
};

double round_to_significant(double x, int digits) {
  if (x == 0 || !std::isfinite(x)) return x;
  const double scale = std::pow(10.0, digits - 1 - static_cast<int>(std::floor(std::log10(std::fabs(x)))));
  return std::round(x * scale) / scale;
}

std::string_view base_symbol(Unit unit) {
  switch (unit) {
    case Unit::count:
      return "";
    case Unit::bytes:
      return "B";
    case Unit::bytes_per_second:
      return "B/s";
    case Unit::pct:
      return "%";
    case Unit::ratio:
      return "";
    case Unit::hz:
      return "Hz";
    case Unit::cycles:
      return "cycles";
    case Unit::requests:
      return "requests";
    case Unit::mhz:
      return "MHz";
    case Unit::watts:
      return "W";
  }
  return "";
}

bool takes_prefix(Unit unit) {
  return unit != Unit::pct && unit != Unit::ratio && unit != Unit::mhz;
}

}  // namespace

Expected<Series> boxcar(std::span<const Point> series, double kernel_s) {
  auto kernel_ns = seconds_to_ns(kernel_s, "boxcar kernel");
  if (!kernel_ns) return kernel_ns.error();
  if (auto e = check_time_order(series, "boxcar")) return *e;
  const std::int64_t before = *kernel_ns / 2;  // window is [t - before, t + after)
  const std::int64_t after = *kernel_ns - before;
  Series out;
  out.reserve(series.size());
  FiniteMean window;
  std::size_t first = 0, end = 0;  // the window holds points [first, end)
  for (const Point& p : series) {
    while (end < series.size() && series[end].ts_ns < p.ts_ns + after) window.add(series[end++].value);
    while (first < end && series[first].ts_ns < p.ts_ns - before) window.remove(series[first++].value);
    out.push_back({p.ts_ns, window.mean()});
  }
  return out;
}

Expected<Series> resample(std::span<const Point> series, double step_s, std::int64_t origin_ns) {
  auto step_ns = seconds_to_ns(step_s, "resample step");
  if (!step_ns) return step_ns.error();
  if (auto e = check_time_order(series, "resample")) return *e;
  if (series.empty()) return Series{};
  const std::int64_t first_bin = floor_div(series.front().ts_ns - origin_ns, *step_ns);
  const std::int64_t last_bin = floor_div(series.back().ts_ns - origin_ns, *step_ns);
  if (last_bin - first_bin >= kMaxResampleBins) {
    return MetricError{"resample: a " + number_text(step_s) + " s step over this series makes " +
                       std::to_string(last_bin - first_bin + 1) + " bins; use a longer step"};
  }
  Series out;
  out.reserve(static_cast<std::size_t>(last_bin - first_bin + 1));
  std::size_t i = 0;
  for (std::int64_t bin = first_bin; bin <= last_bin; ++bin) {
    FiniteMean mean;
    while (i < series.size() && floor_div(series[i].ts_ns - origin_ns, *step_ns) == bin)
      mean.add(series[i++].value);
    out.push_back({origin_ns + bin * *step_ns, mean.mean()});
  }
  return out;
}

Series counts_to_rates(std::span<const Point> counts) {
  Series out;
  out.reserve(counts.size());
  for (std::size_t i = 0; i < counts.size(); ++i) {
    double rate = kNaN;
    if (i > 0 && counts[i].ts_ns > counts[i - 1].ts_ns) {
      rate = counts[i].value / (static_cast<double>(counts[i].ts_ns - counts[i - 1].ts_ns) / kNsPerSecond);
    }
    out.push_back({counts[i].ts_ns, rate});
  }
  return out;
}

std::optional<double> conversion_factor(Unit from, Unit to) {
  if (from == to) return 1.0;
  if (from == Unit::mhz && to == Unit::hz) return 1e6;
  if (from == Unit::hz && to == Unit::mhz) return 1e-6;
  if (from == Unit::ratio && to == Unit::pct) return 100.0;
  if (from == Unit::pct && to == Unit::ratio) return 0.01;
  return std::nullopt;
}

Expected<Series> convert(std::span<const Point> series, Unit from, Unit to) {
  auto factor = conversion_factor(from, to);
  if (!factor) {
    return MetricError{
        "cannot convert " + std::string(to_string(from)) + " to " + std::string(to_string(to)) +
        (rate_unit(from) == to ? " without the time each value covers; use counts_to_rates" : "")};
  }
  Series out(series.begin(), series.end());
  for (Point& p : out) p.value *= *factor;
  return out;
}

DisplayScale display_scale(Unit unit, double magnitude) {
  static constexpr std::array<std::string_view, 6> kPrefixes = {"", "k", "M", "G", "T", "P"};
  std::size_t power = 0;
  const double rounded = std::fabs(round_to_significant(magnitude, 3));
  if (takes_prefix(unit) && std::isfinite(rounded) && rounded >= 1000) {
    power = std::min(kPrefixes.size() - 1, static_cast<std::size_t>(std::floor(std::log10(rounded) / 3)));
  }
  return {std::pow(1000.0, static_cast<double>(power)),
          std::string(kPrefixes[power]) + std::string(base_symbol(unit))};
}

std::string format_value(double value, Unit unit) {
  if (std::isnan(value)) return "n/a";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  if (unit == Unit::pct) return fmt::format("{:.1f}%", value);
  const DisplayScale scale = display_scale(unit, value);
  // Decimals for 3 significant digits, judged after rounding (9.996 shows as 10.0); digits left of
  // the point are never dropped (1987 MHz stays 1987).
  const double shown = value / scale.divisor;
  const double rounded = std::fabs(round_to_significant(shown, 3));
  int decimals = 0;
  if (rounded != 0) decimals = std::max(0, 2 - static_cast<int>(std::floor(std::log10(rounded))));
  std::string out = fmt::format("{:.{}f}", shown, decimals);
  if (!scale.symbol.empty()) out += " " + scale.symbol;
  return out;
}

MaybeValue percent_of_peak(double value, const MetricDescriptor& d) {
  if (!d.peak) {
    return {kNaN, "no peak for " + d.full_name() + ": " +
                      (d.no_peak_reason.empty() ? std::string("none was given") : d.no_peak_reason)};
  }
  if (!std::isfinite(*d.peak) || *d.peak <= 0) {
    return {kNaN, "the peak of " + d.full_name() + " is not a positive number"};
  }
  if (std::isnan(value)) return {kNaN, "no reading of " + d.full_name()};
  return {value / *d.peak * 100.0, {}};
}

Expected<Series> percent_of_peak(std::span<const Point> series, const MetricDescriptor& d) {
  MaybeValue probe = percent_of_peak(0.0, d);  // checks the peak alone
  if (!probe.available()) return MetricError{probe.reason};
  Series out(series.begin(), series.end());
  for (Point& p : out) p.value = std::isnan(p.value) ? kNaN : p.value / *d.peak * 100.0;
  return out;
}

std::vector<Panel> group_into_panels(std::span<const TaggedSeries> all) {
  std::vector<Panel> panels;
  for (std::size_t i = 0; i < all.size(); ++i) {
    const MetricDescriptor& d = all[i].descriptor;
    auto it = std::find_if(panels.begin(), panels.end(),
                           [&](const Panel& p) { return p.entity == d.entity() && p.unit == d.unit; });
    if (it == panels.end()) {
      panels.push_back(
          {d.entity(), d.unit, d.entity() + " (" + std::string(to_string(d.unit)) + ")", d.peak, {}});
      it = panels.end() - 1;
    }
    it->series.push_back({i, {}});
  }
  for (Panel& panel : panels) {
    std::set<std::string> names;
    std::set<Scope> scopes;
    for (const PanelSeries& s : panel.series) {
      const MetricDescriptor& d = all[s.index].descriptor;
      names.insert(d.full_name());
      scopes.insert(d.scope);
      if (panel.peak != d.peak) panel.peak.reset();  // no shared reference line
    }
    std::stable_sort(panel.series.begin(), panel.series.end(),
                     [&](const PanelSeries& a, const PanelSeries& b) {
                       const MetricDescriptor& x = all[a.index].descriptor;
                       const MetricDescriptor& y = all[b.index].descriptor;
                       if (x.scope != y.scope) return x.scope < y.scope;
                       return x.full_name() < y.full_name();
                     });
    for (PanelSeries& s : panel.series) {
      const MetricDescriptor& d = all[s.index].descriptor;
      if (names.size() > 1 && scopes.size() > 1) {
        s.legend = d.full_name() + " · " + d.scope.label();
      } else if (scopes.size() > 1) {
        s.legend = d.scope.label();
      } else {
        s.legend = d.full_name();
      }
    }
  }
  return panels;
}

}  // namespace diescope::metrics
