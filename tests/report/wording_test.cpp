// The words for every code the analysis and the run leave (report/wording.hpp). Each expected text
// is the one report.json carried before the analysis kept codes instead of words.
#include <gtest/gtest.h>

#include <csignal>

#include "diescope/recording/format.hpp"
#include "diescope/report/wording.hpp"

namespace diescope {
namespace {

analysis::SpanResults span(bool is_window) {
  analysis::SpanResults s;
  s.is_window = is_window;
  return s;
}

TEST(Wording, WindowFindings) {
  EXPECT_EQ(report::window_words(analysis::WindowFinding::markers), "markers");
  EXPECT_EQ(report::window_words(analysis::WindowFinding::not_asked), "not asked for");
  EXPECT_EQ(report::window_words(analysis::WindowFinding::no_markers), "no markers");
  EXPECT_EQ(report::window_words(analysis::WindowFinding::stop_without_start),
            "stop before start: a stop marker with no start marker");
  EXPECT_EQ(report::window_words(analysis::WindowFinding::stop_before_start),
            "stop before start: no stop marker after the start marker");
  EXPECT_EQ(report::window_words(analysis::WindowFinding::start_without_stop),
            "start without stop: no stop marker after the start marker");
  EXPECT_EQ(report::window_words(analysis::WindowFinding::outside_run), "the markers lie outside the run");
}

TEST(Wording, MissingDieUtilNamesTheSpan) {
  analysis::SpanResults run = span(false), window = span(true);
  EXPECT_EQ(report::die_util_missing_words(run), "");
  run.die_util_missing = window.die_util_missing = analysis::DieUtilMissing::empty_span;
  EXPECT_EQ(report::die_util_missing_words(run), "the run is empty (it ends at or before its start)");
  EXPECT_EQ(report::die_util_missing_words(window), "the window is empty");
  run.die_util_missing = window.die_util_missing = analysis::DieUtilMissing::no_usable_samples;
  EXPECT_EQ(report::die_util_missing_words(run), "no usable chip samples in the run");
  EXPECT_EQ(report::die_util_missing_words(window), "no usable chip samples in the window");
  run.die_util_missing = analysis::DieUtilMissing::no_unit_value;
  EXPECT_EQ(report::die_util_missing_words(run), "no unit had a value in any usable chip sample");
}

TEST(Wording, MissingLimitingUnitQuotesTheRule) {
  analysis::SpanResults s = span(false);
  EXPECT_EQ(report::limiting_unit_missing_words(s), "");
  s.limiting_unit_missing = analysis::LimitingUnitMissing::no_usable_samples;
  EXPECT_EQ(report::limiting_unit_missing_words(s), "no usable chip samples");
  s.limiting_unit_missing = analysis::LimitingUnitMissing::no_busy_unit;
  EXPECT_EQ(report::limiting_unit_missing_words(s), "no unit reached 1% of its peak");
  s.limiting_unit_missing = analysis::LimitingUnitMissing::busy_units_sparse;
  EXPECT_EQ(report::limiting_unit_missing_words(s),
            "the units that reached 1% of their peak had values for under 90% of the chip-sampled time");
}

TEST(Wording, MissingGpuUtilGapAndSplit) {
  analysis::SpanResults s = span(false);
  s.gpu_util_missing = analysis::GpuUtilMissing::not_covered;
  EXPECT_EQ(report::gpu_util_missing_words(s), "no GPU-Util sample covers the chip-sampled time");
  s.gpu_util_missing = analysis::GpuUtilMissing::no_usable_samples;
  EXPECT_EQ(report::gpu_util_missing_words(s), "no usable chip samples to compare GPU-Util with");
  {
    // Without chip samples, NVML's coverage of the span decides
    // (docs/method.md#gpu-util-without-chip-samples).
    analysis::SpanResults w = span(true);
    w.gpu_util_missing = analysis::GpuUtilMissing::no_usable_samples;
    w.gpu_util_whole_span_coverage_pct = 50;
    EXPECT_EQ(
        report::gpu_util_missing_words(w),
        "no usable chip samples, and NVML's GPU-Util covered 50.0% of the window, under the 90% needed to "
        "give it over the whole window");
  }

  s.headline.gap_missing = analysis::GapMissing::no_gpu_util;
  s.headline.split_missing = analysis::SplitMissing::no_gap;
  EXPECT_EQ(report::gap_missing_words(s),
            "GPU-Util is not available: no usable chip samples to compare GPU-Util with");
  EXPECT_EQ(report::split_missing_words(s),
            report::gap_missing_words(s));  // the split is missing for the gap's reason

  s.die_util_missing = analysis::DieUtilMissing::no_unit_value;
  s.headline.gap_missing = analysis::GapMissing::no_die_util;
  EXPECT_EQ(report::gap_missing_words(s),
            "DIE-Util is not available: no unit had a value in any usable chip sample");

  // 2100 of 2900 ms: 72.41% to one decimal.
  s.gpu_util_coverage_pct = 2100.0 / 2900.0 * 100.0;
  s.headline.gap_missing = analysis::GapMissing::gpu_util_coverage_low;
  EXPECT_EQ(
      report::gap_missing_words(s),
      "GPU-Util covered 72.4% of the chip-sampled time, under the 90% needed to compare it with DIE-Util");
}

TEST(Wording, NegativeGapNamesTheUncountedUnitWhenThereIsOne) {
  analysis::SpanResults s = span(false);
  s.headline.split_missing = analysis::SplitMissing::negative_gap;
  EXPECT_EQ(
      report::split_missing_words(s),
      "GPU-Util reads below DIE-Util by more than its noise floor (the busiest unit may be one GPU-Util does "
      "not count, such as a video engine); idle and active can't be separated");
  s.headline.uncounted_limiting_unit = "NVENC";
  EXPECT_EQ(
      report::split_missing_words(s),
      "GPU-Util reads below DIE-Util by more than its noise floor because the busiest unit, NVENC, is one "
      "GPU-Util does not count; idle and active can't be separated");
}

TEST(Wording, PartialRoundsToAWholePercentBelowTheGate) {
  analysis::SpanResults run = span(false);
  EXPECT_EQ(report::partial_words(run), "");
  run.partial = true;
  run.partial_cause = analysis::PartialCause::low_coverage;
  run.chip_coverage_pct = 70.0;
  EXPECT_EQ(report::partial_words(run), "partial (counters covered 70% of the run)");
  run.chip_coverage_pct = 89.6;  // rounds to 90, the gate's own figure: shown as 89
  EXPECT_EQ(report::partial_words(run), "partial (counters covered 89% of the run)");
  analysis::SpanResults window = span(true);
  window.partial = true;
  window.partial_cause = analysis::PartialCause::low_coverage;
  window.chip_coverage_pct = 200.0 / 3.0;  // 66.67 -> 67
  EXPECT_EQ(report::partial_words(window), "partial (counters covered 67% of the window)");
  run.chip_coverage_pct = 75.0;
  run.chip_scheduled_s = 0.6;  // duty-cycled: of the scheduled time
  EXPECT_EQ(report::partial_words(run), "partial (counters covered 75% of their scheduled time)");
  window.partial_cause = analysis::PartialCause::not_scheduled;
  EXPECT_EQ(report::partial_words(window),
            "partial (the counters were not scheduled to run during the window)");
}

TEST(Wording, GpuUtilSources) {
  EXPECT_EQ(report::gpu_util_from_words(analysis::GpuUtilFrom::none), "");
  EXPECT_EQ(report::gpu_util_from_words(analysis::GpuUtilFrom::samples), "samples");
  EXPECT_EQ(report::gpu_util_from_words(analysis::GpuUtilFrom::polled), "polled");
  EXPECT_EQ(report::gpu_util_from_words(analysis::GpuUtilFrom::samples_and_polled), "samples+polled");
}

TEST(Wording, WhatTimeGpuUtilCovers) {
  analysis::SpanResults s = span(false);
  EXPECT_EQ(report::gpu_util_covers_words(s), "");  // no GPU-Util
  s.gpu_util_pct = 47.0;
  s.chip_covered_s = 3.4;
  EXPECT_EQ(report::gpu_util_covers_words(s), "the time the counters cover");
  s.chip_covered_s = 0;
  EXPECT_EQ(report::gpu_util_covers_words(s), "the whole run (no usable chip samples)");
  s.is_window = true;
  EXPECT_EQ(report::gpu_util_covers_words(s), "the whole window (no usable chip samples)");
}

TEST(Wording, SharedGpu) {
  analysis::Hygiene h;
  EXPECT_EQ(report::shared_gpu_words(h), "");  // the lists could not be read
  h.compute_holders_max = 1;
  h.graphics_holders_max = 0;
  EXPECT_EQ(report::shared_gpu_words(h), "");  // one holder: the measured command alone, or nothing else
  h.compute_holders_max = 2;
  EXPECT_EQ(report::shared_gpu_words(h),
            "up to 2 compute and 0 graphics processes held the GPU at once (the measured command's "
            "included); chip figures are device-wide: the counters see every process on the GPU");
  h.compute_holders_max = 1;
  h.graphics_holders_max = 1;
  EXPECT_NE(report::shared_gpu_words(h), "");
}

TEST(Wording, FindingsAndClockJumps) {
  EXPECT_EQ(
      report::finding_words({analysis::AnalysisFinding::Kind::no_end_record, 0, 0.8}),
      "the recording has no end record (cut off); the run is taken to end at its last record, 0.800 s after "
      "the start");
  EXPECT_EQ(report::finding_words({analysis::AnalysisFinding::Kind::truncated, 0}),
            "the recording ends mid-record; everything before it was read");
  EXPECT_EQ(report::finding_words({analysis::AnalysisFinding::Kind::samples_outside_run, 0, 0, 1}),
            "1 chip sample(s) lie wholly outside the run and were left out");
  // +2 s at 500 ms after a start at 1000 ns.
  EXPECT_EQ(
      report::clock_jump_words(recording::ClockJump{1000 + 500'000'000, 2'000'000'000}, 1000),
      "the wall clock stepped by +2.000 s at 0.500 s into the run; figures over spans that cross it may be "
      "wrong");
}

TEST(Wording, DroppedSamples) {
  recording::RecordingMeta meta;
  meta.units.resize(2);
  meta.units[0].key = "fp32";
  meta.units[1].key = "dram";
  meta.diagnostics.resize(1);
  meta.diagnostics[0].key = "sm_active";
  EXPECT_EQ(report::drop_words(analysis::SampleDrop::none, {}, meta), "");
  EXPECT_EQ(report::drop_words(analysis::SampleDrop::first, {}, meta),
            "first sample after the counters started: it spans their setup");
  EXPECT_EQ(report::drop_words(analysis::SampleDrop::broken, {analysis::SampleBreak::Part::empty_span}, meta),
            "empty span: end is not after start");
  EXPECT_EQ(report::drop_words(analysis::SampleDrop::broken, {analysis::SampleBreak::Part::unit, 1}, meta),
            "unit dram is not a number");
  EXPECT_EQ(
      report::drop_words(analysis::SampleDrop::broken, {analysis::SampleBreak::Part::diagnostic, 0}, meta),
      "diagnostic sm_active is not a number");
  EXPECT_EQ(report::drop_words(
                analysis::SampleDrop::broken,
                {analysis::SampleBreak::Part::unit, 0, analysis::SampleBreak::Value::above_peak, 5000}, meta),
            "unit fp32 reads 5000%, above the 200% of peak no counter can exceed");
  EXPECT_EQ(report::drop_words(
                analysis::SampleDrop::broken,
                {analysis::SampleBreak::Part::unit, 1, analysis::SampleBreak::Value::negative, -5}, meta),
            "unit dram reads -5%, below 0");
  EXPECT_EQ(report::finding_words({analysis::AnalysisFinding::Kind::impossible_values, 0, 0, 3}),
            "3 chip sample(s) hold a value no counter can produce (below 0% or above 200% of peak) and were "
            "left out as broken");
}

TEST(Wording, RunEndingsForPeopleAndTables) {
  EXPECT_EQ(report::run_ending_words(recording::RunEnding::exit(), 3), "exited with code 3");
  EXPECT_EQ(report::run_ending_words(recording::RunEnding::killed_by(SIGINT), 130), "ended by SIGINT");
  EXPECT_EQ(report::run_ending_cell(recording::RunEnding::exit(), 3), "3");
  EXPECT_EQ(report::run_ending_cell(recording::RunEnding::killed_by(SIGSEGV), 139), "SIGSEGV");
  EXPECT_EQ(report::run_ending_words(recording::parse_run_ending("replay end"), 0), "ended by replay end");
}

}  // namespace
}  // namespace diescope
