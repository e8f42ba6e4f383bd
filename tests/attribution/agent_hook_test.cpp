// docs/attribution.md#in-the-agent and #prometheus-labels: the agent's side of attribution on a swapped
// NVML table, with the series count of a node with 8 GPUs and 50 jobs a day worked out by hand.
#include <cstdio>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "diescope/attribution/agent_hook.hpp"
#include "diescope/core/clock.hpp"
#include "nvml_fake.hpp"

namespace diescope::attribution {
namespace {

namespace fakes = collect::fake_nvml;
constexpr recording::TimeNs kSecond = recording::kNsPerSecond;

std::size_t series(const std::string& text, const std::string& family) {
  std::size_t n = 0, at = 0;
  while ((at = text.find("\n" + family + "{", at)) != std::string::npos) {
    ++n;
    ++at;
  }
  return n;
}

TEST(AgentHook, RecordsHoldJobsStoredPrintedAndExported) {
  auto nvml = std::make_shared<collect::Nvml>(fakes::fake_functions());
  fakes::state().compute_pids = {1006};  // Slurm job 4242 step 0
  WatchSettings ws;
  ws.proc_root = std::filesystem::path(DIESCOPE_SOURCE_DIR) / "tests/attribution/fixtures/proc";
  ws.kubelet = false;
  auto watcher = std::make_unique<Watcher>(nvml, ws);
  Watcher* w = watcher.get();
  const auto db = std::filesystem::path(DIESCOPE_BINARY_DIR) / "attribution-hook-test.db";
  std::filesystem::remove(db);
  std::FILE* ndjson = std::tmpfile();
  std::vector<std::string> logged;
  AgentAttribution hook(std::move(watcher), std::make_unique<JobStore>(db, true), ndjson,
                        [&logged](const std::string& l) { logged.push_back(l); });
  w->stop();  // the test polls by hand
  // The watcher's thread may have polled once, at the wall clock, before stop(): the hand polls
  // come after it, and the record starts at the first hand poll, so the overlap is 1 s either way.
  const recording::TimeNs base = core::realtime_ns() + 3600 * kSecond;
  w->poll(base + 1 * kSecond);
  fakes::state().energy_mj += 250'000;
  w->poll(base + 2 * kSecond);
  fakes::state().compute_pids = {};
  w->poll(base + 3 * kSecond);
  std::vector<agent::AgentRecord> records(1);
  records[0].gpu_index = 0;
  records[0].period_start_ns = base + 1 * kSecond;
  records[0].period_end_ns = base + 60 * kSecond;
  records[0].die_util_pct = 25;
  records[0].stranded_pct = 75;
  hook.annotate(records);
  ASSERT_EQ(records[0].holders.size(), 1U);
  EXPECT_EQ(records[0].holders[0].key, "slurm/4242/0");
  hook.write_jobs(base + 3 * kSecond, false);
  // The store has it, NDJSON printed it, /metrics exports it with its labels.
  JobStore read(db, false);
  const auto jobs = read.list(0);
  ASSERT_EQ(jobs.size(), 1U);
  EXPECT_DOUBLE_EQ(jobs[0].energy_j, 250);
  EXPECT_DOUBLE_EQ(jobs[0].stranded_gpu_seconds, 0.75);
  std::rewind(ndjson);
  char line[8192] = {};
  ASSERT_NE(std::fgets(line, sizeof line, ndjson), nullptr);
  EXPECT_EQ(nlohmann::json::parse(line)["holder"]["labels"]["slurm_job"], "4242");
  std::fclose(ndjson);
  const std::string text = hook.metrics(false);
  EXPECT_NE(
      text.find("diescope_job_energy_joules{gpu=\"0\",UUID=\"GPU-00000000-1111-2222-3333-444444444444\","
                "holder_kind=\"slurm_job\",holder=\"slurm/4242/0\",slurm_job=\"4242\",slurm_step=\"0\","
                "slurm_user=\"alice\",job_id=\"1\"} 250\n"),
      std::string::npos)
      << text;
  EXPECT_NE(
      text.find("diescope_gpu_holders{gpu=\"0\",UUID=\"GPU-00000000-1111-2222-3333-444444444444\"} 0\n"),
      std::string::npos);
}

TEST(AgentHook, SeriesBoundedForEightGpusAndFiftyJobsADay) {
  // 8 GPUs, 50 jobs in a day: the per-job families keep the last kJobsOnMetrics (20) jobs, 7 families
  // each: 140 job series at any time however many jobs run; the holders family one per GPU: 8.
  std::vector<JobRecord> last;
  for (int i = 0; i < 50; ++i) {
    JobRecord j;
    j.id = i + 1;
    j.gpu_index = i % 8;
    j.holder.kind = HolderKind::pod;
    j.holder.key = "pod/ml/job-" + std::to_string(i);
    j.holder.pod = "job-" + std::to_string(i);
    j.holder.pod_namespace = "ml";
    last.push_back(j);
    if (last.size() > kJobsOnMetrics) last.erase(last.begin());
  }
  const std::string text = "\n" + jobs_metrics(last, false);
  std::size_t total = 0;
  for (const char* f :
       {"diescope_job_gpu_seconds", "diescope_job_stranded_gpu_seconds", "diescope_job_die_util_percent",
        "diescope_job_gpu_util_percent", "diescope_job_energy_joules", "diescope_job_stranded_energy_joules",
        "diescope_job_end_timestamp_seconds"})
    total += series(text, f);
  EXPECT_EQ(total, 7U * 20U);
  WatchSnapshot snap;
  for (int g = 0; g < 8; ++g)
    snap.gpus.push_back(GpuHolders{g, "GPU-" + std::to_string(g), {}, "", {}, false, "", {}});
  EXPECT_EQ(series("\n" + snapshot_metrics(snap, false), "diescope_gpu_holders"), 8U);
}

}  // namespace
}  // namespace diescope::attribution
