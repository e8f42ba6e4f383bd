// The agent over a replayed synthetic recording, driven step by step with a fake clock: duty
// windows, the record's figures, the cost reason, clock steps and suspends, the end of a replay.
#include <gtest/gtest.h>

#include <memory>

#include <cmath>

#include "diescope/agent/agent.hpp"
#include "diescope/agent/replay_feed.hpp"
#include "diescope/agent/runner.hpp"
#include "diescope/core/error.hpp"
#include "diescope/core/version.hpp"
#include "fake_clock.hpp"
#include "steady_recording.hpp"

// Its own namespace: the part's test files compile as one (docs/building.md#one-test-binary-per-part).
namespace diescope::agent::replay_test {
namespace {

using testing::FakeClock;

constexpr recording::TimeNs kMs = recording::kNsPerMs;
constexpr recording::TimeNs kS = recording::kNsPerSecond;

struct Rig {
  FakeClock clock;
  std::unique_ptr<ReplayFeed> source;
  std::unique_ptr<Agent> agent;
  recording::TimeNs origin = 0;

  Rig(double seconds, AgentSettings settings, double speed = 1.0, double power_draw_w = analysis::kNaN) {
    std::vector<std::unique_ptr<recording::Recording>> recs;
    recording::SyntheticSpec spec = testing::steady_spec(seconds);
    spec.power_draw_w = power_draw_w;
    recs.push_back(recording::make_synthetic_recording(spec));
    source = std::make_unique<ReplayFeed>(std::move(recs), speed, false, clock.read());
    origin = source->origin_ns();
    agent = std::make_unique<Agent>(*source, clock, settings);
  }
  // Steps every `step` of wall time until `until` of wall time has passed since the start.
  std::vector<AgentRecord> run(recording::TimeNs until, recording::TimeNs step = 500 * kMs) {
    std::vector<AgentRecord> all;
    for (recording::TimeNs t = 0; t < until && !agent->ended(); t += step) {
      clock.advance(step);
      for (auto& r : agent->step()) all.push_back(std::move(r));
    }
    return all;
  }
};

AgentSettings duty(double on_ms, double period_ms, double poll_ms = 500) {
  AgentSettings s;
  s.poll_ms = poll_ms;
  s.duty_on_ms = on_ms;
  s.duty_period_ms = period_ms;
  s.read_power = [] { return PowerSource::mains; };  // the host's own source must not decide a test
  return s;
}

// The cost estimate needs mains power over the whole period (docs/method.md#measurement-cost). A
// made-up table holds this test's setting; the host reads battery at the 4th and 5th reads (the
// first is the agent's start, then one per 500 ms step): inside the first period [0, 5 s), whose
// source therefore changed. The second period reads mains throughout and gets the estimate.
TEST(AgentReplay, ThePowerSourceOverEachPeriodDecidesTheEstimate) {
  const std::vector<CostEntry> table = {
      CostEntry{"NVIDIA H200", 10, 2000, 5000, 0.5, 2.5, 5, 60, "test", "test"}};
  AgentSettings settings = duty(2000, 5000);
  settings.cost_table = &table;
  auto reads = std::make_shared<int>(0);
  settings.read_power = [reads] {
    ++*reads;
    return *reads == 4 || *reads == 5 ? PowerSource::battery : PowerSource::mains;
  };
  Rig rig(10, settings);
  auto records = rig.run(10 * kS);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_FALSE(records[0].cost);
  EXPECT_NE(records[0].cost_reason.find("power source changed"), std::string::npos) << records[0].cost_reason;
  ASSERT_TRUE(records[1].cost) << records[1].cost_reason;
  EXPECT_DOUBLE_EQ(records[1].cost->slowdown_hi_pct, 2.5);
}

TEST(AgentReplay, OneRecordPerPeriodWithTheChipWindowsFigures) {
  Rig rig(10, duty(2000, 5000));
  auto records = rig.run(10 * kS);
  ASSERT_EQ(records.size(), 2u);
  const AgentRecord& r = records[0];
  EXPECT_EQ(r.source, "replay");
  EXPECT_EQ(r.gpu_index, 0);
  EXPECT_EQ(r.gpu_model, "NVIDIA H200");
  EXPECT_EQ(r.period_start_ns, rig.origin);
  EXPECT_EQ(r.period_end_ns, rig.origin + 5 * kS);
  // The window runs from the counters' start (0 s) to the agent's stop at 2 s.
  ASSERT_TRUE(r.window_start_ns && r.window_end_ns);
  EXPECT_EQ(*r.window_start_ns, rig.origin);
  EXPECT_EQ(*r.window_end_ns, rig.origin + 2 * kS);
  // On from the request at 0 s to the confirmed stop at 2 s.
  EXPECT_DOUBLE_EQ(r.counters_on_s, 2.0);
  // 200 samples of 10 ms end inside (0, 2 s]; the first after the start is dropped: 199 used,
  // 1.99 s covered of 2 s scheduled = 99.5%.
  EXPECT_EQ(r.samples_used, 199);
  EXPECT_NEAR(r.chip_coverage_pct, 99.5, 1e-9);
  EXPECT_EQ(r.chip_coverage_gate, analysis::CoverageGate::pass);
  // DIE-Util is the busiest unit: max(60, 5, 30, 20) = 60, and FP32 limits the chip.
  EXPECT_NEAR(r.die_util_pct, 60.0, 1e-9);
  ASSERT_TRUE(r.limiting_unit);
  EXPECT_EQ(*r.limiting_unit, "fp32");
  ASSERT_EQ(r.units.size(), 4u);
  EXPECT_EQ(r.units[2].key, "dram");
  EXPECT_NEAR(r.units[2].mean_pct, 30.0, 1e-9);
  // GPU-Util 90 over the same time; gap 90 - 60 = 30; stranded 100 - 60 = 40 = idle (100 - 90 = 10)
  // + active (30).
  EXPECT_NEAR(r.gpu_util_pct, 90.0, 1e-9);
  EXPECT_NEAR(r.gpu_util_coverage_pct, 100.0, 1e-9);
  EXPECT_DOUBLE_EQ(r.gap_pct, 30.0);
  EXPECT_DOUBLE_EQ(r.stranded_pct, 40.0);
  EXPECT_DOUBLE_EQ(r.stranded_idle_pct, 10.0);
  EXPECT_DOUBLE_EQ(r.stranded_active_pct, 30.0);
  // Clocks over the chip window.
  EXPECT_DOUBLE_EQ(r.sm_clock.mean_mhz, 1980);
  EXPECT_DOUBLE_EQ(r.mem_clock.mean_mhz, 2619);
  // Settings, versions, and the cost's reason (the table is empty today).
  EXPECT_DOUBLE_EQ(r.duty_on_ms, 2000);
  EXPECT_DOUBLE_EQ(r.duty_period_ms, 5000);
  EXPECT_DOUBLE_EQ(r.interval_ms, 10);
  EXPECT_EQ(r.method, core::kMethodVersion);
  EXPECT_EQ(r.schema, kAgentRecordSchema);
  EXPECT_FALSE(r.cost);
  // 2000 of 5000 ms is not a setting the H200 rows of the cost table hold.
  EXPECT_NE(r.cost_reason.find("no figure for counters on 2000 ms of every 5000 ms at 10 ms on NVIDIA H200"),
            std::string::npos)
      << r.cost_reason;
  EXPECT_FALSE(r.restart);

  // The second period: [5 s, 10 s), window [5 s, 7 s), the same figures.
  const AgentRecord& r2 = records[1];
  EXPECT_EQ(r2.period_start_ns, rig.origin + 5 * kS);
  EXPECT_EQ(r2.period_end_ns, rig.origin + 10 * kS);
  EXPECT_EQ(*r2.window_start_ns, rig.origin + 5 * kS);
  EXPECT_EQ(*r2.window_end_ns, rig.origin + 7 * kS);
  EXPECT_EQ(r2.samples_used, 199);
  EXPECT_NEAR(r2.die_util_pct, 60.0, 1e-9);
  EXPECT_DOUBLE_EQ(r2.counters_on_s, 2.0);
  EXPECT_TRUE(rig.agent->ended());
  EXPECT_EQ(rig.agent->status()[0].records, 2);
  EXPECT_DOUBLE_EQ(rig.agent->status()[0].counters_on_total_s, 4.0);
}

// docs/energy.md#in-the-agent: each record's energy over its whole period from the counter, and the
// agent's totals over closed records. The synthetic GPU draws 400 W and reads its power with each
// clock reading, every 100 ms from 0 to 9.9 s.
TEST(AgentReplay, EnergyPerRecordAndItsTotals) {
  Rig rig(10, duty(2000, 5000), 1.0, 400);
  auto records = rig.run(10 * kS);
  ASSERT_EQ(records.size(), 2u);
  // [0, 5 s): readings cover all of it, 400 W x 5 s = 2000 J.
  EXPECT_EQ(records[0].energy_source, "counter");
  EXPECT_NEAR(records[0].energy_j, 2000.0, 1e-6);
  EXPECT_NEAR(records[0].mean_power_w, 400.0, 1e-9);
  // [5 s, 10 s): the last reading is at 9.9 s, so 4.9 s are covered: 1960 J.
  EXPECT_NEAR(records[1].energy_j, 1960.0, 1e-6);
  // DIE-Util is 60% throughout, over the 10% threshold: nothing stranded.
  EXPECT_EQ(records[0].stranded_energy_j, 0.0);
  const GpuStatus st = rig.agent->status()[0];
  EXPECT_NEAR(st.energy_total_j, 3960.0, 1e-6);
  EXPECT_EQ(st.stranded_energy_total_j, 0.0);
}

TEST(AgentReplay, WithoutPowerReadingsEnergyIsNaNWithItsReason) {
  Rig rig(10, duty(2000, 5000));
  auto records = rig.run(10 * kS);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_TRUE(std::isnan(records[0].energy_j));
  EXPECT_EQ(records[0].energy_source, "none");
  EXPECT_FALSE(records[0].energy_reason.empty());
  EXPECT_EQ(rig.agent->status()[0].energy_total_j, 0.0);  // nothing closed with a figure adds nothing
}

TEST(AgentReplay, CountersAreOffBetweenWindows) {
  Rig rig(10, duty(2000, 5000));
  rig.run(1 * kS);
  EXPECT_TRUE(rig.source->counters_on(0));  // 1 s: inside the first window
  EXPECT_TRUE(rig.agent->status()[0].counters_on);
  rig.run(2 * kS);  // 3 s: between windows
  EXPECT_FALSE(rig.source->counters_on(0));
  EXPECT_FALSE(rig.agent->status()[0].counters_on);
  rig.run(3 * kS);  // 6 s: the second window
  EXPECT_TRUE(rig.source->counters_on(0));
}

TEST(AgentReplay, AlwaysOnCoversTheWholePeriod) {
  Rig rig(4, duty(2000, 2000));
  auto records = rig.run(4 * kS);
  ASSERT_EQ(records.size(), 2u);
  // Period 1: 200 samples end in (0, 2 s], the first dropped: 1.99 s of 2 s = 99.5%.
  EXPECT_NEAR(records[0].chip_coverage_pct, 99.5, 1e-9);
  EXPECT_DOUBLE_EQ(records[0].duty_on_ms, 0);  // recorded as always on
  EXPECT_DOUBLE_EQ(records[0].counters_on_s, 2.0);
  // Period 2 has no start event of its own: the analysis drops its first sample all the same
  // (docs/agent.md), so again 1.99 s of 2 s.
  EXPECT_EQ(*records[1].window_start_ns, rig.origin + 2 * kS);
  EXPECT_NEAR(records[1].chip_coverage_pct, 99.5, 1e-9);
  EXPECT_DOUBLE_EQ(records[1].counters_on_s, 2.0);
}

TEST(AgentReplay, ReplayEndCutsTheLastPeriodShort) {
  Rig rig(7, duty(2000, 5000));
  auto records = rig.run(10 * kS);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1].period_start_ns, rig.origin + 5 * kS);
  EXPECT_EQ(records[1].period_end_ns, rig.origin + 7 * kS);  // the recording's end
  bool noted = false;
  for (const auto& n : records[1].notes) noted = noted || n.find("recording ended") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(AgentReplay, ReplaySpeedScalesTheTimeline) {
  // At 4x, 10 recording seconds pass in 2.5 s: both 5 s periods are done.
  Rig rig(10, duty(2000, 5000), 4.0);
  auto records = rig.run(3 * kS, 125 * kMs);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_NEAR(records[0].die_util_pct, 60.0, 1e-9);
  EXPECT_EQ(records[0].samples_used, 199);
}

TEST(AgentReplay, WallClockStepRestartsTheRecordAndTheNextOneSaysSo) {
  Rig rig(20, duty(2000, 5000));
  auto first = rig.run(6 * kS);  // period 1 closed at 5 s; period 2 in its window
  ASSERT_EQ(first.size(), 1u);
  rig.clock.step_wall(5 * kS);  // someone sets the clock 5 s ahead
  rig.clock.advance(500 * kMs);
  auto at_step = rig.agent->step();
  EXPECT_TRUE(at_step.empty());  // the period in progress is abandoned, not written
  EXPECT_EQ(rig.agent->status()[0].clock_restarts, 1);
  auto rest = rig.run(6 * kS);
  ASSERT_GE(rest.size(), 1u);
  const AgentRecord& r = rest[0];
  ASSERT_TRUE(r.restart);
  EXPECT_EQ(r.restart->kind, "wall_clock_step");
  EXPECT_EQ(r.restart->step_ns, 5 * kS);
  EXPECT_NE(r.restart->text.find("+5.000 s"), std::string::npos) << r.restart->text;
  // The new period starts where the step was noticed: 6.5 s on the replay's (monotonic) timeline,
  // with a fresh 2 s window; 199 of its 200 samples used again.
  EXPECT_EQ(r.period_start_ns, rig.origin + 6500 * kMs);
  EXPECT_EQ(r.period_end_ns, rig.origin + 11500 * kMs);
  EXPECT_EQ(*r.window_start_ns, rig.origin + 6500 * kMs);
  EXPECT_EQ(r.samples_used, 199);
  EXPECT_NEAR(r.die_util_pct, 60.0, 1e-9);
  // Only the record right after the step carries it.
  if (rest.size() > 1) {
    EXPECT_FALSE(rest[1].restart);
  }
}

TEST(AgentReplay, BackwardStepAndSuspendAreNoticedToo) {
  Rig rig(30, duty(1000, 2000));
  rig.run(3 * kS);
  rig.clock.step_wall(-2 * kS);
  rig.clock.advance(500 * kMs);
  rig.agent->step();
  rig.clock.suspend(30 * kS);  // monotonic stands still: the replay's timeline does too
  rig.clock.advance(500 * kMs);
  rig.agent->step();
  EXPECT_EQ(rig.agent->status()[0].clock_restarts, 2);
  auto records = rig.run(3 * kS);
  ASSERT_FALSE(records.empty());
  ASSERT_TRUE(records[0].restart);
  EXPECT_EQ(records[0].restart->kind, "suspend");
  EXPECT_EQ(records[0].restart->step_ns, 30 * kS);
}

TEST(AgentReplay, SmallDriftIsNotAStep) {
  // NTP slewing: 50 ms between two polls is under the 0.1 s threshold.
  Rig rig(10, duty(2000, 5000));
  rig.run(1 * kS);
  rig.clock.step_wall(50 * kMs);
  rig.run(1 * kS);
  EXPECT_EQ(rig.agent->status()[0].clock_restarts, 0);
}

TEST(AgentReplay, FinishDisablesTheCountersAndClosesTheWindow) {
  Rig rig(20, duty(2000, 5000));
  rig.run(1 * kS);
  ASSERT_TRUE(rig.source->counters_on(0));
  auto last = rig.agent->finish("SIGTERM");
  EXPECT_FALSE(rig.source->counters_on(0));
  EXPECT_FALSE(rig.agent->status()[0].counters_on);
  ASSERT_EQ(last.size(), 1u);
  // Stopped at 1 s: the window is [0, 1 s], 100 samples, the first dropped.
  EXPECT_EQ(last[0].samples_used, 99);
  EXPECT_EQ(last[0].period_end_ns, rig.origin + 1 * kS);
  bool noted = false;
  for (const auto& n : last[0].notes) noted = noted || n.find("SIGTERM") != std::string::npos;
  EXPECT_TRUE(noted);
  EXPECT_TRUE(rig.agent->ended());
}

TEST(AgentReplay, SettingsThatCannotRunAreUsageErrors) {
  EXPECT_THROW(validate_settings(duty(0, 1000)), core::UsageError);
  EXPECT_THROW(validate_settings(duty(100, 0)), core::UsageError);
  EXPECT_THROW(validate_settings(duty(100, 500, 1000)), core::UsageError);  // period shorter than a poll
  EXPECT_NO_THROW(validate_settings(duty(2000, 60000, 1000)));
}

// docs/agent.md#wake-ups: a wake for a host probe alone reads the probe and steps nothing, and does
// not put the agent's own due times off. A 4.5 s recording replayed at 10x with 1 s periods (500 ms
// on) and 100 ms polls, host probes every 2 ms: the agent is due at its start and at each poll (45
// of them, the window ends and period ends falling on polls): 46 due times, each stepped at most
// twice (a wake a fraction of a millisecond short of a due time, the replay's clock running 10x,
// steps once more), so at most 92 steps, where a step at each probe read would be about 225 in the
// 0.45 s. And it still closes every period: [0, 1), [1, 2), [2, 3), [3, 4) and [4, 4.5) cut short
// by the recording's end, 5 records.
TEST(AgentRunner, HostProbeWakesStepNothingAndDelayNothing) {
  core::SystemClock clock;
  std::vector<std::unique_ptr<recording::Recording>> recs;
  recs.push_back(recording::make_synthetic_recording(testing::steady_spec(4.5)));
  ReplayFeed source(std::move(recs), 10.0, false, clock.read());
  Agent agent(source, clock, duty(500, 1000, 100));
  HostMetrics host;
  RunnerOptions options;
  options.host = &host;
  options.host_interval_ms = 2;
  options.retention_days = 0;
  long steps = 0;
  options.after_step = [&] { ++steps; };
  long records = 0;
  options.annotate = [&](std::vector<AgentRecord>& r) { records += static_cast<long>(r.size()); };
  EXPECT_EQ(run_agent(agent, options), 0);
  EXPECT_EQ(records, 5);
  EXPECT_LE(steps, 92);
}

}  // namespace
}  // namespace diescope::agent::replay_test
