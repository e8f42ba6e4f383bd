// Chip samples: drops, per-sample DIE-Util, its time-weighted mean, engines, the limiting unit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "builder.hpp"
#include "diescope/core/error.hpp"

namespace diescope::testing {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(Drops, FirstSampleAfterEachCountersStartIsDropped) {
  Builder b({"sm"});
  // Counters on at 0 (builder), off at 400, on again at 500.
  b.rec.side_records.counters.push_back(recording::CountersEvent{at_ms(400), false, ""});
  b.rec.side_records.counters.push_back(recording::CountersEvent{at_ms(500), true, ""});
  b.sample(0, 100, {90});        // first after the start at 0: dropped
  b.samples(100, 3, 100, {20});  // [100, 400)
  b.sample(500, 600, {90});      // first after the start at 500: dropped
  b.samples(600, 4, 100, {20});  // [600, 1000)
  const analysis::Analysis a = b.analyze();
  // 9 samples read, 2 dropped as first, 7 used over 7 x 100 ms = 0.7 s. Every used sample reads 20.
  EXPECT_EQ(a.run.samples_read, 9);
  EXPECT_EQ(a.run.dropped_first, 2);
  EXPECT_EQ(a.run.dropped_broken, 0);
  EXPECT_EQ(a.run.samples_used, 7);
  EXPECT_NEAR(a.run.chip_covered_s, 0.7, 1e-12);
  EXPECT_NEAR(a.run.die_util_pct, 20.0, 1e-12);
}

TEST(Drops, WithoutCountersEventsTheRecordingsFirstSampleIsDropped) {
  Builder b({"sm"});
  b.rec.side_records.counters.clear();
  b.sample(0, 100, {90});
  b.samples(100, 9, 100, {20});
  const analysis::Analysis a = b.analyze();
  // Only the first of 10 samples goes: 9 used at 20.
  EXPECT_EQ(a.run.dropped_first, 1);
  EXPECT_EQ(a.run.samples_used, 9);
  EXPECT_NEAR(a.run.die_util_pct, 20.0, 1e-12);
}

TEST(Drops, BrokenSamplesDroppedButANaNCountLeavesTheSampleIn) {
  Builder b({"sm"});
  b.diagnostics({"sm_active"}).counts({"dram_bytes"});
  b.sample(0, 100, {50}, {1}, {0});           // first: dropped as first, not as broken
  b.sample(100, 200, {kNaNv}, {1}, {5000});   // NaN unit: broken
  b.sample(200, 300, {50}, {kNaNv}, {5000});  // NaN diagnostic: broken
  b.sample(300, 300, {50}, {1}, {5000});      // empty span: broken
  b.sample(300, 400, {40}, {1}, {kNaNv});     // NaN raw count: used
  b.sample(400, 500, {20}, {1}, {1000});      // used
  b.sample(500, 600, {kInf}, {1}, {1000});    // infinite unit: broken (not a percentage)
  b.sample(600, 590, {50}, {1}, {1000});      // ends before it starts: broken
  const analysis::Analysis a = b.analyze();
  EXPECT_EQ(a.run.samples_read, 8);
  EXPECT_EQ(a.run.dropped_first, 1);
  EXPECT_EQ(a.run.dropped_broken, 5);
  EXPECT_EQ(a.run.samples_used, 2);
  // DIE-Util = (40 x 100 + 20 x 100) / 200 = 30.
  EXPECT_NEAR(a.run.die_util_pct, 30.0, 1e-12);
  // The rate leaves out only the NaN count: 1000 bytes over the 0.1 s of the sample that had it.
  EXPECT_NEAR(a.run.rates_per_s.at("dram_bytes"), 10000.0, 1e-6);
}

TEST(Drops, ValuesNoCounterCanProduceBreakTheSample) {
  // The case, by hand: FP32 46 and DRAM 20 for 4 x 10 ms, one of them with FP32 at 5000%.
  Builder b({"fp32", "dram"});
  b.diagnostics({"sm_active"});
  b.setup_sample();
  b.sample(100, 110, {46, 20}, {50});
  b.sample(110, 120, {5000, 20}, {50});  // far above any peak: broken
  b.sample(120, 130, {46, 20}, {50});
  b.sample(130, 140, {46, -5}, {50});     // negative: broken
  b.sample(140, 150, {46, 20}, {1e308});  // a diagnostic too: broken
  b.sample(150, 160, {46, 20}, {50});
  b.sample(160, 170, {analysis::kMaxPctOfPeak, 20}, {50});  // at the bound: a reading, used
  b.sample(170, 180, {0, -0.0}, {0});                       // zero (and negative zero) is a reading
  const analysis::Analysis a = b.analyze();
  EXPECT_EQ(a.run.samples_read, 9);
  EXPECT_EQ(a.run.dropped_first, 1);
  EXPECT_EQ(a.run.dropped_broken, 3);
  EXPECT_EQ(a.run.samples_used, 5);
  // Used: 46, 46, 46, 200 and 0, 10 ms each. DIE-Util = (3 x 46 + 200 + 0) / 5 = 338 / 5 = 67.6.
  // Had the 5000% sample counted, it would read (338 + 5000) / 6 = 889.7, clamped to 100.
  EXPECT_NEAR(a.run.die_util_pct, 67.6, 1e-9);
  // FP32's mean is the same 67.6; DRAM's (20 x 4 + 0) / 5 = 16, never -5 in it.
  EXPECT_NEAR(unit_named(a.run, "fp32").mean_pct, 67.6, 1e-9);
  EXPECT_NEAR(unit_named(a.run, "dram").mean_pct, 16.0, 1e-9);
  EXPECT_EQ(a.run.limiting_unit, "fp32");
  // Counted in the notes: three samples, each with a value no counter can produce.
  const auto finding =
      std::find_if(a.findings.begin(), a.findings.end(), [](const analysis::AnalysisFinding& f) {
        return f.kind == analysis::AnalysisFinding::Kind::impossible_values;
      });
  ASSERT_NE(finding, a.findings.end());
  EXPECT_EQ(finding->samples, 3);
}

TEST(Drops, WhereAnImpossibleSampleBrokeIsObserved) {
  Builder b({"fp32", "dram"});
  b.setup_sample();
  b.sample(100, 110, {46, 201});
  b.sample(110, 120, {-0.5, 20});
  std::vector<analysis::SampleBreak> seen;
  analysis::AnalysisOptions options;
  options.observe_sample = [&seen](const analysis::ObservedSample& o) { seen.push_back(o.broken); };
  b.analyze(options);
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[1].part, analysis::SampleBreak::Part::unit);
  EXPECT_EQ(seen[1].column, 1u);
  EXPECT_EQ(seen[1].value, analysis::SampleBreak::Value::above_peak);
  EXPECT_EQ(seen[1].read, 201.0);
  EXPECT_EQ(seen[2].column, 0u);
  EXPECT_EQ(seen[2].value, analysis::SampleBreak::Value::negative);
  EXPECT_EQ(seen[2].read, -0.5);
}

TEST(Drops, BeforeSamplesSeesTheBoundsOfRunAndWindowBeforeTheFirstSample) {
  // The run is [0, 1000) ms (builder); the markers at 200 and 1500 make the window [200, 1000) once
  // clipped to the run. Before the first sample: those bounds, and not a sample counted yet.
  Builder b({"sm"}, 1000);
  b.mark(200, recording::MarkKind::start);
  b.mark(1500, recording::MarkKind::stop);
  b.samples(0, 10, 100, {50});
  std::vector<std::string> order;
  analysis::Analysis bounds;
  analysis::AnalysisOptions options;
  options.before_samples = [&](const analysis::Analysis& a) {
    order.push_back("before");
    bounds = a;
  };
  options.observe_sample = [&order](const analysis::ObservedSample&) { order.push_back("sample"); };
  const analysis::Analysis a = b.analyze(options);
  ASSERT_EQ(order.size(), 11u);
  EXPECT_EQ(order.front(), "before");
  EXPECT_EQ(std::count(order.begin(), order.end(), "sample"), 10);
  EXPECT_EQ(bounds.run.start_ns, at_ms(0));
  EXPECT_EQ(bounds.run.end_ns, at_ms(1000));
  EXPECT_TRUE(bounds.window.found);
  EXPECT_EQ(bounds.window.results.start_ns, at_ms(200));
  EXPECT_EQ(bounds.window.results.end_ns, at_ms(1000));
  EXPECT_EQ(bounds.run.samples_read, 0);
  // The finished analysis has the same bounds, and the samples: 10 read, the first dropped.
  EXPECT_EQ(a.run.start_ns, bounds.run.start_ns);
  EXPECT_EQ(a.run.end_ns, bounds.run.end_ns);
  EXPECT_EQ(a.window.results.start_ns, bounds.window.results.start_ns);
  EXPECT_EQ(a.window.results.end_ns, bounds.window.results.end_ns);
  EXPECT_EQ(a.run.samples_read, 10);
  EXPECT_EQ(a.run.samples_used, 9);
}

TEST(Engines, AnImpossibleEngineValueIsUnavailableNotBusiest) {
  Builder b({"sm"});
  b.engines({"nvenc"});
  b.setup_sample();
  b.sample(100, 200, {40});
  b.engine(200, {5000});  // matched to the sample ending at 200: impossible, so unavailable
  b.sample(200, 300, {40});
  b.engine(300, {-3});  // likewise
  b.sample(300, 400, {40});
  b.engine(400, {60});  // a reading
  const analysis::Analysis a = b.analyze();
  // The chip samples all stay: DIE-Util = (40 + 40 + 60) / 3 = 46.67; the engine is available for
  // one of three samples, with mean 60 there.
  EXPECT_EQ(a.run.samples_used, 3);
  EXPECT_NEAR(a.run.die_util_pct, 140.0 / 3.0, 1e-9);
  EXPECT_NEAR(unit_named(a.run, "nvenc").mean_pct, 60.0, 1e-9);
  EXPECT_NEAR(unit_named(a.run, "nvenc").availability_pct, 100.0 / 3.0, 1e-9);
}

TEST(DieUtil, OfSampleIsTheBusiestAvailableUnitAsRead) {
  const std::vector<double> units{30, 105, kNaNv};
  const std::vector<double> engines{kNaNv, 60};
  // max(30, 105, 60) = 105: not clamped, NaN skipped.
  EXPECT_EQ(analysis::die_util_of_sample(units, engines), 105.0);
  const std::vector<double> low{10};
  const std::vector<double> busy_engine{70};
  EXPECT_EQ(analysis::die_util_of_sample(low, busy_engine), 70.0);
  EXPECT_TRUE(std::isnan(analysis::die_util_of_sample({}, {})));
  const std::vector<double> all_nan{kNaNv};
  EXPECT_TRUE(std::isnan(analysis::die_util_of_sample(all_nan, all_nan)));
}

TEST(DieUtil, TimeWeightedWithIdleSamples) {
  Builder b({"sm"});
  b.setup_sample();
  b.sample(100, 200, {90});  // 100 ms at 90
  b.sample(200, 400, {0});   // 200 ms idle
  b.sample(400, 500, {30});  // 100 ms at 30
  const analysis::Analysis a = b.analyze();
  // (90 x 100 + 0 x 200 + 30 x 100) / 400 = 12000 / 400 = 30 (an unweighted mean would give 40).
  EXPECT_NEAR(a.run.die_util_pct, 30.0, 1e-12);
}

TEST(DieUtil, MaxPerSampleThenAverage) {
  Builder b({"fp32", "dram"});
  b.setup_sample();
  b.sample(100, 200, {80, 10});
  b.sample(200, 300, {10, 60});
  const analysis::Analysis a = b.analyze();
  // Per sample: max(80,10) = 80, max(10,60) = 60 -> DIE-Util 70. Unit means: fp32 45, dram 35.
  EXPECT_NEAR(a.run.die_util_pct, 70.0, 1e-12);
  EXPECT_NEAR(unit_named(a.run, "fp32").mean_pct, 45.0, 1e-12);
  EXPECT_NEAR(unit_named(a.run, "dram").mean_pct, 35.0, 1e-12);
  EXPECT_EQ(a.run.limiting_unit, "fp32");
}

TEST(DieUtil, MeanClampedSingleSamplesNot) {
  Builder b({"fp32"});
  b.setup_sample();
  b.sample(100, 200, {104});
  b.sample(200, 300, {102});
  const analysis::Analysis a = b.analyze();
  // Mean of 104 and 102 is 103, clamped to 100; the unit's own figures stay as read.
  EXPECT_NEAR(a.run.die_util_pct, 100.0, 1e-12);
  EXPECT_NEAR(unit_named(a.run, "fp32").mean_pct, 103.0, 1e-12);
  EXPECT_NEAR(unit_named(a.run, "fp32").max_sample_pct, 104.0, 1e-12);
}

TEST(DieUtil, UnitReadingAroundItsPeakIsNotPulledDown) {
  Builder b({"fp32"});
  b.setup_sample();
  b.sample(100, 200, {101});
  b.sample(200, 300, {99});
  const analysis::Analysis a = b.analyze();
  // Unclamped samples average (101 + 99) / 2 = 100. Clamping each first would give 99.5.
  EXPECT_NEAR(a.run.die_util_pct, 100.0, 1e-12);
}

TEST(Engines, MatchedToFirstReadingAtOrAfterSampleEndAndAveragedWhereAvailable) {
  Builder b({"sm"});
  b.engines({"nvenc"});
  b.setup_sample();
  b.samples(100, 4, 100, {10});  // ends at 200, 300, 400, 500
  b.engine(200, {90});           // at the end of sample 1: matched to it
  b.engine(350, {kNaNv});        // first at or after 300: sample 2's engine is unavailable
  b.engine(450, {50});           // sample 3
  b.engine(520, {70});           // sample 4
  const analysis::Analysis a = b.analyze();
  const analysis::ColumnSummary& nvenc = unit_named(a.run, "nvenc");
  // Available in 3 of 4 samples: 300 of 400 ms = 75%, mean (90 + 50 + 70) / 3 = 70.
  // Unavailable-as-zero would have given (90 + 0 + 50 + 70) / 4 = 52.5.
  EXPECT_NEAR(nvenc.available_s, 0.3, 1e-12);
  EXPECT_NEAR(nvenc.availability_pct, 75.0, 1e-9);
  EXPECT_NEAR(nvenc.mean_pct, 70.0, 1e-12);
  // Per sample DIE-Util: 90, 10 (sm only), 50, 70 -> mean 55.
  EXPECT_NEAR(a.run.die_util_pct, 55.0, 1e-12);
}

TEST(Engines, NoReadingAfterASampleMeansUnavailable) {
  Builder b({"sm"});
  b.engines({"nvdec"});
  b.setup_sample();
  b.samples(100, 2, 100, {10});  // ends at 200 and 300
  b.engine(250, {80});           // matched to the first only
  const analysis::Analysis a = b.analyze();
  // nvdec available 100 of 200 ms; DIE-Util (80 + 10) / 2 = 45.
  EXPECT_NEAR(unit_named(a.run, "nvdec").availability_pct, 50.0, 1e-9);
  EXPECT_NEAR(a.run.die_util_pct, 45.0, 1e-12);
}

// Ten usable 100 ms samples over [100, 1100), sm at 40; nvenc at 95 where available.
Builder limiting_case(int nvenc_available_of_10, double sm_value, double nvenc_value) {
  Builder b({"sm"}, 1100);
  b.engines({"nvenc"});
  b.setup_sample();
  b.samples(100, 10, 100, {sm_value});
  for (int i = 0; i < 10; ++i) {
    const double end_ms = 200 + 100 * i;
    b.engine(end_ms, {i < nvenc_available_of_10 ? nvenc_value : kNaNv});
  }
  return b;
}

TEST(LimitingUnit, UnitAvailableFor80PercentIsNeverLimiting) {
  const analysis::Analysis a = limiting_case(8, 40, 95).analyze();
  // nvenc: mean 95 over 800 of 1000 ms (80%) -> not eligible; sm (40, 100%) is the limiting unit.
  EXPECT_NEAR(unit_named(a.run, "nvenc").availability_pct, 80.0, 1e-9);
  EXPECT_EQ(a.run.limiting_unit, "sm");
  // DIE-Util still counts nvenc where it had a value: (8 x 95 + 2 x 40) / 10 = 84.
  EXPECT_NEAR(a.run.die_util_pct, 84.0, 1e-12);
}

TEST(LimitingUnit, UnitAvailableFor90PercentIsEligible) {
  const analysis::Analysis a = limiting_case(9, 40, 95).analyze();
  // 900 of 1000 ms = 90%: at the threshold, eligible; 95 > 40.
  EXPECT_EQ(a.run.limiting_unit, "nvenc");
}

TEST(LimitingUnit, NoneWhenNoUnitReachesOnePercent) {
  Builder b({"fp32", "dram"});
  b.setup_sample();
  b.samples(100, 9, 100, {0.5, 0.9});
  const analysis::Analysis a = b.analyze();
  // Means 0.5 and 0.9, both under 1% of peak.
  EXPECT_FALSE(a.run.limiting_unit.has_value());
  EXPECT_EQ(a.run.limiting_unit_missing, analysis::LimitingUnitMissing::no_busy_unit);
}

TEST(LimitingUnit, NoneWhenBusyUnitsAreUnderTheAvailabilityRule) {
  const analysis::Analysis a = limiting_case(8, 0.5, 50).analyze();
  // sm 0.5 (idle), nvenc 50 but available 80%: nothing qualifies.
  EXPECT_FALSE(a.run.limiting_unit.has_value());
  EXPECT_EQ(a.run.limiting_unit_missing, analysis::LimitingUnitMissing::busy_units_sparse);
}

TEST(Input, ChipSamplesOutOfOrderAreRejected) {
  Builder b({"sm"});
  b.sample(200, 300, {1});
  b.sample(100, 200, {1});
  EXPECT_THROW(b.analyze(), core::InputError);
}

TEST(Input, WrongColumnCountIsRejected) {
  Builder b({"sm", "dram"});
  b.sample(100, 200, {1});
  EXPECT_THROW(b.analyze(), core::InputError);
}

}  // namespace
}  // namespace diescope::testing
