// Post-processing: every function against figures worked out by hand in the comments.
#include <gtest/gtest.h>

#include <cmath>

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

}  // namespace
}  // namespace diescope::metrics
