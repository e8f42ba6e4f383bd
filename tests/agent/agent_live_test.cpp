// The agent's records over the live session, driven by the fake sampler child (no GPU): they say
// the sampler crashed and was restarted (the restarts themselves: tests/collect/live_collection_test.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <thread>

#include "diescope/agent/agent.hpp"
#include "diescope/collect/live_collection.hpp"
#include "diescope/collect/nvml.hpp"
#include "diescope/core/clock.hpp"
#include "fake_clock.hpp"
#include "nvml_fake.hpp"
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

// NVML stand-in: GPU-Util 50 stamped at each read, SM clock 1500 MHz.
class FakeTelemetry final : public collect::GpuTelemetry {
 public:
  recording::GpuIdentity identity() const override { return test::fake_gpu_identity(); }
  std::vector<recording::ColumnDef> engine_columns() const override { return {}; }
  void read(recording::TimeNs now, collect::GpuBatch& out) override {
    out.list<recording::UtilSample>().push_back(
        recording::UtilSample{now, 50, recording::UtilSource::samples});
    out.list<recording::ClockReading>().push_back(recording::ClockReading{now, 1500, 2619});
  }
};

TEST(LiveSession, AgentRecordsSayTheSamplerCrashedAndWasRestarted) {
  std::vector<collect::SessionGpu> gpus(1);
  gpus[0].telemetry = std::make_unique<FakeTelemetry>();
  gpus[0].table = &test::two_unit_table();
  gpus[0].sampler = fake_config({"--crash-after", "40"});
  collect::SupervisorTiming timing;
  timing.backoff_initial_ns = 100 * recording::kNsPerMs;
  collect::LiveSession source(std::move(gpus), 2, 50, timing);
  core::SystemClock clock;
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

// NVML stand-in that draws a steady 300 W: its energy counter is 300 J a second from the start, so
// any two reads give the same energy over any span between them. It notes when it read the power line.
class PowerTelemetry final : public collect::GpuTelemetry {
 public:
  explicit PowerTelemetry(recording::TimeNs origin, std::vector<recording::TimeNs>* power_reads)
      : origin_(origin), power_reads_(power_reads) {}
  recording::GpuIdentity identity() const override { return test::fake_gpu_identity(); }
  std::vector<recording::ColumnDef> engine_columns() const override { return {}; }
  void read(recording::TimeNs now, collect::GpuBatch& out) override {
    out.list<recording::UtilSample>().push_back(
        recording::UtilSample{now, 50, recording::UtilSource::samples});
    if (!power_wanted()) return;
    power_reads_->push_back(now);
    const double mj = 300.0 * static_cast<double>(now - origin_) / 1e6;  // 300 W = 300 mJ a ms
    out.list<recording::PowerLimitReading>().push_back(recording::PowerLimitReading{now, 700, 300, mj});
  }

 private:
  recording::TimeNs origin_;
  std::vector<recording::TimeNs>* power_reads_;
};

// docs/agent.md#nvml-reads: with a poll of 1 s and 2 s of counters in every 10 s, stepped every 1 s
// for 21 s, the power line is read at 1, 2 (counters wanted: the window is [0 s, 2 s)), 3 (the first
// poll after they went off), 10 (a period ends: power_due), 11, 12 (the window [10 s, 12 s)), 13, 20
// (a period ends) and 21 s (its window): 9 reads where every poll (top's default) makes 21. The second
// record, the period [10 s, 20 s), has the same energy either way: 300 W x 10 s = 3000 J, over all 10 s.
TEST(LiveSession, AgentReadsThePowerLineOnlyAroundWindowsAndAtPeriodEnds) {
  for (const bool when_due : {true, false}) {
    testing::FakeClock clock;
    const recording::TimeNs t0 = clock.read().realtime_ns;
    std::vector<recording::TimeNs> reads;
    std::vector<collect::SessionGpu> gpus(1);
    gpus[0].telemetry = std::make_unique<PowerTelemetry>(t0, &reads);
    gpus[0].table = &test::two_unit_table();  // no sampler executable: no counters, the schedule alone
    collect::ChipSourcePolicy policy;
    policy.source = collect::ChipSourceSetting::pm;
    collect::LiveSession source(std::move(gpus), 10, 1000, {}, {}, policy);
    if (when_due) source.set_cadence(collect::NvmlCadence::agent(recording::kNsPerSecond));
    AgentSettings settings;
    settings.poll_ms = 1000;
    settings.duty_on_ms = 2000;
    settings.duty_period_ms = 10000;
    settings.read_power = [] { return PowerSource::mains; };
    Agent agent(source, clock, settings);
    std::vector<AgentRecord> records;
    for (int s = 1; s <= 21; ++s) {
      clock.advance(recording::kNsPerSecond);
      for (AgentRecord& r : agent.step()) records.push_back(std::move(r));
    }
    std::vector<double> at;
    for (recording::TimeNs t : reads) at.push_back(static_cast<double>(t - t0) / 1e9);
    if (when_due) {
      EXPECT_EQ(at, (std::vector<double>{1, 2, 3, 10, 11, 12, 13, 20, 21}));
    } else {
      EXPECT_EQ(at.size(), 21U);
    }
    ASSERT_GE(records.size(), 2U) << when_due;
    EXPECT_EQ(records[1].energy_source, "counter") << when_due;
    EXPECT_NEAR(records[1].energy_j, 3000, 1e-6) << when_due;
  }
}

// docs/agent.md#nvml-reads: NVML keeps GPU-Util samples in its buffer, so the agent reads them only
// where a figure is due (the polls that read the power line) and at least every 5 s. The stand-in
// NVML's buffer gains a sample every 200 ms (value 20 x (k mod 5) for the k-th). Poll 1 s, 2 s of
// counters in every 10 s, stepped every 1 s for 21 s: the power line is due at 1, 2, 3, 10, 11, 12,
// 13, 20 and 21 s (AgentReadsThePowerLineOnlyAroundWindowsAndAtPeriodEnds); after the read at 3 s
// the next is due at 8 s, after 10 s at 15 s (13 s comes first), after 13 s at 18 s: 11 reads of
// nvmlDeviceGetSamples instead of 21. Each period holds the same samples either way: the first
// 50 (0.2 s to 10 s), the second the next 50 (10.2 s to 20 s), the third 21.0 s back to 20.2 s, 5;
// and at the polls where figures are made (the windows' figures at 3 s and 13 s, the records at 10 s
// and 20 s) the agent holds the same samples as when reading every poll.
TEST(LiveSession, AgentReadsGpuUtilSamplesWhereFiguresAreDueAndHoldsTheSameSamples) {
  using Held = std::map<int, std::vector<std::pair<recording::TimeNs, double>>>;  // by period
  std::map<bool, Held> held;
  std::map<bool, std::vector<std::pair<int, std::size_t>>> held_at;  // step, samples held so far
  std::map<bool, std::vector<AgentRecord>> records;
  for (const bool when_due : {true, false}) {
    testing::FakeClock clock;
    const recording::TimeNs t0 = clock.read().realtime_ns;
    auto functions = collect::fake_nvml::fake_functions();  // resets the stand-in
    auto& nvml_state = collect::fake_nvml::state();
    std::vector<collect::SessionGpu> gpus(1);
    gpus[0].telemetry = std::make_unique<collect::NvmlTelemetry>(
        std::shared_ptr<const collect::Nvml>(std::make_shared<collect::Nvml>(functions)), 0, t0);
    gpus[0].table = &test::two_unit_table();  // no sampler executable: no counters, the schedule alone
    collect::ChipSourcePolicy policy;
    policy.source = collect::ChipSourceSetting::pm;
    collect::LiveSession source(std::move(gpus), 10, 1000, {}, {}, policy);
    if (when_due) source.set_cadence(collect::NvmlCadence::agent(recording::kNsPerSecond));
    AgentSettings settings;
    settings.poll_ms = 1000;
    settings.duty_on_ms = 2000;
    settings.duty_period_ms = 10000;
    settings.read_power = [] { return PowerSource::mains; };
    int step = 0;
    std::size_t so_far = 0;
    settings.on_batch = [&](std::size_t, const collect::GpuBatch& b) {
      for (const auto& u : b.list<recording::UtilSample>())
        held[when_due][(step - 1) / 10].emplace_back(u.ts_ns - t0, u.pct);
      so_far += b.list<recording::UtilSample>().size();
    };
    Agent agent(source, clock, settings);
    int k = 0;
    for (step = 1; step <= 21; ++step) {
      clock.advance(recording::kNsPerSecond);
      for (; t0 + (k + 1) * 200 * recording::kNsPerMs <= clock.read().realtime_ns; ++k)
        nvml_state.samples.push_back(collect::fake_nvml::util_sample(
            static_cast<unsigned long long>((t0 + (k + 1) * 200 * recording::kNsPerMs) / 1000),
            static_cast<unsigned>(20 * ((k + 1) % 5))));
      for (AgentRecord& r : agent.step()) records[when_due].push_back(std::move(r));
      held_at[when_due].emplace_back(step, so_far);
    }
    // The reads of nvmlDeviceGetSamples: one size query each.
    EXPECT_EQ(nvml_state.last_seen_args.size(), when_due ? 11U : 21U);
  }
  ASSERT_EQ(held[true].size(), 3U);
  EXPECT_EQ(held[true][0].size(), 50U);
  EXPECT_EQ(held[true][1].size(), 50U);
  EXPECT_EQ(held[true][2].size(), 5U);
  EXPECT_EQ(held[true][0].front().first, 200 * recording::kNsPerMs);
  EXPECT_EQ(held[true][1].front().first, 10200 * recording::kNsPerMs);
  EXPECT_EQ(held[true][1].front().second, 20);  // k = 51
  EXPECT_EQ(held[true], held[false]);
  for (const int figures_at : {3, 10, 13, 20})
    EXPECT_EQ(held_at[true][figures_at - 1], held_at[false][figures_at - 1]) << figures_at;
  ASSERT_EQ(records[true].size(), 2U);
  ASSERT_EQ(records[false].size(), 2U);
  for (std::size_t i = 0; i < 2; ++i)
    EXPECT_EQ(record_to_ndjson(records[true][i]), record_to_ndjson(records[false][i])) << i;
}

// A capture's interval on the live session (docs/agent.md#what-a-capture-holds): counters always on at
// 4 ms, switched to 1 ms at about 0.3 s. The session restarts the fake sampler at 1 ms (its samples
// then span 1 ms), while the record keeps 4 ms: its 1 ms samples are folded four to a span, so the
// first 1 s record holds about 0.3 / 0.004 + 0.7 / 0.004 = 250 samples, not the 75 + 700 the sampler
// sent; and the restart does not cut the measured on-time (about the whole 1 s period).
TEST(LiveSession, ACaptureIntervalRestartsTheSamplerAndRecordsKeepTheSessionsInterval) {
  std::vector<collect::SessionGpu> gpus(1);
  gpus[0].telemetry = std::make_unique<FakeTelemetry>();
  gpus[0].table = &test::two_unit_table();
  gpus[0].sampler = fake_config({});
  collect::LiveSession source(std::move(gpus), 4, 50);
  core::SystemClock clock;
  AgentSettings settings;
  settings.poll_ms = 50;
  settings.duty_on_ms = 1000;
  settings.duty_period_ms = 1000;
  bool switched = false;
  std::vector<recording::TimeNs> spans_after;  // raw chip sample spans after the switch
  settings.on_batch = [&](std::size_t, const collect::GpuBatch& b) {
    if (!switched) return;
    for (const auto& c : b.list<recording::ChipSample>()) spans_after.push_back(c.end_ns - c.start_ns);
  };
  Agent agent(source, clock, settings);
  std::vector<AgentRecord> records;
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() < start + 3000ms && records.empty()) {
    if (!switched && std::chrono::steady_clock::now() > start + 300ms) {
      ASSERT_TRUE(agent.sample_interval(0, 1.0));
      switched = true;
    }
    for (auto& r : agent.step()) records.push_back(std::move(r));
    std::this_thread::sleep_for(5ms);
  }
  ASSERT_EQ(records.size(), 1u);
  const AgentRecord& r = records[0];
  EXPECT_EQ(r.interval_ms, 4);
  EXPECT_GT(r.samples_read, 150);
  EXPECT_LT(r.samples_read, 400);
  EXPECT_GT(r.counters_on_s, 0.95);
  ASSERT_GT(spans_after.size(), 100u);
  std::sort(spans_after.begin(), spans_after.end());
  EXPECT_NEAR(static_cast<double>(spans_after[spans_after.size() / 2]), 1e6, 2e5);  // 1 ms
  EXPECT_TRUE(agent.sample_interval(0, 4.0));                                       // back to the session's
  agent.finish("SIGTERM");
}

}  // namespace
}  // namespace diescope::agent
