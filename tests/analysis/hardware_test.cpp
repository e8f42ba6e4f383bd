// Clocks, throttle reasons, power limits, hygiene, notes and the run's span.
#include <gtest/gtest.h>

#include "builder.hpp"
#include "diescope/recording/format.hpp"

namespace diescope::testing {
namespace {

Builder with_samples(double end_ms = 1000) {
  Builder b({"sm"}, end_ms);
  b.setup_sample();
  b.samples(100, static_cast<int>((end_ms - 100) / 100), 100, {10});
  return b;
}

TEST(Clocks, LowestHighestAndTimeWeightedMean) {
  Builder b = with_samples();
  b.clock(0, 1000, 5000);
  b.clock(400, 2000, 5000);
  b.clock(700, kNaNv, kNaNv);  // unreadable: skipped, 2000 holds on
  b.clock(800, 1500, 6000);
  b.clock(1200, 500, 500);  // after the run: not used
  const analysis::Analysis a = b.analyze();
  // SM: 1000 for [0,400), 2000 for [400,800), 1500 for [800,1000):
  // (1000 x 400 + 2000 x 400 + 1500 x 200) / 1000 = 1500.
  EXPECT_NEAR(a.run.sm_clock.mean_mhz, 1500.0, 1e-9);
  EXPECT_EQ(a.run.sm_clock.min_mhz, 1000.0);
  EXPECT_EQ(a.run.sm_clock.max_mhz, 2000.0);
  EXPECT_EQ(a.run.sm_clock.readings, 3);
  // Memory: 5000 for 800 ms, 6000 for 200 ms -> 5200.
  EXPECT_NEAR(a.run.mem_clock.mean_mhz, 5200.0, 1e-9);
}

TEST(Clocks, WindowGetsTheReadingHoldingIntoIt) {
  Builder b = with_samples();
  b.clock(0, 1000, 5000).clock(400, 2000, 5000).clock(800, 1500, 6000);
  b.mark(500, recording::MarkKind::start).mark(700, recording::MarkKind::stop);
  const analysis::Analysis a = b.analyze();
  // Only the 400 ms reading (2000 MHz) holds over [500, 700).
  const analysis::ClockStats& w = a.window.results.sm_clock;
  EXPECT_EQ(w.readings, 1);
  EXPECT_EQ(w.min_mhz, 2000.0);
  EXPECT_EQ(w.max_mhz, 2000.0);
  EXPECT_NEAR(w.mean_mhz, 2000.0, 1e-9);
}

TEST(Clocks, NoReadingsGiveNaN) {
  const analysis::Analysis a = with_samples().analyze();
  EXPECT_EQ(a.run.sm_clock.readings, 0);
  EXPECT_TRUE(std::isnan(a.run.sm_clock.mean_mhz));
}

TEST(Throttle, UnionOfReasonsOverTheSpan) {
  Builder b = with_samples();
  b.throttle(100, recording::throttle_sw_power_cap);
  b.throttle(500, 0);
  b.throttle(900, recording::throttle_hw_thermal | recording::throttle_sw_power_cap);
  b.throttle(1500, recording::throttle_hw_slowdown);  // after the run
  const analysis::Analysis a = b.analyze();
  ASSERT_TRUE(a.run.throttle_reasons.has_value());
  // 0x4 | 0 | 0x44 = 0x44: sw_power_cap and hw_thermal, in bit order.
  EXPECT_EQ(*a.run.throttle_reasons, (std::vector<std::string>{"sw_power_cap", "hw_thermal"}));
}

TEST(Throttle, EmptyMeansNothingLimitedAndNulloptMeansUnknown) {
  {
    Builder b = with_samples();
    b.throttle(100, 0).throttle(600, 0);
    const analysis::Analysis a = b.analyze();
    ASSERT_TRUE(a.run.throttle_reasons.has_value());
    EXPECT_TRUE(a.run.throttle_reasons->empty());
  }
  {
    Builder b = with_samples();
    b.throttle(100, std::nullopt).throttle(600, std::nullopt);
    EXPECT_FALSE(b.analyze().run.throttle_reasons.has_value());
  }
  {
    // One unknown read beside a known one: the known one speaks.
    Builder b = with_samples();
    b.throttle(100, std::nullopt).throttle(600, recording::throttle_sw_thermal);
    EXPECT_EQ(*b.analyze().run.throttle_reasons, std::vector<std::string>{"sw_thermal"});
  }
  EXPECT_FALSE(with_samples().analyze().run.throttle_reasons.has_value());
}

TEST(Throttle, ShortWindowTakesTheNearestReading) {
  {
    Builder b = with_samples();
    b.throttle(500, recording::throttle_sw_power_cap).throttle(600, recording::throttle_hw_slowdown);
    b.mark(510, recording::MarkKind::start).mark(560, recording::MarkKind::stop);
    // No read inside [510, 560]; 10 ms before it vs 40 ms after: the earlier one.
    EXPECT_EQ(*b.analyze().window.results.throttle_reasons, std::vector<std::string>{"sw_power_cap"});
  }
  {
    Builder b = with_samples();
    b.throttle(400, recording::throttle_sw_power_cap).throttle(570, recording::throttle_hw_slowdown);
    b.mark(510, recording::MarkKind::start).mark(560, recording::MarkKind::stop);
    // 110 ms before vs 10 ms after: the later one.
    EXPECT_EQ(*b.analyze().window.results.throttle_reasons, std::vector<std::string>{"hw_slowdown"});
  }
}

TEST(Throttle, NamesOfBits) {
  EXPECT_EQ(recording::throttle_reason_names(0x1 | 0x100),
            (std::vector<std::string>{"gpu_idle", "display_clocks"}));
  EXPECT_EQ(recording::throttle_reason_names(0x400), std::vector<std::string>{"0x400"});
  EXPECT_TRUE(recording::throttle_reason_names(0).empty());
}

TEST(PowerLimit, RangeOverTheSpan) {
  Builder b = with_samples();
  b.power(0, 100).power(500, 120).power(600, kNaNv).power(2000, 90);
  const analysis::Analysis a = b.analyze();
  // 100 and 120 in the run; NaN skipped; 90 comes after the run.
  EXPECT_EQ(a.run.power_limit_min_w, 100.0);
  EXPECT_EQ(a.run.power_limit_max_w, 120.0);
}

TEST(Hygiene, MostHoldersInOneReadAndExited) {
  Builder b = with_samples();
  b.rec.list<recording::ProcessReading>().push_back(recording::ProcessReading{at_ms(100), 1, 0, 0});
  b.rec.list<recording::ProcessReading>().push_back(recording::ProcessReading{at_ms(200), -1, -1, 0});
  b.rec.list<recording::ProcessReading>().push_back(recording::ProcessReading{at_ms(300), 3, 1, 2});
  b.rec.list<recording::ProcessReading>().push_back(recording::ProcessReading{at_ms(400), 2, 0, 1});
  const analysis::Analysis a = b.analyze();
  EXPECT_EQ(a.hygiene.compute_holders_max, 3);
  EXPECT_EQ(a.hygiene.graphics_holders_max, 1);
  EXPECT_EQ(a.hygiene.exited_holders, 2);
}

TEST(Hygiene, UnreadableProcessListIsNullopt) {
  Builder b = with_samples();
  b.rec.list<recording::ProcessReading>().push_back(recording::ProcessReading{at_ms(100), -1, -1, 0});
  const analysis::Analysis a = b.analyze();
  EXPECT_FALSE(a.hygiene.compute_holders_max.has_value());
  EXPECT_FALSE(a.hygiene.graphics_holders_max.has_value());
}

TEST(Hygiene, OtherProcessesByPidAndTheMostAtOnce) {
  // docs/method.md#shared-gpus-in-the-headline. Replayed by hand:
  //   100 ms: command 10, diescope 11, other 20 -> others {20}         (1)
  //   300 ms: other 21                           -> others {20, 21}     (2)
  //   500 ms: 20 gone; other 22                  -> others {21, 22}     (2)
  //   700 ms: 21 gone, 22 gone; other 20 again   -> others {20}         (1)
  // Four other processes were seen (20 counted once), at most 2 at once; the command's and
  // diescope's pids are never others.
  Builder b = with_samples();
  using recording::GpuHolder;
  using recording::HolderRole;
  b.rec.list<recording::ProcessReading>().push_back(recording::ProcessReading{at_ms(100), 3, 0, 0});
  auto& h = b.rec.side_records.holders;
  h.push_back(GpuHolder{at_ms(100), 10, HolderRole::command, "python3"});
  h.push_back(GpuHolder{at_ms(100), 11, HolderRole::diescope, "diescope-cupti"});
  h.push_back(GpuHolder{at_ms(100), 20, HolderRole::other, "ncu"});
  h.push_back(GpuHolder{at_ms(300), 21, HolderRole::other, ""});
  h.push_back(GpuHolder{at_ms(500), 20, HolderRole::gone, ""});
  h.push_back(GpuHolder{at_ms(500), 22, HolderRole::other, "dcgmi"});
  h.push_back(GpuHolder{at_ms(700), 21, HolderRole::gone, ""});
  h.push_back(GpuHolder{at_ms(700), 22, HolderRole::gone, ""});
  h.push_back(GpuHolder{at_ms(700), 20, HolderRole::other, "ncu"});
  const analysis::Analysis a = b.analyze();
  EXPECT_TRUE(a.hygiene.holders_recorded);
  EXPECT_EQ(a.hygiene.other_processes_max, 2);
  ASSERT_EQ(a.hygiene.other_processes.size(), 3u);
  EXPECT_EQ(a.hygiene.other_processes[0].pid, 20);
  EXPECT_EQ(a.hygiene.other_processes[0].name, "ncu");
  EXPECT_EQ(a.hygiene.other_processes[0].first_ns, at_ms(100));
  EXPECT_EQ(a.hygiene.other_processes[1].pid, 21);
  EXPECT_EQ(a.hygiene.other_processes[1].name, "");
  EXPECT_EQ(a.hygiene.other_processes[2].pid, 22);
  EXPECT_EQ(a.hygiene.other_processes[2].first_ns, at_ms(500));
}

TEST(Hygiene, OnlyTheCommandsAndDiescopesProcessesAreNotShared) {
  Builder b = with_samples();
  auto& h = b.rec.side_records.holders;
  h.push_back(recording::GpuHolder{at_ms(100), 10, recording::HolderRole::command, "python3"});
  h.push_back(recording::GpuHolder{at_ms(100), 12, recording::HolderRole::command, "pt_data_worker"});
  const analysis::Analysis a = b.analyze();
  EXPECT_TRUE(a.hygiene.holders_recorded);
  EXPECT_TRUE(a.hygiene.other_processes.empty());
  EXPECT_EQ(a.hygiene.other_processes_max, 0);
  // Without holder records nothing is known by pid.
  EXPECT_FALSE(with_samples().analyze().hygiene.holders_recorded);
}

TEST(Hygiene, ClockJumpsListed) {
  Builder b = with_samples();
  b.rec.side_records.clock_jumps.push_back(recording::ClockJump{at_ms(500), 2 * recording::kNsPerSecond});
  const analysis::Analysis a = b.analyze();
  ASSERT_EQ(a.hygiene.clock_jumps.size(), 1u);
  EXPECT_EQ(a.hygiene.clock_jumps[0].step_ns, 2 * recording::kNsPerSecond);
  EXPECT_EQ(a.hygiene.clock_jumps[0].ts_ns, at_ms(500));
}

TEST(Notes, RecordingNotesAreCarried) {
  Builder b = with_samples();
  b.rec.side_records.notes.push_back(recording::Note{at_ms(300), "sampler", "counter decoder crashed"});
  const analysis::Analysis a = b.analyze();
  ASSERT_FALSE(a.notes.empty());
  EXPECT_EQ(a.notes[0].topic, "sampler");
  EXPECT_EQ(a.notes[0].text, "counter decoder crashed");
}

TEST(Span, RunEndsAtTheEndRecord) {
  Builder b = with_samples();
  const analysis::Analysis a = b.analyze();
  // meta.start_ns = T0, end at 1000 ms.
  EXPECT_EQ(a.run.start_ns, T0);
  EXPECT_EQ(a.run.end_ns, at_ms(1000));
  EXPECT_NEAR(a.run.span_s, 1.0, 1e-12);
  EXPECT_EQ(a.method, 4);
}

TEST(Span, CutOffRecordingEndsAtItsLastRecordWithANote) {
  Builder b = with_samples();
  b.rec.side_records.end.reset();
  b.rec.side_records.last_ts_ns = at_ms(800);
  b.rec.side_records.truncated = true;
  const analysis::Analysis a = b.analyze();
  EXPECT_EQ(a.run.end_ns, at_ms(800));
  // Samples [100, 800) usable: 700 of 800 ms = 87.5% -> partial.
  EXPECT_NEAR(a.run.chip_coverage_pct, 87.5, 1e-9);
  EXPECT_TRUE(a.truncated_input);
  ASSERT_EQ(a.findings.size(), 3u);
  EXPECT_EQ(a.findings[0].kind, analysis::AnalysisFinding::Kind::no_end_record);
  EXPECT_EQ(a.findings[0].ts_ns, at_ms(800));
  EXPECT_NEAR(a.findings[0].run_s, 0.8, 1e-12);
  EXPECT_EQ(a.findings[1].kind, analysis::AnalysisFinding::Kind::truncated);
  // The samples [800, 900) and [900, 1000) lie after the run's cut-off end.
  EXPECT_EQ(a.findings[2].kind, analysis::AnalysisFinding::Kind::samples_outside_run);
  EXPECT_EQ(a.findings[2].samples, 2);
  EXPECT_TRUE(a.notes.empty());  // the recording's own notes only
}

TEST(Span, EmptyRunHasNoDieUtilAndSaysWhy) {
  Builder b({"sm"}, 0);
  const analysis::Analysis a = b.analyze();
  EXPECT_TRUE(std::isnan(a.run.die_util_pct));
  EXPECT_EQ(a.run.die_util_missing, analysis::DieUtilMissing::empty_span);
  EXPECT_FALSE(a.run.headline.die_util_tenths.has_value());
}

}  // namespace
}  // namespace diescope::testing
