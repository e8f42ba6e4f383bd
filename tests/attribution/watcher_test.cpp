// docs/attribution.md#how-it-runs, #shared-gpus and #mig: the watcher on NVML's function table swapped
// for a fake, over the fixture /proc tree.
#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "diescope/attribution/watcher.hpp"
#include "diescope/collect/live_collection.hpp"
#include "nvml_fake.hpp"

namespace diescope::attribution {
namespace {

namespace fake = collect::fake_nvml;
namespace abi = collect::nvml_abi;
constexpr recording::TimeNs kSec = recording::kNsPerSecond;

WatchSettings settings() {
  WatchSettings s;
  s.proc_root = std::filesystem::path(DIESCOPE_SOURCE_DIR) / "tests/attribution/fixtures/proc";
  s.kubelet = false;
  s.labels = {{"team", "vision"}};
  return s;
}

abi::ProcessUtilizationSample util(unsigned pid, unsigned long long ts_us, unsigned sm) {
  return abi::ProcessUtilizationSample{pid, ts_us, sm, 0, 0, 0};
}

TEST(Watcher, SharedGpuSplitByProcessSamplesAndJobsWithEnergy) {
  auto nvml = std::make_shared<collect::Nvml>(fake::fake_functions());
  fake::state().compute_pids = {1003, 1004};
  // 60 and 20 SM-percent: shares 0.75 and 0.25.
  fake::state().process_samples = {util(1003, 100, 60), util(1004, 100, 20)};
  Watcher w(nvml, settings());
  fake::state().energy_mj = 1'000'000;
  w.poll(1 * kSec);
  fake::state().process_samples = {util(1003, 200, 30), util(1004, 200, 10)};  // the same split again
  fake::state().energy_mj = 1'400'000;
  w.poll(2 * kSec);
  const WatchSnapshot snap = w.snapshot();
  ASSERT_EQ(snap.gpus.size(), 1U);
  const GpuHolders& g = snap.gpus[0];
  EXPECT_TRUE(g.split_approximate);
  ASSERT_EQ(g.holders.size(), 2U);
  // Without the kubelet: pod UIDs from the cgroup paths.
  EXPECT_EQ(g.holders[0].holder.key, "pod/3b1f2a9c-5d4e-4f6a-8b7c-9d0e1f2a3b4c");
  EXPECT_DOUBLE_EQ(g.holders[0].share, 0.75);
  EXPECT_DOUBLE_EQ(g.holders[1].share, 0.25);
  EXPECT_EQ(g.holders[0].holder.labels, (std::vector<Label>{{"team", "vision"}}));

  // Both leave; the agent's record for the period names them and closes their jobs.
  fake::state().compute_pids = {};
  fake::state().energy_mj = 1'800'000;
  w.poll(3 * kSec);
  std::vector<agent::AgentRecord> records(1);
  records[0].gpu_index = 0;
  records[0].period_start_ns = 0;
  records[0].period_end_ns = 60 * kSec;
  records[0].die_util_pct = 40;
  records[0].gpu_util_pct = 80;
  records[0].stranded_pct = 60;
  records[0].gap_pct = 40;
  w.annotate(records);
  ASSERT_EQ(records[0].holders.size(), 2U);
  EXPECT_EQ(records[0].holders[0].kind, "pod");
  EXPECT_NE(std::find(records[0].holders[0].labels.begin(), records[0].holders[0].labels.end(),
                      std::pair<std::string, std::string>{"team", "vision"}),
            records[0].holders[0].labels.end());
  auto jobs = w.take_finished(3 * kSec);
  ASSERT_EQ(jobs.size(), 2U);
  sort_most_wasteful(jobs);
  // Held (1 s, 2 s]: 0.75 GPU-seconds and 0.75 of 400 J; stranded 0.75 x 60%.
  EXPECT_DOUBLE_EQ(jobs[0].gpu_seconds, 0.75);
  EXPECT_DOUBLE_EQ(jobs[0].energy_j, 300);
  EXPECT_DOUBLE_EQ(jobs[0].stranded_gpu_seconds, 0.45);
  EXPECT_DOUBLE_EQ(jobs[1].energy_j, 100);
  EXPECT_TRUE(jobs[0].shared);
}

TEST(Watcher, NoProcessSamplesSplitsEvenlyAndSaysSo) {
  auto nvml = std::make_shared<collect::Nvml>(fake::fake_functions());
  fake::state().compute_pids = {1001, 1005};
  fake::state().process_util_result = abi::kErrorNotSupported;
  Watcher w(nvml, settings());
  w.poll(1 * kSec);
  const GpuHolders g = w.snapshot().gpus.at(0);
  ASSERT_EQ(g.holders.size(), 2U);
  EXPECT_DOUBLE_EQ(g.holders[0].share, 0.5);
  EXPECT_NE(g.note.find("split evenly"), std::string::npos);
}

TEST(Watcher, OneHolderIsExactAndPidGoneIsNoted) {
  auto nvml = std::make_shared<collect::Nvml>(fake::fake_functions());
  fake::state().compute_pids = {4040};  // listed by NVML, not in /proc
  Watcher w(nvml, settings());
  w.poll(1 * kSec);
  const GpuHolders g = w.snapshot().gpus.at(0);
  ASSERT_EQ(g.holders.size(), 1U);
  EXPECT_FALSE(g.split_approximate);
  EXPECT_DOUBLE_EQ(g.holders[0].share, 1);
  EXPECT_EQ(g.holders[0].holder.key, "process/4040");
  EXPECT_FALSE(g.holders[0].holder.notes.empty());
}

TEST(Watcher, GraphicsListUnreadableStillNamesComputeHolders) {
  auto nvml = std::make_shared<collect::Nvml>(fake::fake_functions());
  Watcher w(nvml, settings());
  fake::state().graphics_result = abi::kErrorUnknown;
  fake::state().compute_pids = {1001};
  w.poll(1 * kSec);  // compute still readable
  EXPECT_EQ(w.snapshot().gpus.at(0).holders.size(), 1U);
}

// A MIG host: GPU 0 with instances 1 (3g.71gb) and 2 (1g.18gb), pid 1003 in the first, 1006 in the
// second.
void two_gpu_instances(fake::State& s) {
  s.mig_current = abi::kDeviceMigEnable;
  s.mig = {{1, "3g.71gb", "MIG-11111111-2222-3333-4444-555555555555"},
           {2, "1g.18gb", "MIG-66666666-7777-8888-9999-000000000000"}};
  s.compute_pids = {1003, 1006};
  s.pid_instance = {{1003, 1}, {1006, 2}};
}

TEST(Watcher, MigOneRowPerGpuInstanceThroughGpmMigSampling) {
  auto nvml = std::make_shared<collect::Nvml>(fake::fake_functions());
  auto& s = fake::state();
  two_gpu_instances(s);
  Watcher w(nvml, settings());
  w.poll(1 * kSec);
  w.poll(2 * kSec);
  const WatchSnapshot snap = w.snapshot();
  ASSERT_EQ(snap.gpus.size(), 2U);
  EXPECT_EQ(snap.gpus[0].gpu_instance_id, 1U);
  EXPECT_EQ(snap.gpus[0].gpu_instance_profile, "3g.71gb");
  ASSERT_EQ(snap.gpus[0].holders.size(), 1U);
  EXPECT_EQ(snap.gpus[0].holders[0].holder.pids, std::vector<unsigned>{1003});
  EXPECT_EQ(snap.gpus[1].gpu_instance_id, 2U);
  EXPECT_EQ(snap.gpus[1].holders[0].holder.key, "slurm/4242/0");
  // GPM was read per GPU instance, through nvmlGpmMigSampleGet.
  EXPECT_NE(std::count(s.gpm_mig_calls.begin(), s.gpm_mig_calls.end(), 1U), 0);
  EXPECT_NE(std::count(s.gpm_mig_calls.begin(), s.gpm_mig_calls.end(), 2U), 0);
  EXPECT_FALSE(snap.gpus[0].instance_units.empty());
  ASSERT_FALSE(snap.notes.empty());
  EXPECT_NE(snap.notes.back().find("MIG is on"), std::string::npos);
  // Energy is the whole GPU's: a GPU instance's job has none, and says why.
  s.compute_pids = {};
  w.poll(3 * kSec);
  const auto jobs = w.take_finished(3 * kSec);
  ASSERT_EQ(jobs.size(), 2U);
  for (const JobRecord& j : jobs) {
    EXPECT_TRUE(std::isnan(j.energy_j));
    EXPECT_NE(j.energy_reason.find("under MIG"), std::string::npos);
    EXPECT_DOUBLE_EQ(j.gpu_seconds, 1);
  }
}

// A GPU's NVML side without NVML (a stand-in, as the session's tests use): nothing for the watcher.
class NoNvmlTelemetry final : public collect::GpuTelemetry {
 public:
  recording::GpuIdentity identity() const override { return {}; }
  std::vector<recording::ColumnDef> engine_columns() const override { return {}; }
  void read(recording::TimeNs, collect::GpuBatch&) override {}
};

// docs/live-collection.md#who-reads-it: beside a live session the watcher reads each GPU through the
// session's telemetry (its NVML device, and GPM per GPU instance through collect::open_gpm), and a
// telemetry without an NVML device is left out. The MIG host above gives the same two rows, GPU 0's
// instances 1 and 2, each read through nvmlGpmMigSampleGet.
TEST(Watcher, BesideASessionReadsThroughItsTelemetry) {
  auto nvml = std::make_shared<collect::Nvml>(fake::fake_functions());
  auto& s = fake::state();
  two_gpu_instances(s);
  const collect::NvmlTelemetry telemetry(nvml, 0, 0);
  const NoNvmlTelemetry stand_in;
  Watcher w(std::vector<const collect::GpuTelemetry*>{&stand_in, &telemetry}, settings());
  w.poll(1 * kSec);
  w.poll(2 * kSec);
  const WatchSnapshot snap = w.snapshot();
  ASSERT_EQ(snap.gpus.size(), 2U);
  for (const GpuHolders& g : snap.gpus) {
    EXPECT_EQ(g.gpu_index, 0);
    EXPECT_EQ(g.uuid, "GPU-00000000-1111-2222-3333-444444444444");
    EXPECT_FALSE(g.instance_units.empty());
  }
  EXPECT_EQ(snap.gpus[0].gpu_instance_id, 1U);
  ASSERT_EQ(snap.gpus[0].holders.size(), 1U);
  EXPECT_EQ(snap.gpus[0].holders[0].holder.pids, std::vector<unsigned>{1003});
  EXPECT_EQ(snap.gpus[1].gpu_instance_id, 2U);
  EXPECT_EQ(snap.gpus[1].holders.at(0).holder.key, "slurm/4242/0");
  EXPECT_NE(std::count(s.gpm_mig_calls.begin(), s.gpm_mig_calls.end(), 1U), 0);
  EXPECT_NE(std::count(s.gpm_mig_calls.begin(), s.gpm_mig_calls.end(), 2U), 0);
}

TEST(Watcher, OwnProcessesAreNotHolders) {
  auto nvml = std::make_shared<collect::Nvml>(fake::fake_functions());
  // This test process stands for diescope itself, its parent (ctest) for someone else's work.
  fake::state().compute_pids = {static_cast<unsigned>(::getpid()), static_cast<unsigned>(::getppid())};
  WatchSettings s = settings();
  s.proc_root = "/proc";
  Watcher w(nvml, s);
  w.poll(1 * kSec);
  const GpuHolders g = w.snapshot().gpus.at(0);
  ASSERT_EQ(g.holders.size(), 1U);
  EXPECT_EQ(g.holders[0].holder.pids, std::vector<unsigned>{static_cast<unsigned>(::getppid())});
  s.skip_own = false;
  Watcher all(nvml, s);
  all.poll(1 * kSec);
  EXPECT_EQ(all.snapshot().gpus.at(0).holders.size(), 2U);
}

TEST(Watcher, MigListsInstancesWithProfilesFromNames) {
  auto nvml = std::make_shared<collect::Nvml>(fake::fake_functions());
  fake::state().mig_current = abi::kDeviceMigEnable;
  fake::state().mig = {{7, "7g.141gb", "MIG-a"}};
  const collect::MigState m = nvml->device(0).mig();
  EXPECT_EQ(m.mode, collect::MigState::Mode::enabled);
  ASSERT_EQ(m.instances.size(), 1U);
  EXPECT_EQ(m.instances[0].gpu_instance_id, 7U);
  EXPECT_EQ(m.instances[0].profile, "7g.141gb");
  EXPECT_EQ(m.instances[0].uuid, "MIG-a");
  fake::state().mig_current = 0;
  EXPECT_EQ(nvml->device(0).mig().mode, collect::MigState::Mode::disabled);
}

// docs/attribution.md#how-it-runs: the energy counter is read only at polls where a process holds
// the GPU, the per-process utilisation only where two or more could share it, and the job figures are
// those of reading both at every poll. Polls at 1..5 s:
//   1 s idle (E 1,000,000 mJ)  2 s pid 4040 (1,100,000)  3 s pid 4040 (1,300,000)  4 s idle (1,600,000)
//   5 s pids 1003 and 1004 (1,700,000)
// Energy reads: polls 2, 3 and 5 = 3. Job 4040 held (2 s, 3 s]: 1 GPU-second and
// 1,300,000 - 1,100,000 mJ = 200 J, as if the counter were read at every poll. Per-process reads: only
// at 5 s, where the adapter asks for the count and then the samples (2 calls). The idle poll at 4 s
// moved the mark to 4,000,000 us, so the sample at 3,900,000 us (1003 at 90%) is before the previous
// poll and left out: 1003's share is 30 / (30 + 10) = 0.75 (with it, 120 / 130).
TEST(Watcher, DearNvmlReadsOnlyWhereAFigureUsesThem) {
  auto nvml = std::make_shared<collect::Nvml>(fake::fake_functions());
  auto& s = fake::state();
  Watcher w(nvml, settings());
  s.energy_mj = 1'000'000;
  w.poll(1 * kSec);
  EXPECT_EQ(s.energy_calls, 0);
  s.compute_pids = {4040};
  s.energy_mj = 1'100'000;
  w.poll(2 * kSec);
  s.energy_mj = 1'300'000;
  w.poll(3 * kSec);
  EXPECT_EQ(s.energy_calls, 2);
  s.compute_pids = {};
  s.energy_mj = 1'600'000;
  w.poll(4 * kSec);
  EXPECT_EQ(s.energy_calls, 2);
  EXPECT_EQ(s.process_util_calls, 0);
  const auto jobs = w.take_finished(4 * kSec, true);  // all: no agent records to wait for
  ASSERT_EQ(jobs.size(), 1U);
  EXPECT_EQ(jobs[0].holder.key, "process/4040");
  EXPECT_DOUBLE_EQ(jobs[0].gpu_seconds, 1);
  EXPECT_DOUBLE_EQ(jobs[0].energy_j, 200);

  s.compute_pids = {1003, 1004};
  s.process_samples = {util(1003, 3'900'000, 90), util(1003, 4'500'000, 30), util(1004, 4'500'000, 10)};
  s.energy_mj = 1'700'000;
  w.poll(5 * kSec);
  EXPECT_EQ(s.energy_calls, 3);
  EXPECT_EQ(s.process_util_calls, 2);
  const GpuHolders g = w.snapshot().gpus.at(0);
  ASSERT_EQ(g.holders.size(), 2U);
  EXPECT_DOUBLE_EQ(g.holders[0].share, 0.75);
  EXPECT_DOUBLE_EQ(g.holders[1].share, 0.25);
}

TEST(Watcher, NvmlEnergyAndProcessListEntries) {
  auto nvml = std::make_shared<collect::Nvml>(fake::fake_functions());
  fake::state().energy_mj = 123'456;
  EXPECT_DOUBLE_EQ(nvml->device(0).total_energy_mj().value, 123'456);
  fake::state().energy_result = abi::kErrorNotSupported;
  EXPECT_TRUE(std::isnan(nvml->device(0).total_energy_mj().value));
  EXPECT_EQ(nvml->device(0).total_energy_mj().why, "not supported on this GPU");
  fake::state().compute_pids = {5, 9};
  fake::state().graphics_pids = {9};
  const auto list = nvml->device(0).process_list();
  ASSERT_TRUE(list);
  ASSERT_EQ(list->size(), 2U);
  EXPECT_TRUE((*list)[1].compute && (*list)[1].graphics);
  EXPECT_EQ((*list)[0].gpu_instance_id, collect::NvmlProcess::kNoInstance);
}

}  // namespace
}  // namespace diescope::attribution

namespace diescope::attribution {
namespace {

TEST(HoldersLine, FourNamesThenHowManyMoreAndControlCharactersAsSpaces) {
  std::vector<GpuHolders> seen(1);
  seen[0].gpu_index = 0;
  EXPECT_EQ(holders_line(seen, 0), "held by: no process NVML listed\n");
  for (unsigned pid = 1; pid <= 6; ++pid) {
    HolderShare hs;
    hs.holder.key = "process/" + std::to_string(pid);
    hs.holder.pids = {pid};
    hs.holder.commands = {pid == 1 ? std::string("a\nb") : std::string("p")};
    seen[0].holders.push_back(hs);
  }
  EXPECT_EQ(holders_line(seen, 0),
            "held by: process 1 (a b), process 2 (p), process 3 (p), process 4 (p) and 2 more\n");
  EXPECT_EQ(holders_line(seen, 1), "held by: no process NVML listed\n");  // another GPU's
  const nlohmann::json j = holders_json(seen, 0, {"a note"});
  EXPECT_EQ(j["entries"].size(), 6U);
  EXPECT_EQ(j["entries"][0]["gpu_instance_id_reason"], "MIG is off on this GPU");
  EXPECT_EQ(j["notes"][0], "a note");
}

}  // namespace
}  // namespace diescope::attribution
