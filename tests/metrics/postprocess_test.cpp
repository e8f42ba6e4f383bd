// Post-processing: every function against figures worked out by hand in the comments.
#include <gtest/gtest.h>

#include <cmath>
#include <tuple>
#include <vector>

#include "diescope/metrics/catalog.hpp"
#include "diescope/metrics/postprocess.hpp"

namespace diescope::metrics {
namespace {

constexpr std::int64_t kMs = 1'000'000;
const double kNaN = std::nan("");

// Element-wise, NaN equal to NaN, values to 1e-9 relative.
void expect_series(const Series& got, const Series& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].ts_ns, want[i].ts_ns) << "point " << i;
    if (std::isnan(want[i].value)) {
      EXPECT_TRUE(std::isnan(got[i].value)) << "point " << i << " is " << got[i].value;
    } else {
      EXPECT_NEAR(got[i].value, want[i].value, std::fabs(want[i].value) * 1e-9) << "point " << i;
    }
  }
}

MetricDescriptor described(std::string_view name, const Scope& scope, const PeakInputs& inputs = {}) {
  auto d = describe_metric(name, scope, inputs);
  if (!d) throw std::runtime_error(d.reason());
  return *d;
}

TEST(Boxcar, CentredMeanLeavesNaNOut) {
  const Series in = {{0, 1}, {10 * kMs, 2}, {20 * kMs, kNaN}, {30 * kMs, 4}, {40 * kMs, 8}};
  // 30 ms kernel: window [t-15 ms, t+15 ms).
  //  t=0:  {1, 2}        -> 1.5
  //  t=10: {1, 2, NaN}   -> 1.5   (were NaN taken as 0: 1.0)
  //  t=20: {2, NaN, 4}   -> 3
  //  t=30: {NaN, 4, 8}   -> 6
  //  t=40: {4, 8}        -> 6
  auto out = boxcar(in, 0.030);
  ASSERT_TRUE(out.ok()) << out.reason();
  expect_series(*out, {{0, 1.5}, {10 * kMs, 1.5}, {20 * kMs, 3}, {30 * kMs, 6}, {40 * kMs, 6}});
}

TEST(Boxcar, WindowIsHalfOpen) {
  // 20 ms kernel: [t-10 ms, t+10 ms). t=0: {1}; t=10: {1, 2} -> 1.5; t=20: {2, 4} -> 3.
  auto out = boxcar(Series{{0, 1}, {10 * kMs, 2}, {20 * kMs, 4}}, 0.020);
  ASSERT_TRUE(out.ok());
  expect_series(*out, {{0, 1}, {10 * kMs, 1.5}, {20 * kMs, 3}});
}

TEST(Boxcar, WindowWithNothingFiniteIsNaN) {
  // 50 ms kernel: [t-25, t+25). t=0: {NaN}; t=100: {NaN}; t=200: {5}.
  auto out = boxcar(Series{{0, kNaN}, {100 * kMs, kNaN}, {200 * kMs, 5}}, 0.050);
  ASSERT_TRUE(out.ok());
  expect_series(*out, {{0, kNaN}, {100 * kMs, kNaN}, {200 * kMs, 5}});
}

TEST(Boxcar, KernelNarrowerThanTheSpacingChangesNothing) {
  const Series in = {{0, 3}, {10 * kMs, 7}};
  auto out = boxcar(in, 0.001);
  ASSERT_TRUE(out.ok());
  expect_series(*out, in);
}

TEST(Boxcar, Refusals) {
  EXPECT_EQ(boxcar(Series{}, 0).reason(), "boxcar kernel must be a positive number of seconds, got 0");
  EXPECT_EQ(boxcar(Series{}, -1).reason(), "boxcar kernel must be a positive number of seconds, got -1");
  EXPECT_EQ(boxcar(Series{}, kNaN).reason(), "boxcar kernel must be a positive number of seconds, got nan");
  EXPECT_EQ(boxcar(Series{}, 1e-12).reason(), "boxcar kernel of 1e-12 s is outside 1 ns to 9e9 s");
  EXPECT_EQ(boxcar(Series{{5, 1}, {4, 2}}, 1).reason(),
            "boxcar: timestamps go backwards at point 1 (4 ns after 5 ns); sort the series first");
  EXPECT_TRUE(boxcar(Series{}, 1)->empty());
}

TEST(Resample, BinMeansOnAGridWithGapsKept) {
  const Series in = {{5 * kMs, 1}, {50 * kMs, 3}, {120 * kMs, kNaN}, {250 * kMs, 10}, {260 * kMs, 20}};
  // 100 ms bins from 0: [0,100): {1,3} -> 2; [100,200): {NaN} -> NaN; [200,300): {10,20} -> 15.
  auto out = resample(in, 0.1, 0);
  ASSERT_TRUE(out.ok()) << out.reason();
  expect_series(*out, {{0, 2}, {100 * kMs, kNaN}, {200 * kMs, 15}});
}

TEST(Resample, OriginAfterTheFirstPointUsesFloorBins) {
  const Series in = {{5 * kMs, 1}, {50 * kMs, 3}, {120 * kMs, kNaN}, {250 * kMs, 10}, {260 * kMs, 20}};
  // Origin 30 ms: bin -1 = [-70,30): {1}; bin 0 = [30,130): {3, NaN} -> 3; bin 1 = [130,230): none -> NaN;
  // bin 2 = [230,330): {10, 20} -> 15.
  auto out = resample(in, 0.1, 30 * kMs);
  ASSERT_TRUE(out.ok());
  expect_series(*out, {{-70 * kMs, 1}, {30 * kMs, 3}, {130 * kMs, kNaN}, {230 * kMs, 15}});
}

TEST(Resample, Refusals) {
  EXPECT_EQ(resample(Series{}, 0, 0).reason(), "resample step must be a positive number of seconds, got 0");
  EXPECT_EQ(resample(Series{{2, 1}, {1, 1}}, 1, 0).reason(),
            "resample: timestamps go backwards at point 1 (1 ns after 2 ns); sort the series first");
  // 1 ns steps over 1 s: 1e9 + 1 bins.
  EXPECT_EQ(resample(Series{{0, 1}, {1'000'000'000, 1}}, 1e-9, 0).reason(),
            "resample: a 1e-09 s step over this series makes 1000000001 bins; use a longer step");
  EXPECT_TRUE(resample(Series{}, 1, 0)->empty());
}

TEST(Rates, CountsOverTheTimeSinceThePreviousPoint) {
  // DRAM bytes per 10 ms sample, as the H200 probe read during its copy phase: 3.95e10 B / 0.01 s = 3.95e12
  // B/s.
  const Series counts = {{0, 100}, {10 * kMs, 3.95e10}, {30 * kMs, 1e6}, {30 * kMs, 5}, {40 * kMs, kNaN}};
  // first: no interval -> NaN; 1e6 B over 20 ms = 5e7 B/s; same timestamp again -> NaN; NaN count -> NaN.
  expect_series(counts_to_rates(counts),
                {{0, kNaN}, {10 * kMs, 3.95e12}, {30 * kMs, 5e7}, {30 * kMs, kNaN}, {40 * kMs, kNaN}});
  EXPECT_EQ(rate_unit(Unit::bytes), Unit::bytes_per_second);
  EXPECT_EQ(rate_unit(Unit::count), Unit::hz);
  EXPECT_EQ(rate_unit(Unit::pct), std::nullopt);
}

TEST(Convert, CompatibleUnits) {
  auto hz = convert(Series{{0, 1980}}, Unit::mhz, Unit::hz);  // 1980 MHz = 1.98e9 Hz
  ASSERT_TRUE(hz.ok());
  expect_series(*hz, {{0, 1.98e9}});
  auto ratio = convert(Series{{0, 85}, {1, kNaN}}, Unit::pct, Unit::ratio);  // 85% = 0.85; NaN stays NaN
  ASSERT_TRUE(ratio.ok());
  expect_series(*ratio, {{0, 0.85}, {1, kNaN}});
  EXPECT_EQ(conversion_factor(Unit::ratio, Unit::pct), 100.0);
  EXPECT_EQ(conversion_factor(Unit::hz, Unit::mhz), 1e-6);
  EXPECT_EQ(conversion_factor(Unit::bytes, Unit::bytes), 1.0);
}

TEST(Convert, Refusals) {
  EXPECT_EQ(convert(Series{}, Unit::bytes, Unit::watts).reason(), "cannot convert bytes to watts");
  EXPECT_EQ(
      convert(Series{}, Unit::bytes, Unit::bytes_per_second).reason(),
      "cannot convert bytes to bytes_per_second without the time each value covers; use counts_to_rates");
}

TEST(Format, ScalesAndDigits) {
  EXPECT_EQ(format_value(3.95e10, Unit::bytes), "39.5 GB");               // 3.95e10 / 1e9
  EXPECT_EQ(format_value(3.95e12, Unit::bytes_per_second), "3.95 TB/s");  // 3.95e12 / 1e12
  EXPECT_EQ(format_value(84.97, Unit::pct), "85.0%");                     // one decimal, as screens show
  EXPECT_EQ(format_value(999.6, Unit::bytes), "1.00 kB");                 // 3 significant digits reach 1000
  EXPECT_EQ(format_value(9.996, Unit::bytes), "10.0 B");
  EXPECT_EQ(format_value(850, Unit::count), "850");
  EXPECT_EQ(format_value(12345678, Unit::count), "12.3 M");
  EXPECT_EQ(format_value(0.5, Unit::ratio), "0.500");
  EXPECT_EQ(format_value(1987, Unit::mhz), "1987 MHz");  // clocks are never prefixed
  EXPECT_EQ(format_value(1.98e9, Unit::hz), "1.98 GHz");
  EXPECT_EQ(format_value(2.5e6, Unit::cycles), "2.50 Mcycles");
  EXPECT_EQ(format_value(1500, Unit::watts), "1.50 kW");
  EXPECT_EQ(format_value(0.0015, Unit::watts), "0.00150 W");
  EXPECT_EQ(format_value(-2.5e9, Unit::bytes), "-2.50 GB");
  EXPECT_EQ(format_value(0, Unit::bytes), "0 B");
  EXPECT_EQ(format_value(3, Unit::requests), "3.00 requests");
  EXPECT_EQ(format_value(kNaN, Unit::bytes), "n/a");
  EXPECT_EQ(format_value(kNaN, Unit::pct), "n/a");
  EXPECT_EQ(format_value(INFINITY, Unit::watts), "inf");
}

TEST(Format, DisplayScale) {
  DisplayScale s = display_scale(Unit::bytes_per_second, 3.95e12);
  EXPECT_EQ(s.divisor, 1e12);
  EXPECT_EQ(s.symbol, "TB/s");
  s = display_scale(Unit::pct, 1e6);  // percents keep their unit whatever the size
  EXPECT_EQ(s.divisor, 1);
  EXPECT_EQ(s.symbol, "%");
  s = display_scale(Unit::bytes, 1e30);  // beyond the last prefix stays at P
  EXPECT_EQ(s.symbol, "PB");
}

TEST(Peak, NormalisesWhenAPeakIsKnown) {
  PeakInputs inputs;
  inputs.readings["mem__capacity_bytes"] = 64e9;
  inputs.logical_cpus = 8;
  // 16 GB used of 64 GB: 16/64*100 = 25%.
  EXPECT_DOUBLE_EQ(percent_of_peak(16e9, described("mem__used_bytes", Scope::system(), inputs)).value, 25);
  // A process at 400% of one core on 8 CPUs: 400/800*100 = 50%.
  EXPECT_DOUBLE_EQ(
      percent_of_peak(400, described("proc__cycles_active.sum.per_second", Scope::process(1), inputs)).value,
      50);
  // Already a percent of peak: unchanged, 84.97/100*100.
  EXPECT_DOUBLE_EQ(
      percent_of_peak(84.97, described("dram__bytes.sum.pct_of_peak_sustained_elapsed", Scope::gpu(0))).value,
      84.97);
}

TEST(Peak, UnavailableWithTheReason) {
  MaybeValue none = percent_of_peak(3.95e10, described("dram__bytes.sum", Scope::gpu(0)));
  EXPECT_FALSE(none.available());
  EXPECT_EQ(
      none.reason,
      "no peak for dram__bytes.sum: a per-sample total grows with the sample's span; its share of peak is "
      "dram__bytes.sum.pct_of_peak_sustained_elapsed");

  PeakInputs inputs;
  inputs.readings["mem__capacity_bytes"] = 64e9;
  MetricDescriptor used = described("mem__used_bytes", Scope::system(), inputs);
  MaybeValue unread = percent_of_peak(kNaN, used);
  EXPECT_FALSE(unread.available());
  EXPECT_EQ(unread.reason, "no reading of mem__used_bytes");

  used.peak = 0;
  EXPECT_EQ(percent_of_peak(1, used).reason, "the peak of mem__used_bytes is not a positive number");
}

TEST(Peak, WholeSeries) {
  PeakInputs inputs;
  inputs.readings["mem__capacity_bytes"] = 64e9;
  // 16/64 = 25%, NaN stays NaN, 64/64 = 100%.
  auto out = percent_of_peak(Series{{0, 16e9}, {1, kNaN}, {2, 64e9}},
                             described("mem__used_bytes", Scope::system(), inputs));
  ASSERT_TRUE(out.ok());
  expect_series(*out, {{0, 25}, {1, kNaN}, {2, 100}});

  auto refused = percent_of_peak(Series{{0, 1}},
                                 described("disk__read_bytes.sum.per_second", Scope::block_device("sda")));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(
      refused.reason(),
      "no peak for disk__read_bytes.sum.per_second: no /sys/block source gives a device's rated bandwidth");
}

TEST(Panels, ByEntityAndUnitThenSeriesByScope) {
  PeakInputs inputs;
  inputs.readings["mem__capacity_bytes"] = 64e9;
  const std::vector<TaggedSeries> in = {
      {described("dram__bytes.sum.pct_of_peak_sustained_elapsed", Scope::gpu(0)), {}},         // 0
      {described("cpu__cycles_busy.avg.pct_of_peak_sustained_elapsed", Scope::system()), {}},  // 1
      {described("dram__bytes.sum.pct_of_peak_sustained_elapsed", Scope::gpu(1)), {}},         // 2
      {described("dram__bytes.sum", Scope::gpu(0)), {}},                                       // 3
      {described("proc__rss_bytes", Scope::process(20), inputs), {}},                          // 4
      {described("proc__rss_bytes", Scope::process(10), inputs), {}},                          // 5
      {described("proc__vms_bytes", Scope::process(10), inputs), {}},                          // 6
  };
  const std::vector<Panel> panels = group_into_panels(in);
  ASSERT_EQ(panels.size(), 4u);

  // dram in percent: one name on two GPUs, told apart by scope; both peak at 100.
  EXPECT_EQ(panels[0].title, "dram (pct)");
  ASSERT_EQ(panels[0].series.size(), 2u);
  EXPECT_EQ(panels[0].series[0].index, 0u);
  EXPECT_EQ(panels[0].series[0].legend, "gpu 0");
  EXPECT_EQ(panels[0].series[1].index, 2u);
  EXPECT_EQ(panels[0].series[1].legend, "gpu 1");
  EXPECT_EQ(panels[0].peak, 100.0);

  EXPECT_EQ(panels[1].title, "cpu (pct)");
  ASSERT_EQ(panels[1].series.size(), 1u);
  EXPECT_EQ(panels[1].series[0].legend, "cpu__cycles_busy.avg.pct_of_peak_sustained_elapsed");

  // Same entity, other unit: its own panel, no reference line (no peak).
  EXPECT_EQ(panels[2].title, "dram (bytes)");
  EXPECT_EQ(panels[2].series[0].index, 3u);
  EXPECT_FALSE(panels[2].peak.has_value());

  // Two names over two processes: pid 10 first (rss before vms), then pid 20; mixed peaks, no shared line.
  EXPECT_EQ(panels[3].title, "proc (bytes)");
  ASSERT_EQ(panels[3].series.size(), 3u);
  EXPECT_EQ(panels[3].series[0].index, 5u);
  EXPECT_EQ(panels[3].series[0].legend, "proc__rss_bytes · pid 10");
  EXPECT_EQ(panels[3].series[1].index, 6u);
  EXPECT_EQ(panels[3].series[1].legend, "proc__vms_bytes · pid 10");
  EXPECT_EQ(panels[3].series[2].index, 4u);
  EXPECT_EQ(panels[3].series[2].legend, "proc__rss_bytes · pid 20");
  EXPECT_FALSE(panels[3].peak.has_value());
}

TEST(Panels, OneScopeManyNamesAreLabelledByName) {
  const std::vector<TaggedSeries> in = {
      {described("dram__throughput.avg.pct_of_peak_sustained_elapsed", Scope::gpu(0)), {}},
      {described("dram__bytes.sum.pct_of_peak_sustained_elapsed", Scope::gpu(0)), {}},
  };
  const std::vector<Panel> panels = group_into_panels(in);
  ASSERT_EQ(panels.size(), 1u);
  ASSERT_EQ(panels[0].series.size(), 2u);
  // Sorted by name within the one scope: "dram__bytes..." < "dram__throughput...".
  EXPECT_EQ(panels[0].series[0].legend, "dram__bytes.sum.pct_of_peak_sustained_elapsed");
  EXPECT_EQ(panels[0].series[1].legend, "dram__throughput.avg.pct_of_peak_sustained_elapsed");
  EXPECT_EQ(panels[0].peak, 100.0);
  EXPECT_TRUE(group_into_panels({}).empty());
}

// The streaming boxcar: two columns sharing times, 20 ms kernel, window [t-10 ms, t+10 ms).
//  t=0:  column a {1}        -> 1;    column b {10}        -> 10
//  t=10: column a {1, 2}     -> 1.5;  column b {10, NaN}   -> 10
//  t=20: column a {2, 3}     -> 2.5;  column b {NaN, 30}   -> 30
//  t=30: column a {3, NaN}   -> 3;    column b {30, 40}    -> 35
// A row comes out once a row at or past its window's end has gone in: row 0 when row 1 (10 ms) arrives.
TEST(BoxcarWindow, StreamsRowsOfColumnsWithTheirTags) {
  auto made = BoxcarWindow::make(0.020, 2);
  ASSERT_TRUE(made.ok());
  BoxcarWindow w = *made;
  std::vector<std::tuple<std::uint64_t, std::int64_t, double, double>> out;
  const BoxcarWindow::Emit emit = [&](std::uint64_t tag, std::int64_t ts, std::span<const double> v) {
    out.emplace_back(tag, ts, v[0], v[1]);
  };
  const std::vector<std::vector<double>> rows = {{1, 10}, {2, kNaN}, {3, 30}, {kNaN, 40}};
  w.push(0, rows[0], 100, emit);
  EXPECT_TRUE(out.empty());
  w.push(10 * kMs, rows[1], 101, emit);
  ASSERT_EQ(out.size(), 1u);
  w.push(20 * kMs, rows[2], 102, emit);
  w.push(30 * kMs, rows[3], 103, emit);
  EXPECT_EQ(out.size(), 3u);
  w.finish(emit);
  ASSERT_EQ(out.size(), 4u);
  const std::vector<std::tuple<std::uint64_t, std::int64_t, double, double>> want = {
      {100, 0, 1, 10}, {101, 10 * kMs, 1.5, 10}, {102, 20 * kMs, 2.5, 30}, {103, 30 * kMs, 3, 35}};
  EXPECT_EQ(out, want);
  EXPECT_NO_THROW(w.push(0, rows[0], 0, emit)) << "finish() empties it: a new stream may start anywhere";
}

TEST(BoxcarWindow, RefusesRowsOutOfOrderOrOfTheWrongWidth) {
  BoxcarWindow w = *BoxcarWindow::make(0.010, 1);
  const BoxcarWindow::Emit ignore = [](std::uint64_t, std::int64_t, std::span<const double>) {};
  const double v = 1;
  w.push(10 * kMs, std::span<const double>(&v, 1), 0, ignore);
  EXPECT_THROW(w.push(5 * kMs, std::span<const double>(&v, 1), 0, ignore), std::invalid_argument);
  EXPECT_THROW(w.push(20 * kMs, std::vector<double>{1, 2}, 0, ignore), std::invalid_argument);
  EXPECT_FALSE(BoxcarWindow::make(0, 1).ok());
}

TEST(Grid, CoversTheSpanInAtMostMaxBinsNoFinerThanTheSamples) {
  // 1000 ns in at most 3 bins: step ceil(1000 / 3) = 334, bins ceil(1000 / 334) = 3.
  Grid g = *Grid::covering(0, 1000, 3);
  EXPECT_EQ(g.step_ns, 334);
  EXPECT_EQ(g.bins, 3u);
  EXPECT_EQ(g.end_ns(), 1002);
  // 100 ms in at most 1000 bins but no finer than 10 ms: 10 bins of 10 ms.
  g = *Grid::covering(5 * kMs, 105 * kMs, 1000, 10 * kMs);
  EXPECT_EQ(g.origin_ns, 5 * kMs);
  EXPECT_EQ(g.step_ns, 10 * kMs);
  EXPECT_EQ(g.bins, 10u);
  EXPECT_FALSE(Grid::covering(10, 10, 5).ok());
  EXPECT_FALSE(Grid::covering(0, 10, 0).ok());
}

StreamSteps rate_steps() {
  StreamSteps s;
  s.to_rate = true;
  return s;
}
StreamSteps pct_steps() {
  StreamSteps s;
  s.percent_of_peak = true;
  return s;
}

MetricDescriptor plain(Unit unit, std::optional<double> peak = std::nullopt) {
  MetricDescriptor d;
  d.name = *parse_metric_name("dram__bytes.sum");
  d.unit = unit;
  d.peak = peak;
  d.scope = Scope::gpu(0);
  return d;
}

void expect_values(const std::vector<double>& got, const std::vector<double>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i]))
      EXPECT_TRUE(std::isnan(got[i])) << what << " bin " << i << " is " << got[i];
    else
      EXPECT_NEAR(got[i], want[i], std::fabs(want[i]) * 1e-12) << what << " bin " << i;
  }
}

// Grid of 4 bins of 10 ms from 0. Span [5, 15) ms reads 10, span [15, 30) ms reads 40.
//  bin 0 [0, 10):  10 over 5 ms                 -> min 10, mean 10, max 10
//  bin 1 [10, 20): 10 over 5 ms, 40 over 5 ms   -> min 10, mean 25, max 40
//  bin 2 [20, 30): 40                           -> 40
//  bin 3 [30, 40): nothing                      -> NaN everywhere: the gap stays visible
// A point (a reading at one instant) at 32 ms of NaN leaves bin 3 empty.
TEST(Pipeline, SpansAreTimeWeightedIntoMinMeanMaxEnvelopes) {
  Pipeline p = *Pipeline::make(Grid{0, 10 * kMs, 4});
  const std::size_t id = *p.add(plain(Unit::pct, 100));
  p.span(id, 5 * kMs, 15 * kMs, 10);
  p.span(id, 15 * kMs, 30 * kMs, 40);
  p.point(id, 32 * kMs, kNaN);
  auto out = p.finish();
  ASSERT_EQ(out.size(), 1u);
  expect_values(out[0].envelope.min, {10, 10, 40, kNaN}, "min");
  expect_values(out[0].envelope.mean, {10, 25, 40, kNaN}, "mean");
  expect_values(out[0].envelope.max, {10, 40, 40, kNaN}, "max");
}

// spans() is span() into consecutive streams: [5, 15) ms then [15, 30) ms over bins of 10 ms, values
// {10, 0} then {40, 20}. Stream 0 as above; stream 1: bin 0 holds 0 (a 0 enters min, mean and max),
// bin 1 holds 0 for 5 ms and 20 for 5 ms, mean 10, bin 2 holds 20. Streams past the last
// are refused.
TEST(Pipeline, SpansIntoConsecutiveStreamsAreSpansIntoEach) {
  Pipeline p = *Pipeline::make(Grid{0, 10 * kMs, 4});
  const std::size_t first = *p.add(plain(Unit::pct, 100));
  ASSERT_EQ(*p.add(plain(Unit::pct, 100)), first + 1);
  const std::vector<double> a{10, 0}, b{40, 20};
  p.spans(first, 5 * kMs, 15 * kMs, a);
  p.spans(first, 15 * kMs, 30 * kMs, b);
  EXPECT_THROW(p.spans(first + 1, 0, 10 * kMs, a), std::out_of_range);
  auto out = p.finish();
  ASSERT_EQ(out.size(), 2u);
  expect_values(out[0].envelope.mean, {10, 25, 40, kNaN}, "mean 0");
  expect_values(out[1].envelope.min, {0, 0, 20, kNaN}, "min 1");
  expect_values(out[1].envelope.mean, {0, 10, 20, kNaN}, "mean 1");
  expect_values(out[1].envelope.max, {0, 20, 20, kNaN}, "max 1");
}

// A bin's sum is kept in extended precision however many values reach it: 1000 spans of 1 ns (more
// than the 256 products a stream holds before adding them) alternate 2^53 and 2, then 1000 values
// of 1 fill the next bin. The first bin's sum, 500 x 2^53 + 1000, is exact in extended precision
// (under 2^62) and its mean is 2^52 + 1, a double; summed in doubles the 2s would vanish once the sum
// passes 2^54 and the mean would be 2^52. The second bin's mean is 1.
TEST(Pipeline, BinSumsKeepExtendedPrecisionAcrossManyValues) {
  Pipeline p = *Pipeline::make(Grid{0, 1000, 2});
  const std::size_t id = *p.add(plain(Unit::count));
  const double big = 9007199254740992.0;  // 2^53
  for (int i = 0; i < 1000; ++i) p.span(id, i, i + 1, i % 2 == 0 ? big : 2.0);
  for (int i = 1000; i < 2000; ++i) p.span(id, i, i + 1, 1.0);
  auto out = p.finish();
  ASSERT_EQ(out[0].envelope.mean.size(), 2u);
  EXPECT_EQ(out[0].envelope.mean[0], 4503599627370497.0);  // 2^52 + 1
  EXPECT_EQ(out[0].envelope.mean[1], 1.0);
}

// The row takes a chip sample's columns over one span, as span() into each would. Streams 2 and 0
// (in that order: the row's order is its own) over bins of 10 ms: [5, 15) ms {10, 0}, [15, 30) ms
// {40, NaN}, a point at 31 ms {8, 2}. Stream 2 as SpansAreTimeWeighted...: bin 0 10, bin 1 10 and
// 40 for 5 ms each (mean 25), bin 2 40, bin 3 the point 8. Stream 0: bin 0 holds 0, bin 1 0 for
// 5 ms (the NaN reaches no bin: mean 0, min 0, max 0), bin 2 nothing (NaN), bin 3 the point 2.
// Stream 1, outside the row, still takes span(); the row's streams refuse it, and a row of the
// wrong size is refused.
TEST(Pipeline, RowIsSpanIntoEachOfItsStreams) {
  Pipeline p = *Pipeline::make(Grid{0, 10 * kMs, 4});
  const std::size_t s0 = *p.add(plain(Unit::pct, 100));
  const std::size_t s1 = *p.add(plain(Unit::pct, 100));
  const std::size_t s2 = *p.add(plain(Unit::pct, 100));
  const std::vector<std::size_t> ids{s2, s0};
  ASSERT_TRUE(p.set_row(ids));
  EXPECT_THROW(p.set_row(ids), std::logic_error);
  p.row(5 * kMs, 15 * kMs, std::vector<double>{10, 0});
  p.row(15 * kMs, 30 * kMs, std::vector<double>{40, kNaN});
  p.row(31 * kMs, 31 * kMs, std::vector<double>{8, 2});
  p.span(s1, 0, 10 * kMs, 7);
  EXPECT_THROW(p.span(s0, 0, 10 * kMs, 1), std::logic_error);
  EXPECT_THROW(p.point(s2, 0, 1), std::logic_error);
  EXPECT_THROW(p.row(0, 10 * kMs, std::vector<double>{1}), std::invalid_argument);
  auto out = p.finish();
  ASSERT_EQ(out.size(), 3u);
  expect_values(out[s2].envelope.min, {10, 10, 40, 8}, "min 2");
  expect_values(out[s2].envelope.mean, {10, 25, 40, 8}, "mean 2");
  expect_values(out[s2].envelope.max, {10, 40, 40, 8}, "max 2");
  expect_values(out[s0].envelope.min, {0, 0, kNaN, 2}, "min 0");
  expect_values(out[s0].envelope.mean, {0, 0, kNaN, 2}, "mean 0");
  expect_values(out[s0].envelope.max, {0, 0, kNaN, 2}, "max 0");
  expect_values(out[s1].envelope.mean, {7, kNaN, kNaN, kNaN}, "mean 1");
}

// The row keeps each bin's sum in extended precision and its values in the order they came, past
// the 128 spans it holds before adding them: as BinSumsKeepExtendedPrecisionAcrossManyValues,
// 1000 spans of 1 ns alternate 2^53 and 2 (mean 2^52 + 1, exact), then 1000 of 1 (mean 1).
TEST(Pipeline, RowSumsKeepExtendedPrecisionAcrossManyValues) {
  Pipeline p = *Pipeline::make(Grid{0, 1000, 2});
  const std::size_t id = *p.add(plain(Unit::count));
  const std::vector<std::size_t> ids{id};
  ASSERT_TRUE(p.set_row(ids));
  const double big = 9007199254740992.0;  // 2^53
  for (int i = 0; i < 1000; ++i) p.row(i, i + 1, std::vector<double>{i % 2 == 0 ? big : 2.0});
  for (int i = 1000; i < 2000; ++i) p.row(i, i + 1, std::vector<double>{1.0});
  auto out = p.finish();
  EXPECT_EQ(out[0].envelope.mean[0], 4503599627370497.0);  // 2^52 + 1
  EXPECT_EQ(out[0].envelope.mean[1], 1.0);
}

// A row of a stream with a rate, or of a smoothed one, is refused (set_row returns false and sets
// nothing: the streams still take span()); an unknown stream or one named twice is a mistake.
TEST(Pipeline, RowRefusesRatesSmoothingAndUnknownStreams) {
  Pipeline p = *Pipeline::make(Grid{0, 10 * kMs, 1});
  const std::size_t plain_id = *p.add(plain(Unit::pct, 100));
  const std::size_t rate_id = *p.add(plain(Unit::bytes, 5000), rate_steps());
  EXPECT_FALSE(p.set_row(std::vector<std::size_t>{plain_id, rate_id}));
  p.span(plain_id, 0, 10 * kMs, 50);
  EXPECT_THROW(p.set_row(std::vector<std::size_t>{plain_id, 7}), std::logic_error);
  EXPECT_THROW(p.set_row(std::vector<std::size_t>{plain_id, plain_id}), std::logic_error);
  Pipeline smoothed = *Pipeline::make(Grid{0, 10 * kMs, 1}, 0.005);
  const std::size_t s = *smoothed.add(plain(Unit::pct, 100));
  EXPECT_FALSE(smoothed.set_row(std::vector<std::size_t>{s}));
  auto out = p.finish();
  expect_values(out[plain_id].envelope.mean, {50}, "mean");
}

// Points are counted once each in their bin: 2 and 4 at 1 and 9 ms average 3; a span before the grid
// and a point after it are left out.
TEST(Pipeline, PointsAreMeansOfTheirBinAndOutsideTheGridIsLeftOut) {
  Pipeline p = *Pipeline::make(Grid{0, 10 * kMs, 1});
  const std::size_t id = *p.add(plain(Unit::mhz));
  p.span(id, -20 * kMs, -10 * kMs, 1000);
  p.point(id, 1 * kMs, 2);
  p.point(id, 9 * kMs, 4);
  p.point(id, 10 * kMs, 1000);
  auto out = p.finish();
  expect_values(out[0].envelope.mean, {3}, "mean");
  expect_values(out[0].envelope.min, {2}, "min");
  expect_values(out[0].envelope.max, {4}, "max");
}

// Counts to rates: 1000 bytes over the 10 ms span [0, 10) is 100,000 B/s; the unit becomes
// bytes_per_second and the per-interval peak no longer applies. Points: 5 at 0 s has no interval
// before it (left out), 10 at 1 s is 10/s, 10 at 3 s is 10 over 2 s = 5/s; one bin of 4 s holds both
// rates: mean 7.5.
TEST(Pipeline, CountsBecomeRatesOverTheirSpanOrSinceThePreviousPoint) {
  Pipeline spans = *Pipeline::make(Grid{0, 10 * kMs, 1});
  const std::size_t b = *spans.add(plain(Unit::bytes, 5000), rate_steps());
  EXPECT_EQ(spans.descriptor(b).unit, Unit::bytes_per_second);
  EXPECT_FALSE(spans.descriptor(b).peak.has_value());
  spans.span(b, 0, 10 * kMs, 1000);
  expect_values(spans.finish()[0].envelope.mean, {100000}, "span rate");

  Pipeline points = *Pipeline::make(Grid{0, 4000 * kMs, 1});
  const std::size_t c = *points.add(plain(Unit::count), rate_steps());
  EXPECT_EQ(points.descriptor(c).unit, Unit::hz);
  points.point(c, 0, 5);
  points.point(c, 1000 * kMs, 10);
  points.point(c, 3000 * kMs, 10);
  auto out = points.finish();
  expect_values(out[0].envelope.mean, {7.5}, "point rates");
  expect_values(out[0].envelope.min, {5}, "min");
  expect_values(out[0].envelope.max, {10}, "max");
}

// Conversion then percent of peak: 1500 MHz -> 1.5e9 Hz; with a peak of 2000 MHz (2e9 Hz after the
// conversion), 1500 MHz is 75%.
TEST(Pipeline, ConvertsUnitsAndNormalisesToThePeak) {
  Pipeline p = *Pipeline::make(Grid{0, 10 * kMs, 1});
  const std::size_t hz = *p.add(plain(Unit::mhz, 2000), StreamSteps{false, Unit::hz, false, true});
  const std::size_t pct = *p.add(plain(Unit::mhz, 2000), StreamSteps{false, Unit::hz, true, true});
  EXPECT_EQ(p.descriptor(hz).unit, Unit::hz);
  EXPECT_EQ(*p.descriptor(hz).peak, 2e9);
  EXPECT_EQ(p.descriptor(pct).unit, Unit::pct);
  EXPECT_EQ(*p.descriptor(pct).peak, 100);
  p.point(hz, 0, 1500);
  p.point(pct, 0, 1500);
  auto out = p.finish();
  expect_values(out[0].envelope.mean, {1.5e9}, "hz");
  expect_values(out[1].envelope.mean, {75}, "pct");
}

TEST(Pipeline, RefusesStepsThatDoNotApply) {
  Pipeline p = *Pipeline::make(Grid{0, 10 * kMs, 1});
  auto rate_of_pct = p.add(plain(Unit::pct, 100), rate_steps());
  ASSERT_FALSE(rate_of_pct.ok());
  EXPECT_NE(rate_of_pct.reason().find("has no rate"), std::string::npos) << rate_of_pct.reason();
  MetricDescriptor no_peak = plain(Unit::bytes);
  no_peak.no_peak_reason = "the disk's speed is not known";
  auto pct = p.add(no_peak, pct_steps());
  ASSERT_FALSE(pct.ok());
  EXPECT_NE(pct.reason().find("the disk's speed is not known"), std::string::npos) << pct.reason();
  EXPECT_FALSE(p.add(plain(Unit::bytes), StreamSteps{false, Unit::mhz, false, true}).ok());
  EXPECT_FALSE(Pipeline::make(Grid{0, 10 * kMs, 1}, -1).ok());
  EXPECT_FALSE(Pipeline::make(Grid{0, 10 * kMs, 0}).ok());
}

// Smoothing before the grid, 20 ms kernel (window [t-10, t+10) ms, by each span's start):
// spans [0,10) 0, [10,20) 30, [20,30) 60 smooth to 0, (0+30)/2 = 15, (30+60)/2 = 45, each over its
// own span, so 10 ms bins read 0, 15, 45.
TEST(Pipeline, SmoothsEachStreamBeforeTheGrid) {
  Pipeline p = *Pipeline::make(Grid{0, 10 * kMs, 3}, 0.020);
  const std::size_t id = *p.add(plain(Unit::pct, 100));
  p.span(id, 0, 10 * kMs, 0);
  p.span(id, 10 * kMs, 20 * kMs, 30);
  p.span(id, 20 * kMs, 30 * kMs, 60);
  expect_values(p.finish()[0].envelope.mean, {0, 15, 45}, "smoothed");
}

}  // namespace
}  // namespace diescope::metrics
