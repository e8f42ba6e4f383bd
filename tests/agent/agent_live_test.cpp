// The live source's sampler side, driven by the fake sampler child (no GPU): restarts with a
// backoff after crashes, a clean stop that resets it, and the agent's records saying so.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "diescope/agent/agent.hpp"
#include "diescope/agent/live_source.hpp"
#include "diescope/core/clock.hpp"
#include "two_unit_table.hpp"

namespace diescope::agent {
namespace {

using namespace std::chrono_literals;

collect::SamplerConfig fake_config(std::vector<std::string> extra) {
  collect::SamplerConfig c;
  c.executable = DIESCOPE_SAMPLER_FAKE;
  c.device = 0;
  c.interval_ms = 2;
  c.drain_ms = 20;
  c.extra_args = std::move(extra);
  return c;
}

bool any_note(const std::vector<recording::Note>& notes, const std::string& text) {
  for (const recording::Note& n : notes)
    if (n.text.find(text) != std::string::npos) return true;
  return false;
}

TEST(SamplerSupervisor, RestartsACrashedSamplerWithADoublingBackoff) {
  SupervisorTiming timing;
  timing.backoff_initial_ns = 100 * recording::kNsPerMs;
  timing.backoff_max_ns = 400 * recording::kNsPerMs;
  SamplerSupervisor sup(fake_config({"--crash-after", "10"}), &test::two_unit_table(), "GPU-fake-0", timing);
  GpuBatch batch;
  sup.set_wanted(true, core::realtime_ns(), batch);
  EXPECT_EQ(sup.starts(), 1);
  const auto deadline = std::chrono::steady_clock::now() + 1600ms;
  while (std::chrono::steady_clock::now() < deadline) {
    sup.pump(core::realtime_ns(), batch);
    std::this_thread::sleep_for(5ms);
  }
  // Each child crashes after 10 samples; it is restarted after 0.1 s, then 0.2 s, then 0.4 s
  // (the cap), so 1.6 s holds at least 4 starts: 0 + (crash) 0.1 + 0.2 + 0.4 = 0.7 s of backoff.
  EXPECT_GE(sup.starts(), 4);
  EXPECT_EQ(sup.restarts(), sup.starts() - 1);
  EXPECT_TRUE(any_note(batch.notes, "killed by signal SIGSEGV"));
  EXPECT_TRUE(any_note(batch.notes, "restarting it in 0.1 s"));
  EXPECT_TRUE(any_note(batch.notes, "restarting it in 0.2 s"));
  EXPECT_TRUE(any_note(batch.notes, "restarting it in 0.4 s"));
  EXPECT_FALSE(any_note(batch.notes, "restarting it in 0.8 s"));  // capped at the maximum
  EXPECT_TRUE(any_note(batch.notes, "restarted the counter sampler"));
  // A crash is a stop of the counters, with its reason; every child's start is an "on".
  int ons = 0, crash_offs = 0;
  for (const recording::CountersEvent& e : batch.counters) {
    if (e.on)
      ++ons;
    else if (e.reason.find("SIGSEGV") != std::string::npos)
      ++crash_offs;
  }
  EXPECT_EQ(ons, static_cast<int>(sup.starts()));
  EXPECT_GE(crash_offs, 3);
  // Samples arrive with the fake's values: unit a is metric 0, 10 + k%10; unit b 20 + k%10.
  ASSERT_GE(batch.list<recording::ChipSample>().size(), 30u);
  EXPECT_EQ(batch.list<recording::ChipSample>()[3].units.size(), 2u);
  EXPECT_DOUBLE_EQ(batch.list<recording::ChipSample>()[3].units[0], 13);
  EXPECT_DOUBLE_EQ(batch.list<recording::ChipSample>()[3].units[1], 23);
  GpuBatch last;
  sup.stop_and_wait(core::realtime_ns(), last);
  EXPECT_FALSE(sup.running());
}

TEST(SamplerSupervisor, ACleanStopDisablesTheCountersAndIsNoFailure) {
  SupervisorTiming timing;
  timing.backoff_initial_ns = 100 * recording::kNsPerMs;
  SamplerSupervisor sup(fake_config({}), &test::two_unit_table(), "GPU-fake-0", timing);
  GpuBatch batch;
  sup.set_wanted(true, core::realtime_ns(), batch);
  const auto until = std::chrono::steady_clock::now() + 150ms;
  while (std::chrono::steady_clock::now() < until) {
    sup.pump(core::realtime_ns(), batch);
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_TRUE(sup.running());
  sup.set_wanted(false, core::realtime_ns(), batch);
  const auto stop_deadline = std::chrono::steady_clock::now() + 3s;
  while (sup.running() && std::chrono::steady_clock::now() < stop_deadline) {
    sup.pump(core::realtime_ns(), batch);
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_FALSE(sup.running());
  EXPECT_EQ(sup.restarts(), 0);
  EXPECT_FALSE(any_note(batch.notes, "restarting"));
  ASSERT_FALSE(batch.counters.empty());
  EXPECT_FALSE(batch.counters.back().on);
  EXPECT_EQ(batch.counters.back().reason, "");  // the agent asked: an ordinary stop
  EXPECT_GE(batch.list<recording::ChipSample>().size(), 10u);
}

TEST(SamplerSupervisor, NoTableMeansNoChild) {
  SamplerSupervisor sup(fake_config({}), nullptr, "", {});
  GpuBatch batch;
  sup.set_wanted(true, core::realtime_ns(), batch);
  EXPECT_FALSE(sup.running());
  EXPECT_EQ(sup.starts(), 0);
}

// NVML stand-in: GPU-Util 50 stamped at each read, SM clock 1500 MHz.
class FakeTelemetry final : public GpuTelemetry {
 public:
  recording::GpuIdentity identity() const override {
    recording::GpuIdentity id;
    id.index = 0;
    id.uuid = "GPU-fake-0";
    id.model = "diescope fake GPU";
    id.compute_capability = 90;
    return id;
  }
  std::vector<recording::ColumnDef> engine_columns() const override { return {}; }
  void read(recording::TimeNs now, GpuBatch& out) override {
    out.list<recording::UtilSample>().push_back(
        recording::UtilSample{now, 50, recording::UtilSource::samples});
    out.list<recording::ClockReading>().push_back(recording::ClockReading{now, 1500, 2619});
  }
};

TEST(LiveSource, AgentRecordsSayTheSamplerCrashedAndWasRestarted) {
  std::vector<LiveGpu> gpus(1);
  gpus[0].telemetry = std::make_unique<FakeTelemetry>();
  gpus[0].table = &test::two_unit_table();
  gpus[0].sampler = fake_config({"--crash-after", "40"});
  SupervisorTiming timing;
  timing.backoff_initial_ns = 100 * recording::kNsPerMs;
  LiveSource source(std::move(gpus), 2, 50, timing);
  SystemClock clock;
  AgentSettings settings;
  settings.poll_ms = 50;
  settings.duty_on_ms = 600;
  settings.duty_period_ms = 1000;
  Agent agent(source, clock, settings);
  std::vector<AgentRecord> records;
  const auto deadline = std::chrono::steady_clock::now() + 2300ms;
  while (std::chrono::steady_clock::now() < deadline && records.size() < 2) {
    for (auto& r : agent.step()) records.push_back(std::move(r));
    std::this_thread::sleep_for(10ms);
  }
  ASSERT_GE(records.size(), 1u);
  const AgentRecord& r = records[0];
  EXPECT_EQ(r.source, "live");
  EXPECT_EQ(r.gpu_uuid, "GPU-fake-0");
  std::string notes;
  for (const auto& n : r.notes) notes += n + "\n";
  EXPECT_NE(notes.find("killed by signal SIGSEGV"), std::string::npos) << notes;
  EXPECT_NE(notes.find("restarted the counter sampler"), std::string::npos) << notes;
  EXPECT_GE(agent.status()[0].sampler_restarts, 1);
  // Unit b reads 20 + k%10, unit a 10 + k%10: b is always the busier, so it limits the chip and
  // DIE-Util lies between 20 and 29.
  ASSERT_TRUE(r.limiting_unit);
  EXPECT_EQ(*r.limiting_unit, "b");
  EXPECT_GE(r.die_util_pct, 20.0);
  EXPECT_LE(r.die_util_pct, 29.0);
  EXPECT_NEAR(r.gpu_util_pct, 50.0, 1e-9);
  // The time lost to the crash and the backoff stays in the schedule: coverage falls below 100%.
  EXPECT_LT(r.chip_coverage_pct, 95.0);
  // Stopping disables the counters: no child is left.
  agent.finish("SIGTERM");
  EXPECT_FALSE(source.counters_on(0));
}

}  // namespace
}  // namespace diescope::agent
