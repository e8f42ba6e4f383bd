// The agent beside other profilers (docs/agent.md#beside-other-profilers), on the CPU: a fake /proc
// tree stands in for the host's processes, the fake sampler child for CUPTI and a stand-in NVML for
// GPM. When "ncu" appears the agent stops PM sampling and records GPM; when it has been gone a while
// the agent returns to PM sampling; each switch ends a record.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>
#include <unistd.h>

#include "diescope/agent/agent.hpp"
#include "diescope/collect/live_collection.hpp"
#include "diescope/collect/profiler_watch.hpp"
#include "diescope/collect/nvml.hpp"
#include "nvml_fake.hpp"
#include "two_unit_table.hpp"

namespace diescope::agent {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("diescope-agent-gpm-" + std::to_string(::getpid()) + "-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void add_process(const fs::path& proc, int pid, const std::string& comm, int parent = 1,
                 const std::string& environ = "PATH=/usr/bin") {
  const fs::path dir = proc / std::to_string(pid);
  fs::create_directories(dir);
  std::ofstream(dir / "comm") << comm << "\n";
  std::ofstream(dir / "stat") << pid << " (" << comm << ") S " << parent << " 1 1 0 -1\n";
  std::ofstream(dir / "environ", std::ios::binary) << environ << '\0';
}

// NVML stand-in with GPM: GPU-Util 50 at each read; GPM from the fake NVML table.
class GpmTelemetry final : public collect::GpuTelemetry {
 public:
  GpmTelemetry() : nvml_(std::make_unique<collect::Nvml>(collect::fake_nvml::fake_functions())) {}
  recording::GpuIdentity identity() const override { return test::fake_gpu_identity(); }
  std::vector<recording::ColumnDef> engine_columns() const override { return {}; }
  void read(recording::TimeNs now, collect::GpuBatch& out) override {
    out.list<recording::UtilSample>().push_back(
        recording::UtilSample{now, 50, recording::UtilSource::samples});
  }
  std::unique_ptr<collect::GpmSampler> open_gpm(recording::TimeNs now) override {
    return std::make_unique<collect::GpmSampler>(nvml_->device(0), now, 0);
  }

 private:
  std::unique_ptr<collect::Nvml> nvml_;
};

// One GPU on the stand-in above with the two-unit table; with_sampler: the fake sampler child makes
// its PM-sampling chip samples, else it has none.
std::vector<collect::SessionGpu> one_gpu(bool with_sampler) {
  std::vector<collect::SessionGpu> gpus(1);
  gpus[0].telemetry = std::make_unique<GpmTelemetry>();
  gpus[0].table = &test::two_unit_table();
  if (with_sampler) gpus[0].sampler.executable = DIESCOPE_SAMPLER_FAKE;
  return gpus;
}

std::string joined(const std::vector<std::string>& notes) {
  std::string out;
  for (const auto& n : notes) out += n + "\n";
  return out;
}

TEST(AgentBesideProfilers, SwitchesToGpmWhileNcuRunsAndBackWhenItEnds) {
  const fs::path proc = fresh_dir("switch");
  add_process(proc, 10, "bash");
  std::vector<collect::SessionGpu> gpus = one_gpu(true);
  gpus[0].sampler.device = 0;
  collect::ChipSourcePolicy policy;
  policy.source = collect::ChipSourceSetting::automatic;
  policy.proc_root = proc;
  policy.scan_ns = 20 * recording::kNsPerMs;
  policy.return_after_ns = 300 * recording::kNsPerMs;
  collect::LiveSession source(std::move(gpus), 2, 50, {}, {}, policy);
  core::SystemClock clock;
  AgentSettings settings;
  settings.poll_ms = 50;
  settings.duty_on_ms = 60000;  // always on, one long period: only the switches end records
  settings.duty_period_ms = 60000;
  Agent agent(source, clock, settings);
  std::vector<AgentRecord> records;
  auto run_for = [&](std::chrono::milliseconds span) {
    const auto until = std::chrono::steady_clock::now() + span;
    while (std::chrono::steady_clock::now() < until) {
      for (auto& r : agent.step()) records.push_back(std::move(r));
      std::this_thread::sleep_for(10ms);
    }
  };
  run_for(600ms);
  EXPECT_EQ(source.chip_source(0), collect::ChipSource::pm);
  EXPECT_TRUE(records.empty());

  add_process(proc, 4242, "ncu");  // Nsight Compute starts
  run_for(800ms);
  EXPECT_EQ(source.chip_source(0), collect::ChipSource::gpm);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].unit_table, "test-two-units");
  EXPECT_NE(joined(records[0].notes)
                .find("the chip source changes at the end of this record: chip samples come "
                      "from NVML GPM from now on (another profiler runs: ncu (pid 4242))"),
            std::string::npos)
      << joined(records[0].notes);
  EXPECT_FALSE(std::isnan(records[0].die_util_pct));

  fs::remove_all(proc / "4242");  // it ends
  run_for(700ms);
  EXPECT_EQ(source.chip_source(0), collect::ChipSource::pm);
  ASSERT_EQ(records.size(), 2u);
  const AgentRecord& gpm = records[1];
  EXPECT_EQ(gpm.unit_table, "gpm");
  // The fake GPM reads FP32 46.3 in every sample, the busiest of its units.
  EXPECT_NEAR(gpm.die_util_pct, 46.3, 1e-9);
  ASSERT_TRUE(gpm.limiting_unit);
  EXPECT_EQ(*gpm.limiting_unit, "fp32");
  EXPECT_NE(
      joined(gpm.notes).find("chip samples come from PM sampling again (no other profiler seen for 0.3 s)"),
      std::string::npos)
      << joined(gpm.notes);

  run_for(300ms);
  for (auto& r : agent.finish("test")) records.push_back(std::move(r));
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[2].unit_table, "test-two-units");
  EXPECT_FALSE(source.counters_on(0));
  fs::remove_all(proc);
}

// GPM is read at its own 100 ms, not at the agent's polls (docs/agent.md#beside-other-profilers):
// with polls every 500 ms, a loop that sleeps until the agent's next due time, as the runner's does,
// takes a GPM sample about every 100 ms.
TEST(AgentBesideProfilers, GpmIsReadEvery100MsBetweenPolls) {
  std::vector<collect::SessionGpu> gpus = one_gpu(false);
  collect::ChipSourcePolicy policy;
  policy.source = collect::ChipSourceSetting::gpm;
  collect::LiveSession source(std::move(gpus), 100, 500, {}, {}, policy);
  core::SystemClock clock;
  AgentSettings settings;
  settings.poll_ms = 500;
  settings.duty_on_ms = 60000;  // always on
  settings.duty_period_ms = 60000;
  Agent agent(source, clock, settings);
  const int before = collect::fake_nvml::state().gpm_samples_taken;
  const auto until = std::chrono::steady_clock::now() + 1050ms;
  int steps = 0;
  while (std::chrono::steady_clock::now() < until) {
    agent.step();
    ++steps;
    const recording::TimeNs wait = agent.next_due_ns() - agent.now_ns();
    EXPECT_LE(wait, 100 * recording::kNsPerMs + recording::kNsPerMs)
        << "the next GPM sample is due within 100 ms";
    std::this_thread::sleep_for(std::chrono::nanoseconds(std::max<recording::TimeNs>(wait, 0)));
  }
  // 1.05 s at 100 ms: the first pair at the start, then about 10 samples (at least 8 allowing for a
  // slow test machine); at the polls alone it would be 3.
  const int taken = collect::fake_nvml::state().gpm_samples_taken - before;
  EXPECT_GE(taken, 8) << steps << " steps";
  EXPECT_LE(taken, 13);
  agent.finish("test");
}

TEST(AgentBesideProfilers, SourceGpmStartsOnGpm) {
  std::vector<collect::SessionGpu> gpus = one_gpu(true);
  collect::ChipSourcePolicy policy;
  policy.source = collect::ChipSourceSetting::gpm;
  collect::LiveSession source(std::move(gpus), 10, 50, {}, {}, policy);
  EXPECT_EQ(source.chip_source(0), collect::ChipSource::gpm);
  EXPECT_EQ(source.meta(0).unit_table, "gpm");
  EXPECT_EQ(source.meta(0).interval_ms, 100);  // GPM's shortest interval, above the 10 ms asked for
}

}  // namespace
}  // namespace diescope::agent
