// Post-processing written once for every metric (docs/metrics.md#post-processing): the numeric steps
// are the same for a counter, a ratio and a throughput; the descriptor decides how the result is read
// and drawn.
//
// Series are (ts_ns, value) points in time order. NaN marks a value that could not be read: it is left
// out of every mean, never taken as 0, and a result with nothing to stand on is NaN too.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
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

// The streaming form of the boxcar, over rows of `columns` values that share their times (one metric,
// or every column of a chip sample): a row comes out once every row of its window has gone in, so
// memory holds one kernel's rows, whatever the length of the stream. boxcar() below is this class
// over one column. Rows carry a caller's tag back out with them.
class BoxcarWindow {
 public:
  using Emit = std::function<void(std::uint64_t tag, std::int64_t ts_ns, std::span<const double> values)>;
  // Refuses a kernel that is not a positive number of seconds.
  static Expected<BoxcarWindow> make(double kernel_s, std::size_t columns);
  // Adds a row (`values.size()` must be `columns`) and emits every row whose window is now complete.
  // Throws std::invalid_argument when `ts_ns` is earlier than the row before: the caller's stream is
  // out of order, which its reader already refuses.
  void push(std::int64_t ts_ns, std::span<const double> values, std::uint64_t tag, const Emit& emit);
  // Emits the rows still waiting (their windows end with the stream).
  void finish(const Emit& emit);
  std::int64_t kernel_ns() const { return before_ns_ + after_ns_; }

 private:
  BoxcarWindow(std::int64_t kernel_ns, std::size_t columns);
  struct Row {
    std::int64_t ts_ns;
    std::uint64_t tag;
    std::vector<double> values;
  };
  void emit_next(const Emit& emit);
  std::int64_t before_ns_, after_ns_;  // a row's window is [t - before, t + after)
  std::size_t columns_;
  std::deque<Row> rows_;   // from the oldest row still in a window to the newest
  std::size_t first_ = 0;  // rows_[first_, end_) are in the window of rows_[next_]
  std::size_t end_ = 0;
  std::size_t next_ = 0;  // the next row to come out
  std::vector<long double> sums_;
  std::vector<std::int64_t> counts_;
  std::vector<double> out_;
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
// One count over [from_ns, to_ns) as a per-second rate; NaN when the interval is empty. The one rule
// behind counts_to_rates and the pipeline.
double count_to_rate(double count, std::int64_t from_ns, std::int64_t to_ns);

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

// The pipeline (docs/metrics.md#the-pipeline): every stream a renderer draws goes through the same
// steps, in this order, as its values arrive: counts to rates, unit conversion, percent of peak,
// boxcar smoothing, and then onto a grid shared by all streams as an envelope (per bin: the lowest
// value, the time-weighted mean, the highest). Memory holds the grid and one smoothing kernel per
// stream, never the stream, so a day-long recording draws in the same memory as a minute.

// A regular grid: bin k covers [origin + k*step, origin + (k+1)*step).
struct Grid {
  std::int64_t origin_ns = 0;
  std::int64_t step_ns = 1;
  std::size_t bins = 0;
  std::int64_t end_ns() const { return origin_ns + step_ns * static_cast<std::int64_t>(bins); }
  // The grid over [lo_ns, hi_ns) in at most `max_bins` bins, none shorter than `min_step_ns` (so a
  // short run is not cut finer than its samples). Refuses an empty span or no bins.
  static Expected<Grid> covering(std::int64_t lo_ns, std::int64_t hi_ns, std::size_t max_bins,
                                 std::int64_t min_step_ns = 1);
};

// A stream on the grid: NaN in every field of a bin no value reached, so gaps stay visible.
struct Envelope {
  std::vector<double> min, mean, max;
};

// What the pipeline does to one stream's values before they reach the grid.
struct StreamSteps {
  bool to_rate = false;            // values are counts over their span: make them per second
  std::optional<Unit> convert_to;  // then convert (conversion_factor) to this unit
  bool percent_of_peak = false;    // then divide by the descriptor's peak, times 100
  bool smooth = true;              // then smooth, when the pipeline smooths (not for a state's share)
};

struct EnvelopeSeries {
  MetricDescriptor descriptor;  // after the steps: the unit (and peak) the values now have
  Envelope envelope;
};

// Whether a probe's value covers the interval since its stream's previous value (a rate, a share:
// percent, ratio, per second, hertz) rather than a level at one instant (bytes, requests): the
// former goes to the pipeline as span(), the latter as point() (docs/metrics.md#the-pipeline).
bool value_covers_interval(const MetricDescriptor& d);

class Pipeline {
 public:
  // `smooth_s` 0: no smoothing; otherwise the boxcar kernel, refused when not a positive number.
  static Expected<Pipeline> make(const Grid& grid, double smooth_s = 0);
  // A stream and its steps; refused when a step does not apply (a rate of a percent, percent of a
  // peak the descriptor lacks, a conversion between unrelated units). Returns the stream's id.
  Expected<std::size_t> add(const MetricDescriptor& descriptor, const StreamSteps& steps = {});
  // A value that holds over [t0_ns, t1_ns) (a chip sample, a probe interval): time-weighted into
  // each bin it overlaps, and its rate (to_rate) is over that span.
  void span(std::size_t id, std::int64_t t0_ns, std::int64_t t1_ns, double value);
  // span(first + i, t0_ns, t1_ns, values[i]) for each i in turn: one span of the same times into
  // consecutive streams (a chip sample's columns), at less cost per stream.
  void spans(std::size_t first, std::int64_t t0_ns, std::int64_t t1_ns, std::span<const double> values);
  // A reading at one instant (a clock): counted once in its bin; its rate (to_rate) is over the time
  // since the stream's previous point.
  void point(std::size_t id, std::int64_t ts_ns, double value);
  // The pipeline's row: streams, none with a rate or smoothing, that take one value each over the
  // same span, always together (a chip sample's columns), at less cost per value than span(): the
  // span's bins are found once for all of them and each bin's values are added stream by stream,
  // in the order they came, as span() adds them (docs/report.md#one-pass). A stream of the row
  // takes values through row() alone (span(), spans() and point() refuse it). Returns false, and
  // sets nothing, when a stream has a rate or is smoothed; throws std::logic_error when a row was
  // set already or an id is unknown or named twice.
  bool set_row(std::span<const std::size_t> ids);
  // span(ids[i], t0_ns, t1_ns, values[i]) for each stream i of the row, values.size() of them (a
  // NaN value reaches no bin, as with span()).
  void row(std::int64_t t0_ns, std::int64_t t1_ns, std::span<const double> values);
  // The envelopes, one per stream in the order added. The pipeline is spent afterwards.
  std::vector<EnvelopeSeries> finish();
  const Grid& grid() const { return grid_; }
  std::size_t size() const { return streams_.size(); }
  const MetricDescriptor& descriptor(std::size_t id) const;  // after the steps

 private:
  struct Stream;
  struct Lane;
  Pipeline(const Grid& grid, double smooth_s);
  void to_grid(std::size_t id, std::int64_t t0_ns, std::int64_t t1_ns, double value);
  // The bin holding `t_ns` (origin_ns <= t_ns < end_ns()); the last bin found is kept, since spans
  // arrive in time order and most fall in it or the next (no division then).
  std::size_t bin_of(std::int64_t t_ns);
  // The bins a span [t0_ns, t1_ns) overlaps and by how much, into pieces_.
  void split(std::int64_t t0_ns, std::int64_t t1_ns);
  // A value and its weight waiting to be added to its bin (flush_pending()).
  struct Pending {
    double value;
    double weight;
  };
  static constexpr std::size_t kPendingProducts = 256;
  // Each bin's weight, lowest and highest value side by side: a value touches one place, not three.
  struct Bin {
    double weight = 0;
    double lo = std::numeric_limits<double>::quiet_NaN();
    double hi = std::numeric_limits<double>::quiet_NaN();
  };
  // What a value entering the grid touches, for every stream side by side (the rest of a stream,
  // its descriptor and smoothing, is not read per value): its factor, its bins, its sums and the
  // values not yet added to them (flush_pending()), in the stream's own storage.
  struct Lane {
    double factor = 1;
    bool plain = true;  // no rate and no smoothing: a value goes to the grid as it comes
    Bin* bins = nullptr;
    long double* weighted = nullptr;
    Pending* pending = nullptr;  // kPendingProducts of them
    std::size_t pending_count = 0;
    std::size_t pending_bin = 0;
    bool in_row = false;  // takes values through row() alone
  };
  static void flush_pending(Lane& l);
  static void enter(Lane& l, std::size_t k, double weight, double value);
  // The row's values not yet added to their bin, all for one bin: kRowCapacity per stream, stream
  // by stream (a stream's values side by side, the order they came), and each span's weight once.
  static constexpr std::size_t kRowCapacity = 128;
  struct Row {
    std::vector<std::size_t> ids;
    std::vector<double> factors;
    std::vector<double> values;   // ids.size() * kRowCapacity
    std::vector<double> weights;  // kRowCapacity
    std::size_t count = 0;
    std::size_t bin = 0;
  };
  void flush_row();
  void check_not_in_row(std::size_t id) const;
  Grid grid_;
  double smooth_s_;
  std::size_t last_bin_ = 0;
  std::int64_t last_bin_lo_ns_ = 0;  // origin_ns + last_bin_ * step_ns
  std::vector<std::shared_ptr<Stream>> streams_;
  std::vector<Lane> lanes_;  // lanes_[id] is streams_[id]'s
  // The last span's bins and overlaps (split()), kept for the next span of the same times.
  struct Piece {
    std::size_t bin;
    double weight;
  };
  std::vector<Piece> pieces_;
  std::int64_t pieces_t0_ = 0;
  std::int64_t pieces_t1_ = 0;
  bool pieces_valid_ = false;
  Row row_;
};

}  // namespace diescope::metrics
