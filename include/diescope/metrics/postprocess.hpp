// Post-processing written once for every metric (docs/metrics.md#post-processing): the numeric steps
// are the same for a counter, a ratio and a throughput; the descriptor decides how the result is read
// and drawn.
//
// Series are (ts_ns, value) points in time order. NaN marks a value that could not be read: it is left
// out of every mean, never taken as 0, and a result with nothing to stand on is NaN too.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "diescope/metrics/descriptor.hpp"
#include "diescope/metrics/expected.hpp"

namespace diescope::metrics {

struct Point {
  std::int64_t ts_ns = 0;
  double value = std::numeric_limits<double>::quiet_NaN();
  bool operator==(const Point&) const = default;
};
using Series = std::vector<Point>;

// A figure or the reason it is missing (value NaN, reason set).
struct MaybeValue {
  double value = std::numeric_limits<double>::quiet_NaN();
  std::string reason;
  bool available() const { return value == value; }
};

// Centred boxcar: each point becomes the mean of the finite values whose time lies in
// [t - kernel/2, t + kernel/2). Same timestamps out as in. Refuses a kernel that is not a positive
// number of seconds and timestamps that go backwards.
Expected<Series> boxcar(std::span<const Point> series, double kernel_s);

// Onto a regular grid: bin k covers [origin + k*step, origin + (k+1)*step) and its point, stamped at
// the bin's start, is the mean of the finite values in it; a bin with none is NaN, so gaps stay
// visible. Bins run from the first point's bin to the last's. A shared origin aligns several series.
Expected<Series> resample(std::span<const Point> series, double step_s, std::int64_t origin_ns);

// Per-second rates from per-interval counts: each count covers the time since the previous point. The
// first point has no interval before it, and a non-increasing time gives none either: both NaN.
Series counts_to_rates(std::span<const Point> counts);

// Factor that turns a value in `from` into `to` (mhz<->hz, pct<->ratio, or 1 for the same unit).
std::optional<double> conversion_factor(Unit from, Unit to);
Expected<Series> convert(std::span<const Point> series, Unit from, Unit to);

// How a value is shown: divided by `divisor` and followed by `symbol` ("GB/s", "%", "MHz").
struct DisplayScale {
  double divisor = 1;
  std::string symbol;
};
// Picks the decimal (SI) prefix that puts `magnitude`, rounded to 3 significant digits, in [1, 1000).
// Percent, ratio and clock units are never prefixed.
DisplayScale display_scale(Unit unit, double magnitude);
// "39.5 GB", "3.94 TB/s", "85.0%" (one decimal, as screens show percents), "1980 MHz", "n/a" for NaN.
std::string format_value(double value, Unit unit);

// value / peak * 100. Without a peak, or without a value, NaN with the reason.
MaybeValue percent_of_peak(double value, const MetricDescriptor& descriptor);
// The whole series as percent of peak; refused with the reason when the descriptor has no peak.
Expected<Series> percent_of_peak(std::span<const Point> series, const MetricDescriptor& descriptor);

// Panels for drawing: one per (entity, unit), in order of first appearance, so each panel has one
// y-axis; inside, one series per (name, scope), ordered by scope and then name.
struct TaggedSeries {
  MetricDescriptor descriptor;
  Series points;
};
struct PanelSeries {
  std::size_t index = 0;  // into the grouped input
  std::string legend;     // scope label, full name, or both: whatever tells the panel's series apart
};
struct Panel {
  std::string entity;
  Unit unit = Unit::count;
  std::string title;           // "dram (bytes_per_second)"
  std::optional<double> peak;  // dashed reference line, when every series shares one peak
  std::vector<PanelSeries> series;
};
std::vector<Panel> group_into_panels(std::span<const TaggedSeries> all);

}  // namespace diescope::metrics
