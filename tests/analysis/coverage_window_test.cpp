// Chip coverage and its gate, duty cycling, the steady window, counted rates.
#include <gtest/gtest.h>

#include "builder.hpp"

namespace diescope::testing {
namespace {

TEST(ChipCoverage, PartialBelowNinetyPercentWithExactWording) {
  Builder b({"sm"});
  b.setup_sample();
  b.samples(100, 7, 100, {10});  // usable [100, 800) = 700 ms of the 1000 ms run
  const analysis::Analysis a = b.analyze();
  EXPECT_NEAR(a.run.chip_coverage_pct, 70.0, 1e-9);
  EXPECT_TRUE(a.run.partial);
  EXPECT_EQ(a.run.partial_cause, analysis::PartialCause::low_coverage);
  EXPECT_TRUE(std::isnan(a.run.chip_scheduled_s));
}

TEST(ChipCoverage, NinetyPercentIsNotPartial) {
  Builder b({"sm"});
  b.setup_sample();
  b.samples(100, 9, 100, {10});  // 900 of 1000 ms
  const analysis::Analysis a = b.analyze();
  EXPECT_NEAR(a.run.chip_coverage_pct, 90.0, 1e-9);
  EXPECT_FALSE(a.run.partial);
  EXPECT_EQ(a.run.partial_cause, analysis::PartialCause::none);
}

TEST(ChipCoverage, JustUnderTheGateNeverReadsNinety) {
  Builder b({"sm"});
  b.setup_sample();
  b.sample(100, 996, {10});  // 896 of 1000 ms = 89.6%, which rounds to 90
  const analysis::Analysis a = b.analyze();
  EXPECT_TRUE(a.run.partial);
  EXPECT_NEAR(a.run.chip_coverage_pct, 89.6, 1e-9);  // the report words it 89%, never the gate's 90%
  EXPECT_EQ(a.run.partial_cause, analysis::PartialCause::low_coverage);
}

TEST(ChipCoverage, PartialRunShowsGpuUtilOverTheWholeRunWhenNvmlCoveredIt) {
  Builder b({"sm"});
  b.setup_sample();
  b.samples(100, 7, 100, {10});  // chip time [100, 800)
  b.util_every(100, 800, 100, 40);
  b.util(900, 80);
  b.util(1000, 80);  // (800, 1000] at 80: no chip sample there
  const analysis::Analysis a = b.analyze();
  // Over the chip time GPU-Util is 40; over the whole run (the first reading books [0, 100) too)
  // (40 x 800 + 80 x 200) / 1000 = 48, with NVML covering 100% of it.
  EXPECT_NEAR(a.run.gpu_util_pct, 40.0, 1e-9);
  EXPECT_NEAR(a.run.gpu_util_whole_span_coverage_pct, 100.0, 1e-9);
  EXPECT_NEAR(a.run.gpu_util_whole_span_pct, 48.0, 1e-9);
}

TEST(ChipCoverage, NoWholeRunGpuUtilWhenNvmlCoveredUnderNinetyPercent) {
  Builder b({"sm"});
  b.setup_sample();
  b.samples(100, 7, 100, {10});
  b.util_every(100, 800, 100, 40);  // covers [0, 800): 80% of the run
  const analysis::Analysis a = b.analyze();
  EXPECT_NEAR(a.run.gpu_util_whole_span_coverage_pct, 80.0, 1e-9);
  EXPECT_TRUE(std::isnan(a.run.gpu_util_whole_span_pct));
}

// Counters on for 200 ms of every 1000 ms over a 3000 ms run, samples of `sample_ms` in each.
Builder duty_case(double sample_ms) {
  Builder b({"sm"}, 3000);
  b.rec.meta_data.duty_on_ms = 200;
  b.rec.meta_data.duty_period_ms = 1000;
  auto& events = b.rec.side_records.counters;
  events.clear();
  for (int k = 0; k < 3; ++k) {
    events.push_back(recording::CountersEvent{at_ms(1000.0 * k), true, ""});
    events.push_back(recording::CountersEvent{at_ms(1000.0 * k + 200), false, "duty"});
    const int n = static_cast<int>(200 / sample_ms);
    b.samples(1000.0 * k, n, sample_ms, {30});
  }
  return b;
}

TEST(DutyCycle, GatedAgainstScheduledTime) {
  const analysis::Analysis a = duty_case(50).analyze();
  // Scheduled 3 x 200 = 600 ms. Each window: 4 samples of 50 ms, the first dropped: 150 ms.
  // 450 / 600 = 75% -> partial.
  EXPECT_EQ(a.run.dropped_first, 3);
  EXPECT_NEAR(a.run.chip_scheduled_s, 0.6, 1e-12);
  EXPECT_NEAR(a.run.chip_coverage_pct, 75.0, 1e-9);
  EXPECT_TRUE(a.run.partial);
  EXPECT_EQ(a.run.partial_cause, analysis::PartialCause::low_coverage);
}

TEST(DutyCycle, DutyRunIsNotPartialWhenItsScheduledTimeIsCovered) {
  const analysis::Analysis a = duty_case(10).analyze();
  // 20 samples of 10 ms per window, first dropped: 190 ms. 570 / 600 = 95% of scheduled time,
  // though only 570 / 3000 = 19% of the run.
  EXPECT_NEAR(a.run.chip_coverage_pct, 95.0, 1e-9);
  EXPECT_FALSE(a.run.partial);
  EXPECT_NEAR(a.run.chip_covered_s / a.run.span_s, 0.19, 1e-12);
}

// Samples of 100 ms over [100, 1000); the four under the window carry distinct values and counts.
Builder window_case() {
  Builder b({"sm"});
  b.counts({"dram_bytes"});
  b.sample(0, 100, {0}, {}, {0});  // setup, dropped
  b.sample(100, 200, {0}, {}, {0});
  b.sample(200, 300, {0}, {}, {0});
  b.sample(300, 400, {10}, {}, {2000});
  b.sample(400, 500, {20}, {}, {1000});
  b.sample(500, 600, {30}, {}, {1000});
  b.sample(600, 700, {40}, {}, {4000});
  b.sample(700, 800, {0}, {}, {0});
  b.sample(800, 900, {0}, {}, {0});
  b.sample(900, 1000, {0}, {}, {0});
  b.mark(350, recording::MarkKind::start).mark(650, recording::MarkKind::stop);
  return b;
}

TEST(Window, SamplesCutByTheWindowCountForTheirShare) {
  const analysis::Analysis a = window_case().analyze();
  ASSERT_TRUE(a.window.found);
  EXPECT_EQ(a.window.finding, analysis::WindowFinding::markers);
  EXPECT_TRUE(a.window.results.is_window);
  EXPECT_FALSE(a.run.is_window);
  const analysis::SpanResults& w = a.window.results;
  EXPECT_EQ(w.start_ns, at_ms(350));
  EXPECT_EQ(w.end_ns, at_ms(650));
  EXPECT_EQ(w.samples_read, 4);
  EXPECT_NEAR(w.chip_covered_s, 0.3, 1e-12);
  EXPECT_NEAR(w.chip_coverage_pct, 100.0, 1e-9);
  // Time weights: [350,400) 50 ms at 10, 100 ms at 20, 100 ms at 30, [600,650) 50 ms at 40:
  // (500 + 2000 + 3000 + 2000) / 300 = 25.
  EXPECT_NEAR(w.die_util_pct, 25.0, 1e-9);
  // Counts: half of 2000, 1000, 1000, half of 4000 = 5000 bytes over 0.3 s = 16666.67 B/s.
  // (Whole samples would give 8000 / 0.4 = 20000; whole counts over the window 26666.67.)
  EXPECT_NEAR(w.rates_per_s.at("dram_bytes"), 5000.0 / 0.3, 1e-6);
  // The run keeps its own figures: 8000 bytes over the 0.9 s of usable samples.
  EXPECT_NEAR(a.run.rates_per_s.at("dram_bytes"), 8000.0 / 0.9, 1e-6);
}

TEST(Window, HasItsOwnCoverageAndGate) {
  Builder b = window_case();
  // Remove [400, 500): the window keeps 50 + 100 + 50 = 200 of its 300 ms = 66.7%.
  b.rec.list<recording::ChipSample>().erase(b.rec.list<recording::ChipSample>().begin() + 4);
  const analysis::Analysis a = b.analyze();
  EXPECT_TRUE(a.window.results.partial);
  EXPECT_NEAR(a.window.results.chip_coverage_pct, 200.0 / 3.0, 1e-9);
  EXPECT_EQ(a.window.results.partial_cause, analysis::PartialCause::low_coverage);
}

TEST(Window, PartialWindowShowsGpuUtilOverTheWholeWindow) {
  Builder b = window_case();
  b.rec.list<recording::ChipSample>().erase(b.rec.list<recording::ChipSample>().begin() +
                                            4);  // no chip sample in [400, 500)
  b.util_every(100, 400, 100, 40).util(500, 90).util_every(600, 1000, 100, 40);
  const analysis::Analysis a = b.analyze();
  const analysis::SpanResults& w = a.window.results;
  // Over the window's chip time ([350,400), [500,650)) every booked value is 40.
  EXPECT_NEAR(w.gpu_util_pct, 40.0, 1e-9);
  // Over the whole window [350, 650): 50 ms at 40, (400,500] at 90, 150 ms at 40:
  // (40 x 50 + 90 x 100 + 40 x 150) / 300 = 17000 / 300 = 56.67, NVML covering all of it.
  EXPECT_NEAR(w.gpu_util_whole_span_coverage_pct, 100.0, 1e-9);
  EXPECT_NEAR(w.gpu_util_whole_span_pct, 17000.0 / 300.0, 1e-9);
  // The run ([0, 1000), 800 of 1000 ms sampled: partial too) gets its own whole-run figure:
  // 900 ms at 40 and 100 ms at 90 -> 45.
  EXPECT_NEAR(a.run.gpu_util_whole_span_pct, 45.0, 1e-9);
}

TEST(Window, FirstStartAndTheStopFollowingIt) {
  Builder b({"sm"});
  b.setup_sample();
  b.samples(100, 9, 100, {10});
  b.mark(200, recording::MarkKind::start)
      .mark(300, recording::MarkKind::start)
      .mark(500, recording::MarkKind::stop)
      .mark(800, recording::MarkKind::stop);
  const analysis::Analysis a = b.analyze();
  ASSERT_TRUE(a.window.found);
  EXPECT_EQ(a.window.results.start_ns, at_ms(200));
  EXPECT_EQ(a.window.results.end_ns, at_ms(500));
}

TEST(Window, ReasonsWhenNoneIsFound) {
  auto how = [](std::vector<std::pair<double, recording::MarkKind>> marks) {
    Builder b({"sm"});
    b.setup_sample();
    b.samples(100, 9, 100, {10});
    for (auto [t, k] : marks) b.mark(t, k);
    const analysis::Analysis a = b.analyze();
    EXPECT_FALSE(a.window.found);
    return a.window.finding;
  };
  EXPECT_EQ(how({}), analysis::WindowFinding::no_markers);
  EXPECT_EQ(how({{300, recording::MarkKind::start}}), analysis::WindowFinding::start_without_stop);
  EXPECT_EQ(how({{300, recording::MarkKind::stop}, {500, recording::MarkKind::start}}),
            analysis::WindowFinding::stop_before_start);
  EXPECT_EQ(how({{300, recording::MarkKind::stop}}), analysis::WindowFinding::stop_without_start);
  EXPECT_EQ(how({{1500, recording::MarkKind::start}, {1600, recording::MarkKind::stop}}),
            analysis::WindowFinding::outside_run);

  Builder b = window_case();
  analysis::AnalysisOptions no_window;
  no_window.window = analysis::WindowMode::none;
  const analysis::Analysis a = b.analyze(no_window);
  EXPECT_FALSE(a.window.found);
  EXPECT_EQ(a.window.finding, analysis::WindowFinding::not_asked);
  // `run --window` takes these words, and only these.
  EXPECT_EQ(analysis::window_mode_from_name("markers"), analysis::WindowMode::markers);
  EXPECT_EQ(analysis::window_mode_from_name("none"), analysis::WindowMode::none);
  EXPECT_FALSE(analysis::window_mode_from_name("steady").has_value());
  EXPECT_EQ(analysis::window_mode_name(analysis::WindowMode::markers), "markers");
}

TEST(Rates, SampleCutByTheRunEndCountsForItsShare) {
  Builder b({"sm"}, 950);
  b.counts({"dram_bytes"});
  b.sample(0, 100, {0}, {}, {1000});  // setup, dropped
  for (int i = 1; i < 9; ++i) b.sample(100.0 * i, 100.0 * (i + 1), {0}, {}, {1000});
  b.sample(900, 1000, {0}, {}, {3000});   // half inside the run: 1500 bytes over 50 ms
  b.sample(1000, 1100, {0}, {}, {9000});  // wholly after the run: left out
  const analysis::Analysis a = b.analyze();
  // (8 x 1000 + 1500) / (0.8 + 0.05) s = 9500 / 0.85 = 11176.47 B/s.
  EXPECT_NEAR(a.run.rates_per_s.at("dram_bytes"), 9500.0 / 0.85, 1e-6);
  ASSERT_EQ(a.findings.size(), 1u);
  EXPECT_EQ(a.findings[0].kind, analysis::AnalysisFinding::Kind::samples_outside_run);
  EXPECT_EQ(a.findings[0].samples, 1);
}

TEST(Rates, NaNWhenNoSampleHadTheCount) {
  Builder b({"sm"});
  b.counts({"dram_bytes"});
  b.sample(0, 100, {0}, {}, {1});
  b.sample(100, 200, {0}, {}, {std::numeric_limits<double>::quiet_NaN()});
  const analysis::Analysis a = b.analyze();
  EXPECT_TRUE(std::isnan(a.run.rates_per_s.at("dram_bytes")));
}

// docs/method.md#gpm-as-a-second-chip-source: a GPM reading describes the driver's refresh interval,
// which can begin up to kGpmReadingLeadNs (150 ms) before its sample. A window over GPM samples uses
// only those wholly inside it that start at least 150 ms after it; a PM window uses every sample that
// overlaps it.
TEST(Window, GpmSamplesNearTheStartAreLeftOut) {
  auto make = [](recording::UnitSource source) {
    Builder b({"fp32"}, 2000);
    b.rec.meta_data.units[0].source = source;
    b.setup_sample();
    // The kernel starts at 300 ms. GPM samples of 100 ms from 230 ms: the first one, [230, 330),
    // read the refresh interval before it (idle: 0); the next, [330, 430), read the interval that
    // held the start (70 of 100 ms busy: 35); from [430, 530) on, 50.
    b.sample(100, 230, {0});
    b.sample(230, 330, {0});
    b.sample(330, 430, {35});
    b.samples(430, 14, 100, {50});  // to 1830
    b.mark(300, recording::MarkKind::start).mark(1780, recording::MarkKind::stop);
    return b.analyze();
  };
  const analysis::Analysis gpm = make(recording::UnitSource::gpm);
  ASSERT_TRUE(gpm.window.found);
  // GPM: samples starting at or after 450 ms and ending by 1780 ms: [530, 630) ... [1630, 1730), 12
  // samples of 50: mean 50, covered 1.2 s of a basis of 1.48 - 0.15 = 1.33 s (90.2%).
  EXPECT_EQ(gpm.window.results.samples_used, 12);
  EXPECT_NEAR(gpm.window.results.units[0].mean_pct, 50.0, 1e-9);
  EXPECT_NEAR(gpm.window.results.chip_covered_s, 1.2, 1e-9);
  EXPECT_NEAR(gpm.window.results.chip_coverage_pct, 100.0 * 1.2 / 1.33, 1e-9);
  EXPECT_FALSE(gpm.window.results.partial);
  // The same samples read as PM sampling's: [230, 330) counts 30 ms of 0, [330, 430) 100 ms of 35,
  // 13 x 100 ms of 50 and [1730, 1830) 50 ms of 50: (0 x 30 + 35 x 100 + 50 x 1350) / 1480 = 47.97.
  const analysis::Analysis pm = make(recording::UnitSource::chip);
  EXPECT_NEAR(pm.window.results.units[0].mean_pct, (35.0 * 100 + 50.0 * 1350) / 1480, 1e-9);
}

}  // namespace
}  // namespace diescope::testing
