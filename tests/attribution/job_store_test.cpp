// docs/attribution.md#the-jobs-table, #diescope-jobs, #prometheus-labels
#include <cmath>
#include <filesystem>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "diescope/attribution/job_store.hpp"
#include "diescope/core/error.hpp"

namespace diescope::attribution {
namespace {

JobRecord job(const std::string& pod, double stranded, recording::TimeNs end_s) {
  JobRecord j;
  j.holder.kind = HolderKind::pod;
  j.holder.pod = pod;
  j.holder.pod_namespace = "ml";
  j.holder.container = "trainer";
  j.holder.key = "pod/ml/" + pod;
  j.holder.pids = {4711};
  j.holder.commands = {"python"};
  j.holder.labels = {{"team", "say \"hi\""}};
  j.gpu_index = 0;
  j.gpu_uuid = "GPU-0";
  j.start_ns = (end_s - 100) * recording::kNsPerSecond;
  j.end_ns = end_s * recording::kNsPerSecond;
  j.gpu_seconds = 100;
  j.gpu_util_pct = 90;
  j.die_util_pct = 30;
  j.gap_pct = 60;
  j.limiting_unit = "dram";
  j.stranded_gpu_seconds = stranded;
  j.energy_j = 50'000;
  j.coverage_pct = 100;
  j.chip_source = ChipSourceSeen::pm;
  return j;
}

std::filesystem::path fresh(const std::string& name) {
  const auto dir = std::filesystem::path(DIESCOPE_BINARY_DIR) / "attribution-store-test";
  std::filesystem::create_directories(dir);
  const auto p = dir / name;
  std::filesystem::remove(p);
  return p;
}

TEST(JobStore, RoundTripMostWastefulFirstAndSince) {
  const auto path = fresh("jobs.db");
  {
    JobStore store(path, true);
    std::vector<JobRecord> jobs{job("a", 10, 1000), job("b", 70, 2000), job("c", std::nan(""), 3000)};
    jobs[2].gpu_instance_id = 5;
    jobs[2].gpu_instance_profile = "1g.18gb";
    store.add(jobs);
    EXPECT_EQ(jobs[0].id, 1);
    EXPECT_EQ(jobs[2].id, 3);
  }
  JobStore store(path, false);
  const auto all = store.list(0);
  ASSERT_EQ(all.size(), 3U);
  EXPECT_EQ(all[0].holder.pod, "b");  // 70 stranded GPU-seconds
  EXPECT_EQ(all[1].holder.pod, "a");
  EXPECT_EQ(all[2].holder.pod, "c");  // NaN last
  EXPECT_TRUE(std::isnan(all[2].stranded_gpu_seconds));
  EXPECT_EQ(all[2].gpu_instance_id, 5U);
  EXPECT_EQ(all[0].holder.labels, (std::vector<Label>{{"team", "say \"hi\""}}));
  EXPECT_EQ(all[0].holder.container, "trainer");
  EXPECT_DOUBLE_EQ(all[0].energy_j, 50'000);
  const auto since = store.list(2000 * recording::kNsPerSecond);
  ASSERT_EQ(since.size(), 2U);
}

TEST(JobStore, MissingFileNamedWithFix) {
  try {
    JobStore store(fresh("none.db"), false);
    FAIL();
  } catch (const core::InputError& e) {
    EXPECT_NE(e.fix().find("--db"), std::string::npos);
  }
}

TEST(JobStore, StoreWithoutJobsTableListsNothing) {
  const auto path = fresh("empty.db");
  { JobStore create(path, true); }
  JobStore store(path, false);
  EXPECT_TRUE(store.list(0).empty());
}

TEST(JobRender, TerminalCsvJson) {
  std::vector<JobRecord> jobs{job("b", 70, 2000)};
  jobs[0].shared = true;
  const std::string term = jobs_terminal(jobs);
  EXPECT_NE(term.find("pod ml/b (container trainer)"), std::string::npos) << term;
  EXPECT_NE(term.find("70.0"), std::string::npos);
  EXPECT_NE(term.find("50.00"), std::string::npos);  // 50 kJ
  EXPECT_NE(term.find("approximate"), std::string::npos);
  const std::string csv = jobs_csv(jobs);
  EXPECT_NE(
      csv.find("pod,pod ml/b (container trainer),b,ml,trainer,,0,GPU-0,,1900000000000,2000000000000,100,"
               "approximate,90,30,60,dram,70,50000,100,pm,\n"),  // stranded energy unknown: empty
      std::string::npos)
      << csv;
  const auto j = nlohmann::json::parse(jobs_json(jobs));
  EXPECT_EQ(j["jobs"][0]["holder"]["labels"]["pod"], "b");
  EXPECT_EQ(j["jobs"][0]["stranded_gpu_seconds"], 70);
  EXPECT_TRUE(jobs_terminal({}).find("no job records") == 0);
}

TEST(JobRender, CsvQuotesAndTerminalDropsControlCharacters) {
  JobRecord j = job("x", 1, 10);
  j.holder.pod = "a,b";
  j.holder.kind = HolderKind::pod;
  const std::string csv = jobs_csv({j});
  EXPECT_NE(csv.find(",\"a,b\","), std::string::npos) << csv;
  j.limiting_unit = "dr\x1b[2Jam";
  const std::string term = jobs_terminal({j});
  EXPECT_EQ(term.find('\x1b'), std::string::npos);
}

TEST(JobMetrics, DcgmLabelNamesEscapedValuesAndNaN) {
  JobRecord j = job("a", 70, 2000);
  j.id = 9;
  j.holder.labels = {{"note", "say \"hi\"\\now"}};
  j.energy_j = std::nan("");
  const std::string text = jobs_metrics({j}, false);
  const std::string labels =
      "gpu=\"0\",UUID=\"GPU-0\",holder_kind=\"pod\",holder=\"pod/ml/a\",pod=\"a\",namespace=\"ml\","
      "container=\"trainer\",note=\"say \\\"hi\\\"\\\\now\",job_id=\"9\"";
  EXPECT_NE(text.find("diescope_job_stranded_gpu_seconds{" + labels + "} 70\n"), std::string::npos) << text;
  EXPECT_NE(text.find("diescope_job_energy_joules{" + labels + "} NaN\n"), std::string::npos);
  EXPECT_EQ(text.find("# UNIT"), std::string::npos);
  EXPECT_NE(jobs_metrics({j}, true).find("# UNIT diescope_job_energy_joules joules\n"), std::string::npos);
  EXPECT_TRUE(jobs_metrics({}, false).empty());
}

TEST(JobMetrics, MigInstanceLabels) {
  JobRecord j = job("a", 1, 10);
  j.gpu_instance_id = 2;
  j.gpu_instance_profile = "2g.35gb";
  EXPECT_NE(jobs_metrics({j}, false).find("GPU_I_ID=\"2\",GPU_I_PROFILE=\"2g.35gb\""), std::string::npos);
}

}  // namespace
}  // namespace diescope::attribution

namespace diescope::attribution {
namespace {

TEST(JobsSince, DurationsAndUtcTimes) {
  const recording::TimeNs now = 1'800'000'000 * recording::kNsPerSecond;
  EXPECT_EQ(parse_since("90s", now), now - 90 * recording::kNsPerSecond);
  EXPECT_EQ(parse_since("30m", now), now - 1800 * recording::kNsPerSecond);
  EXPECT_EQ(parse_since("24h", now), now - 86'400 * recording::kNsPerSecond);
  EXPECT_EQ(parse_since("7d", now), now - 604'800 * recording::kNsPerSecond);
  // 2026-12-02 is 20789 days after 1970-01-01 (56 years with 14 leap days, then 335 days of 2026):
  // 20789 x 86400 = 1796169600 s; 14:00 adds 50400 s.
  EXPECT_EQ(parse_since("2026-12-02", now), 1'796'169'600 * recording::kNsPerSecond);
  EXPECT_EQ(parse_since("2026-12-02T14:00:00Z", now), 1'796'220'000 * recording::kNsPerSecond);
  for (const char* bad : {"yesterday", "7", "7w", "2026-12-02T14:00:00", "2026-13-02", "-5m", ""})
    EXPECT_THROW(parse_since(bad, now), core::UsageError) << bad;
}

}  // namespace
}  // namespace diescope::attribution
