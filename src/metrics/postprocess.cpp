#include "diescope/metrics/postprocess.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <set>
#include <stdexcept>

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

BoxcarWindow::BoxcarWindow(std::int64_t kernel_ns, std::size_t columns)
    : before_ns_(kernel_ns / 2),
      after_ns_(kernel_ns - kernel_ns / 2),
      columns_(columns),
      sums_(columns, 0),
      counts_(columns, 0),
      out_(columns, kNaN) {}

Expected<BoxcarWindow> BoxcarWindow::make(double kernel_s, std::size_t columns) {
  auto kernel_ns = seconds_to_ns(kernel_s, "boxcar kernel");
  if (!kernel_ns) return kernel_ns.error();
  return BoxcarWindow(*kernel_ns, columns);
}

void BoxcarWindow::emit_next(const Emit& emit) {
  const std::int64_t t = rows_[next_].ts_ns;
  // The window of the row at t is [t - before, t + after): rows enter at the end, leave at the front.
  while (end_ < rows_.size() && rows_[end_].ts_ns < t + after_ns_) {
    for (std::size_t c = 0; c < columns_; ++c) {
      const double v = rows_[end_].values[c];
      if (!std::isfinite(v)) continue;
      sums_[c] += v;
      ++counts_[c];
    }
    ++end_;
  }
  while (first_ < end_ && rows_[first_].ts_ns < t - before_ns_) {
    for (std::size_t c = 0; c < columns_; ++c) {
      const double v = rows_[first_].values[c];
      if (!std::isfinite(v)) continue;
      sums_[c] -= v;
      --counts_[c];
    }
    ++first_;
  }
  for (std::size_t c = 0; c < columns_; ++c)
    out_[c] = counts_[c] > 0 ? static_cast<double>(sums_[c] / static_cast<long double>(counts_[c])) : kNaN;
  emit(rows_[next_].tag, t, out_);
  ++next_;
  // Rows before both the window and the next row are done with.
  while (first_ > 0 && next_ > 0) {
    rows_.pop_front();
    --first_;
    --end_;
    --next_;
  }
}

void BoxcarWindow::push(std::int64_t ts_ns, std::span<const double> values, std::uint64_t tag,
                        const Emit& emit) {
  if (values.size() != columns_)
    throw std::invalid_argument("boxcar: a row of " + std::to_string(values.size()) +
                                " values in a window of " + std::to_string(columns_) + " columns");
  if (!rows_.empty() && ts_ns < rows_.back().ts_ns)
    throw std::invalid_argument("boxcar: timestamps go backwards (" + std::to_string(ts_ns) + " ns after " +
                                std::to_string(rows_.back().ts_ns) + " ns)");
  rows_.push_back({ts_ns, tag, std::vector<double>(values.begin(), values.end())});
  // A row's window is complete once a row at or past its end has arrived.
  while (next_ < rows_.size() && ts_ns >= rows_[next_].ts_ns + after_ns_) emit_next(emit);
}

void BoxcarWindow::finish(const Emit& emit) {
  while (next_ < rows_.size()) emit_next(emit);
  rows_.clear();
  first_ = end_ = next_ = 0;
  std::fill(sums_.begin(), sums_.end(), 0.0L);
  std::fill(counts_.begin(), counts_.end(), 0);
}

Expected<Series> boxcar(std::span<const Point> series, double kernel_s) {
  auto window = BoxcarWindow::make(kernel_s, 1);
  if (!window) return window.error();
  if (auto e = check_time_order(series, "boxcar")) return *e;
  Series out;
  out.reserve(series.size());
  BoxcarWindow w = *window;
  const BoxcarWindow::Emit emit = [&](std::uint64_t, std::int64_t ts, std::span<const double> v) {
    out.push_back({ts, v[0]});
  };
  for (const Point& p : series) w.push(p.ts_ns, std::span<const double>(&p.value, 1), 0, emit);
  w.finish(emit);
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
    out.push_back({counts[i].ts_ns,
                   i > 0 ? count_to_rate(counts[i].value, counts[i - 1].ts_ns, counts[i].ts_ns) : kNaN});
  }
  return out;
}

double count_to_rate(double count, std::int64_t from_ns, std::int64_t to_ns) {
  if (to_ns <= from_ns) return kNaN;
  return count / (static_cast<double>(to_ns - from_ns) / kNsPerSecond);
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

Expected<Grid> Grid::covering(std::int64_t lo_ns, std::int64_t hi_ns, std::size_t max_bins,
                              std::int64_t min_step_ns) {
  if (hi_ns <= lo_ns) {
    return MetricError{"grid: the span from " + std::to_string(lo_ns) + " ns to " + std::to_string(hi_ns) +
                       " ns is empty"};
  }
  if (max_bins == 0) return MetricError{"grid: at least one bin is needed"};
  const std::int64_t span = hi_ns - lo_ns;
  const std::int64_t n =
      std::min(static_cast<std::int64_t>(std::min<std::size_t>(max_bins, 1u << 30)), kMaxResampleBins);
  std::int64_t step = std::max<std::int64_t>({1, min_step_ns, span / n + (span % n != 0 ? 1 : 0)});
  const std::int64_t bins = span / step + (span % step != 0 ? 1 : 0);
  return Grid{lo_ns, step, static_cast<std::size_t>(bins)};
}

struct Pipeline::Stream {
  MetricDescriptor descriptor;  // after the steps
  StreamSteps steps;
  double factor = 1;  // conversion, then percent of peak
  std::optional<BoxcarWindow> smooth;
  std::optional<std::int64_t> previous_point_ns;  // for a point's rate
  // The storage behind the stream's Lane (which is what a value touches).
  std::vector<long double> weighted;
  std::vector<Bin> bins;
  std::vector<Pending> pending;  // kPendingProducts slots
};

// Adds the pending values to their bin one by one in the order they came, as adding each when it
// came would: the same additions of the same numbers in the same order (the weights in double, the
// products in extended precision, the lowest and highest value compared in turn), with the bin's
// sums, weight, lowest and highest value held in registers between them rather than stored and
// loaded again for every value (an extended-precision store and load cost more than the addition,
// and each store of a bin waits for the load before it).
void Pipeline::flush_pending(Lane& l) {
  if (l.pending_count == 0) return;
  Bin& bin = l.bins[l.pending_bin];
  long double sum = l.weighted[l.pending_bin];
  double weight = bin.weight, lo = bin.lo, hi = bin.hi;
  for (std::size_t i = 0; i < l.pending_count; ++i) {
    const double value = l.pending[i].value;
    // A value of 0 adds exactly nothing to the sum (a sum from +0 never becomes -0) and is skipped:
    // a state's share of time is 0 in most bins.
    if (value != 0) sum += static_cast<long double>(value) * l.pending[i].weight;
    weight += l.pending[i].weight;
    lo = std::isnan(lo) ? value : std::min(lo, value);
    hi = std::isnan(hi) ? value : std::max(hi, value);
  }
  l.weighted[l.pending_bin] = sum;
  bin.weight = weight;
  bin.lo = lo;
  bin.hi = hi;
  l.pending_count = 0;
}

Pipeline::Pipeline(const Grid& grid, double smooth_s)
    : grid_(grid), smooth_s_(smooth_s), last_bin_lo_ns_(grid.origin_ns) {}

std::size_t Pipeline::bin_of(std::int64_t t_ns) {
  const std::int64_t step = grid_.step_ns;
  if (t_ns >= last_bin_lo_ns_ && t_ns - last_bin_lo_ns_ < step) return last_bin_;
  if (t_ns >= last_bin_lo_ns_ + step && t_ns - last_bin_lo_ns_ - step < step) {
    last_bin_lo_ns_ += step;
    return ++last_bin_;
  }
  const std::int64_t k = (t_ns - grid_.origin_ns) / step;
  last_bin_ = static_cast<std::size_t>(k);
  last_bin_lo_ns_ = grid_.origin_ns + k * step;
  return last_bin_;
}

Expected<Pipeline> Pipeline::make(const Grid& grid, double smooth_s) {
  if (grid.bins == 0 || grid.step_ns <= 0) return MetricError{"pipeline: the grid has no bins"};
  if (smooth_s != 0) {
    auto probe = BoxcarWindow::make(smooth_s, 1);
    if (!probe) return probe.error();
  }
  return Pipeline(grid, smooth_s);
}

Expected<std::size_t> Pipeline::add(const MetricDescriptor& descriptor, const StreamSteps& steps) {
  auto s = std::make_shared<Stream>();
  s->descriptor = descriptor;
  s->steps = steps;
  MetricDescriptor& d = s->descriptor;
  if (steps.to_rate) {
    auto unit = rate_unit(d.unit);
    if (!unit) {
      return MetricError{d.full_name() + ": a value in " + std::string(to_string(d.unit)) +
                         " has no rate; only counts, cycles and bytes do"};
    }
    d.unit = *unit;
    d.peak.reset();  // a peak of a count per interval says nothing per second
    d.no_peak_reason = "a rate of counts has no peak of its own";
  }
  if (steps.convert_to) {
    auto f = conversion_factor(d.unit, *steps.convert_to);
    if (!f) {
      return MetricError{d.full_name() + ": cannot convert " + std::string(to_string(d.unit)) + " to " +
                         std::string(to_string(*steps.convert_to))};
    }
    s->factor *= *f;
    if (d.peak) *d.peak *= *f;
    d.unit = *steps.convert_to;
  }
  if (steps.percent_of_peak) {
    MaybeValue probe = percent_of_peak(0.0, d);
    if (!probe.available()) return MetricError{probe.reason};
    s->factor *= 100.0 / *d.peak;
    d.unit = Unit::pct;
    d.peak = 100.0;
  }
  if (smooth_s_ != 0 && steps.smooth) s->smooth = *BoxcarWindow::make(smooth_s_, 1);
  s->weighted.assign(grid_.bins, 0.0L);
  s->pending.resize(kPendingProducts);
  s->bins.assign(grid_.bins, Bin{});
  Lane lane;
  lane.factor = s->factor;
  lane.plain = !s->steps.to_rate && !s->smooth;
  lane.bins = s->bins.data();
  lane.weighted = s->weighted.data();
  lane.pending = s->pending.data();
  streams_.push_back(std::move(s));
  lanes_.push_back(lane);
  return streams_.size() - 1;
}

const MetricDescriptor& Pipeline::descriptor(std::size_t id) const {
  return streams_.at(id)->descriptor;
}

// One value over `weight` ns of bin k: kept with the values for the same bin before it, and added
// to the bin when the next value is for another bin (flush_pending()).
[[gnu::always_inline]] inline void Pipeline::enter(Lane& l, std::size_t k, double weight, double value) {
  if (l.pending_count != 0 && l.pending_bin != k) flush_pending(l);
  l.pending_bin = k;
  l.pending[l.pending_count++] = {value, weight};
  if (l.pending_count == kPendingProducts) flush_pending(l);
}

void Pipeline::to_grid(std::size_t id, std::int64_t t0, std::int64_t t1, double value) {
  if (!std::isfinite(value)) return;  // no value: the bin stays empty unless another value reaches it
  Lane& l = lanes_[id];
  if (t1 <= t0) {  // a point: once in its bin
    if (t0 < grid_.origin_ns || t0 >= grid_.end_ns()) return;
    enter(l, bin_of(t0), 1.0, value);
    return;
  }
  // The span's bins and overlaps depend on its times alone, and a chip sample puts one span of the
  // same times into every stream: they are worked out once for all of them
  // (docs/report.md#one-pass).
  if (!pieces_valid_ || t0 != pieces_t0_ || t1 != pieces_t1_) split(t0, t1);
  for (const Piece& piece : pieces_) enter(l, piece.bin, piece.weight, value);
}

void Pipeline::split(std::int64_t t0, std::int64_t t1) {
  pieces_.clear();
  pieces_t0_ = t0;
  pieces_t1_ = t1;
  pieces_valid_ = true;
  const std::int64_t origin = grid_.origin_ns, end = grid_.end_ns(), step = grid_.step_ns;
  const std::int64_t a = std::max(t0, origin), b = std::min(t1, end);
  if (b <= a) return;
  for (auto k = static_cast<std::int64_t>(bin_of(a)); k < static_cast<std::int64_t>(grid_.bins); ++k) {
    const std::int64_t bin_lo = origin + k * step;
    if (bin_lo >= b) break;
    const std::int64_t overlap = std::min(b, bin_lo + step) - std::max(a, bin_lo);
    if (overlap > 0) pieces_.push_back({static_cast<std::size_t>(k), static_cast<double>(overlap)});
  }
}

void Pipeline::check_not_in_row(std::size_t id) const {
  if (lanes_[id].in_row)
    throw std::logic_error("Pipeline: stream " + std::to_string(id) +
                           " of the row takes values through row() alone");
}

bool Pipeline::set_row(std::span<const std::size_t> ids) {
  if (!row_.ids.empty()) throw std::logic_error("Pipeline::set_row: the row is set already");
  std::set<std::size_t> seen;
  for (std::size_t id : ids) {
    if (id >= lanes_.size()) throw std::logic_error("Pipeline::set_row: no stream " + std::to_string(id));
    if (!seen.insert(id).second)
      throw std::logic_error("Pipeline::set_row: stream " + std::to_string(id) + " named twice");
    if (!lanes_[id].plain) return false;
  }
  if (ids.empty()) return true;
  row_.ids.assign(ids.begin(), ids.end());
  for (std::size_t id : ids) {
    flush_pending(lanes_[id]);  // what came before, in its order
    lanes_[id].in_row = true;
    row_.factors.push_back(lanes_[id].factor);
  }
  row_.values.assign(ids.size() * kRowCapacity, kNaN);
  row_.weights.assign(kRowCapacity, 0.0);
  row_.count = 0;
  return true;
}

// The values waiting in the row, added to their bin stream by stream: for each stream the same
// additions of the same numbers in the same order as flush_pending() makes of what enter() keeps.
void Pipeline::flush_row() {
  Row& r = row_;
  if (r.count == 0) return;
  const std::size_t k = r.bin, n = r.count;
  const double* weights = r.weights.data();
  for (std::size_t i = 0; i < r.ids.size(); ++i) {
    Lane& l = lanes_[r.ids[i]];
    Bin& bin = l.bins[k];
    long double sum = l.weighted[k];
    double weight = bin.weight, lo = bin.lo, hi = bin.hi;
    const double* values = r.values.data() + i * kRowCapacity;
    for (std::size_t j = 0; j < n; ++j) {
      const double value = values[j];
      if (!std::isfinite(value)) continue;  // no value: as to_grid() leaves it out
      if (value != 0) sum += static_cast<long double>(value) * weights[j];
      weight += weights[j];
      lo = std::isnan(lo) ? value : std::min(lo, value);
      hi = std::isnan(hi) ? value : std::max(hi, value);
    }
    l.weighted[k] = sum;
    bin.weight = weight;
    bin.lo = lo;
    bin.hi = hi;
  }
  r.count = 0;
}

void Pipeline::row(std::int64_t t0_ns, std::int64_t t1_ns, std::span<const double> values) {
  Row& r = row_;
  if (values.size() != r.ids.size())
    throw std::invalid_argument("Pipeline::row: " + std::to_string(values.size()) + " values for a row of " +
                                std::to_string(r.ids.size()) + " streams");
  const std::size_t n = values.size();
  if (t1_ns <= t0_ns) {
    // A point, as span() takes it: the row's values go first, then these, each added at once.
    flush_row();
    for (std::size_t i = 0; i < n; ++i) {
      to_grid(r.ids[i], t0_ns, t1_ns, values[i] * r.factors[i]);
      flush_pending(lanes_[r.ids[i]]);
    }
    return;
  }
  if (!pieces_valid_ || t0_ns != pieces_t0_ || t1_ns != pieces_t1_) split(t0_ns, t1_ns);
  for (const Piece& piece : pieces_) {
    if (r.count != 0 && (r.bin != piece.bin || r.count == kRowCapacity)) flush_row();
    r.bin = piece.bin;
    r.weights[r.count] = piece.weight;
    double* slot = r.values.data() + r.count;
    for (std::size_t i = 0; i < n; ++i) slot[i * kRowCapacity] = values[i] * r.factors[i];
    ++r.count;
  }
}

void Pipeline::span(std::size_t id, std::int64_t t0_ns, std::int64_t t1_ns, double value) {
  Stream& s = *streams_.at(id);
  check_not_in_row(id);
  if (lanes_[id].plain) {
    to_grid(id, t0_ns, t1_ns, value * lanes_[id].factor);
    return;
  }
  if (s.steps.to_rate) value = count_to_rate(value, t0_ns, t1_ns);
  value *= s.factor;
  if (!s.smooth) {
    to_grid(id, t0_ns, t1_ns, value);
    return;
  }
  // The row's tag carries its end, so the smoothed value goes back over the same span.
  s.smooth->push(t0_ns, std::span<const double>(&value, 1), static_cast<std::uint64_t>(t1_ns),
                 [&](std::uint64_t tag, std::int64_t ts, std::span<const double> v) {
                   to_grid(id, ts, static_cast<std::int64_t>(tag), v[0]);
                 });
}

void Pipeline::spans(std::size_t first, std::int64_t t0_ns, std::int64_t t1_ns,
                     std::span<const double> values) {
  if (first > streams_.size() || values.size() > streams_.size() - first)
    throw std::out_of_range("Pipeline::spans: no such streams");
  for (std::size_t i = 0; i < values.size(); ++i) {
    Lane& l = lanes_[first + i];
    check_not_in_row(first + i);
    if (!l.plain || t1_ns <= t0_ns) {
      span(first + i, t0_ns, t1_ns, values[i]);
      continue;
    }
    const double value = values[i] * l.factor;
    if (!std::isfinite(value)) continue;
    if (!pieces_valid_ || t0_ns != pieces_t0_ || t1_ns != pieces_t1_) split(t0_ns, t1_ns);
    for (const Piece& piece : pieces_) enter(l, piece.bin, piece.weight, value);
  }
}

void Pipeline::point(std::size_t id, std::int64_t ts_ns, double value) {
  Stream& s = *streams_.at(id);
  check_not_in_row(id);
  if (s.steps.to_rate) {
    const std::optional<std::int64_t> previous = s.previous_point_ns;
    s.previous_point_ns = ts_ns;
    value = previous ? count_to_rate(value, *previous, ts_ns) : kNaN;
  }
  value *= s.factor;
  if (!s.smooth) {
    to_grid(id, ts_ns, ts_ns, value);
    return;
  }
  s.smooth->push(ts_ns, std::span<const double>(&value, 1), static_cast<std::uint64_t>(ts_ns),
                 [&](std::uint64_t tag, std::int64_t ts, std::span<const double> v) {
                   to_grid(id, ts, static_cast<std::int64_t>(tag), v[0]);
                 });
}

std::vector<EnvelopeSeries> Pipeline::finish() {
  flush_row();
  std::vector<EnvelopeSeries> out;
  out.reserve(streams_.size());
  for (std::size_t id = 0; id < streams_.size(); ++id) {
    Stream& s = *streams_[id];
    if (s.smooth) {
      s.smooth->finish([&](std::uint64_t tag, std::int64_t ts, std::span<const double> v) {
        to_grid(id, ts, static_cast<std::int64_t>(tag), v[0]);
      });
    }
    flush_pending(lanes_[id]);
    EnvelopeSeries e{s.descriptor, {}};
    e.envelope.mean.resize(grid_.bins, kNaN);
    for (std::size_t k = 0; k < grid_.bins; ++k) {
      if (s.bins[k].weight > 0) e.envelope.mean[k] = static_cast<double>(s.weighted[k] / s.bins[k].weight);
    }
    e.envelope.min.resize(grid_.bins);
    e.envelope.max.resize(grid_.bins);
    for (std::size_t k = 0; k < grid_.bins; ++k) {
      e.envelope.min[k] = s.bins[k].lo;
      e.envelope.max[k] = s.bins[k].hi;
    }
    s.bins = {};
    out.push_back(std::move(e));
  }
  streams_.clear();
  lanes_.clear();
  row_ = Row{};
  return out;
}

bool value_covers_interval(const MetricDescriptor& d) {
  return d.unit == Unit::pct || d.unit == Unit::ratio || d.unit == Unit::bytes_per_second ||
         d.unit == Unit::hz;
}

}  // namespace diescope::metrics
