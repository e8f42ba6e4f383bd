// docs/attribution.md#job-records: every figure worked out by hand.
#include <cmath>
#include <gtest/gtest.h>

#include "diescope/attribution/jobs.hpp"
#include "diescope/collect/unit_tables.hpp"

namespace diescope::attribution {
namespace {

constexpr recording::TimeNs kS = recording::kNsPerSecond;
const std::string kUuid = "GPU-0";

HolderShare holder(const std::string& key, double share = 1) {
  HolderShare h;
  h.holder.key = key;
  h.holder.kind = HolderKind::pod;
  h.share = share;
  return h;
}

agent::AgentRecord record(recording::TimeNs start_s, recording::TimeNs end_s, double gpu, double die,
                          const std::string& limiting, const std::string& table = "gh100") {
  agent::AgentRecord r;
  r.gpu_index = 0;
  r.period_start_ns = start_s * kS;
  r.period_end_ns = end_s * kS;
  r.gpu_util_pct = gpu;
  r.die_util_pct = die;
  r.gap_pct = gpu - die;
  r.stranded_pct = 100 - die;
  r.limiting_unit = limiting;
  r.unit_table = table;
  return r;
}

// docs/agent.md#triggered-captures: a capture links to the jobs on its GPU. At 20 s, "a" is open on
// GPU 0, "b" ended at 12 s (after the capture's start at 11 s) and waits for a record, "c" ended at
// 10 s (before it), "d" is on GPU 1. Only "a" and "b" link it.
TEST(Jobs, ACaptureLinksToTheJobsOnItsGpuDuringIt) {
  JobTracker t(180 * kS);
  t.observe(0, kUuid, std::nullopt, "", 9 * kS, {holder("a"), holder("b", 0), holder("c", 0)}, NAN);
  t.observe(0, kUuid, std::nullopt, "", 10 * kS, {holder("a"), holder("b", 0), holder("c", 0)}, NAN);
  t.observe(0, kUuid, std::nullopt, "", 11 * kS, {holder("a"), holder("b", 0)}, NAN);  // c ended at 10 s
  t.observe(0, kUuid, std::nullopt, "", 12 * kS, {holder("a"), holder("b", 0)}, NAN);
  t.observe(0, kUuid, std::nullopt, "", 13 * kS, {holder("a")}, NAN);  // b ended at 12 s
  t.observe(1, "GPU-1", std::nullopt, "", 13 * kS, {holder("d")}, NAN);
  t.link_capture(0, 11 * kS, "/captures/x");
  const auto jobs = t.take_finished(20 * kS, true);
  ASSERT_EQ(jobs.size(), 4U);
  for (const JobRecord& j : jobs) {
    const bool linked = j.holder.key == "a" || j.holder.key == "b";
    EXPECT_EQ(j.captures, linked ? std::vector<std::string>{"/captures/x"} : std::vector<std::string>{})
        << j.holder.key;
  }
}

TEST(Jobs, OneHolderAlone) {
  JobTracker t(180 * kS);
  // Polls at 10, 11, 12 s with the holder; 13 s without. Energy +300 J a second.
  t.observe(0, kUuid, std::nullopt, "", 10 * kS, {holder("a")}, 1'000'000);
  t.observe(0, kUuid, std::nullopt, "", 11 * kS, {holder("a")}, 1'300'000);
  t.observe(0, kUuid, std::nullopt, "", 12 * kS, {holder("a")}, 1'600'000);
  t.observe(0, kUuid, std::nullopt, "", 13 * kS, {}, 1'900'000);
  EXPECT_TRUE(t.take_finished(13 * kS).empty());  // no record covers its end yet
  t.add_record(record(0, 60, 80, 40, "dram"));
  const auto jobs = t.take_finished(61 * kS);
  ASSERT_EQ(jobs.size(), 1U);
  const JobRecord& j = jobs[0];
  EXPECT_EQ(j.start_ns, 10 * kS);
  EXPECT_EQ(j.end_ns, 12 * kS);        // the last poll that listed it
  EXPECT_DOUBLE_EQ(j.gpu_seconds, 2);  // (10,11] and (11,12]
  EXPECT_DOUBLE_EQ(j.energy_j, 600);   // 2 x 300 J
  EXPECT_DOUBLE_EQ(j.die_util_pct, 40);
  EXPECT_DOUBLE_EQ(j.gpu_util_pct, 80);
  EXPECT_DOUBLE_EQ(j.gap_pct, 40);
  EXPECT_DOUBLE_EQ(j.stranded_gpu_seconds, 1.2);  // 2 s x share 1 x (100 - 40)%
  EXPECT_DOUBLE_EQ(j.coverage_pct, 100);
  EXPECT_EQ(j.limiting_unit, "dram");
  EXPECT_EQ(j.chip_source, ChipSourceSeen::pm);
  EXPECT_FALSE(j.shared);
}

TEST(Jobs, SharedGpuSplitByShare) {
  JobTracker t(180 * kS);
  t.add_record(record(0, 60, 90, 40, "fp32"));
  for (int s = 20; s <= 22; ++s)
    t.observe(0, kUuid, std::nullopt, "", s * kS, {holder("b", 0.75), holder("c", 0.25)},
              2'000'000.0 + (s - 20) * 400'000.0);
  t.observe(0, kUuid, std::nullopt, "", 23 * kS, {}, 3'200'000);
  auto jobs = t.take_finished(23 * kS);
  ASSERT_EQ(jobs.size(), 2U);
  sort_most_wasteful(jobs);
  const JobRecord& b = jobs[0];
  const JobRecord& c = jobs[1];
  EXPECT_EQ(b.holder.key, "b");
  EXPECT_DOUBLE_EQ(b.gpu_seconds, 1.5);  // 2 s x 0.75
  EXPECT_DOUBLE_EQ(b.energy_j, 600);     // 800 J x 0.75
  EXPECT_DOUBLE_EQ(b.mean_share, 0.75);
  EXPECT_DOUBLE_EQ(b.stranded_gpu_seconds, 0.9);  // 2 s x 0.75 x 60%
  EXPECT_DOUBLE_EQ(c.gpu_seconds, 0.5);
  EXPECT_DOUBLE_EQ(c.energy_j, 200);
  EXPECT_NEAR(c.stranded_gpu_seconds, 0.3, 1e-12);
  EXPECT_TRUE(b.shared);
  ASSERT_FALSE(b.notes.empty());
  EXPECT_NE(b.notes[0].find("approximate"), std::string::npos);
}

TEST(Jobs, TwoRecordsWeightedByOverlap) {
  JobTracker t(180 * kS);
  t.add_record(record(0, 60, 100, 40, "dram"));
  t.add_record(record(60, 120, 100, 80, "fp32"));
  t.observe(0, kUuid, std::nullopt, "", 50 * kS, {holder("a")}, 0);
  t.observe(0, kUuid, std::nullopt, "", 80 * kS, {holder("a")}, 0);
  t.observe(0, kUuid, std::nullopt, "", 81 * kS, {}, 0);
  const auto jobs = t.take_finished(81 * kS);
  ASSERT_EQ(jobs.size(), 1U);
  EXPECT_DOUBLE_EQ(jobs[0].gpu_seconds, 30);
  // 10 s at 40% and 20 s at 80%: (400 + 1600) / 30.
  EXPECT_NEAR(jobs[0].die_util_pct, 2000.0 / 30.0, 1e-9);
  EXPECT_EQ(jobs[0].limiting_unit, "fp32");               // 20 s against 10 s
  EXPECT_NEAR(jobs[0].stranded_gpu_seconds, 10.0, 1e-9);  // 10 x 0.6 + 20 x 0.2
  EXPECT_DOUBLE_EQ(jobs[0].energy_j, 0);
}

// docs/energy.md#in-job-records: per overlapped record, overlap x share x the record's mean power x
// its stranded share of the chip-sampled energy.
TEST(Jobs, StrandedEnergyFromTheRecords) {
  JobTracker t(180 * kS);
  agent::AgentRecord first = record(0, 60, 100, 40, "dram");
  first.mean_power_w = 500;
  first.stranded_energy_pct = 20;
  agent::AgentRecord second = record(60, 120, 100, 80, "fp32");
  second.mean_power_w = 600;
  second.stranded_energy_pct = 5;
  t.add_record(first);
  t.add_record(second);
  t.observe(0, kUuid, std::nullopt, "", 50 * kS, {holder("a", 0.5)}, 0);
  t.observe(0, kUuid, std::nullopt, "", 80 * kS, {holder("a", 0.5)}, 0);
  t.observe(0, kUuid, std::nullopt, "", 81 * kS, {}, 0);
  const auto jobs = t.take_finished(81 * kS);
  ASSERT_EQ(jobs.size(), 1U);
  // 10 s x 0.5 x 500 W x 20% = 500 J, and 20 s x 0.5 x 600 W x 5% = 300 J: 800 J.
  EXPECT_NEAR(jobs[0].stranded_energy_j, 800.0, 1e-9);
  // Records without energy give NaN, not 0.
  JobTracker none(180 * kS);
  none.add_record(record(0, 60, 100, 40, "dram"));
  none.observe(0, kUuid, std::nullopt, "", 10 * kS, {holder("a")}, 0);
  none.observe(0, kUuid, std::nullopt, "", 20 * kS, {holder("a")}, 0);
  none.observe(0, kUuid, std::nullopt, "", 21 * kS, {}, 0);
  const auto plain = none.take_finished(61 * kS);
  ASSERT_EQ(plain.size(), 1U);
  EXPECT_TRUE(std::isnan(plain[0].stranded_energy_j));
}

TEST(Jobs, PartCoverageAndGpmSource) {
  JobTracker t(180 * kS);
  // The record covers 30 of the job's 60 s with a chip figure; the other 30 s have none.
  t.add_record(record(0, 30, 90, 50, "tensor", collect::gpm_unit_table().name));
  agent::AgentRecord blank = record(30, 60, 90, 0, "");
  blank.die_util_pct = std::numeric_limits<double>::quiet_NaN();
  blank.stranded_pct = std::numeric_limits<double>::quiet_NaN();
  blank.limiting_unit.reset();
  t.add_record(blank);
  t.observe(0, kUuid, std::nullopt, "", 0, {holder("a")}, 0);
  t.observe(0, kUuid, std::nullopt, "", 60 * kS, {holder("a")}, 0);
  t.observe(0, kUuid, std::nullopt, "", 61 * kS, {}, 0);
  const auto jobs = t.take_finished(61 * kS);
  ASSERT_EQ(jobs.size(), 1U);
  EXPECT_DOUBLE_EQ(jobs[0].coverage_pct, 50);
  EXPECT_DOUBLE_EQ(jobs[0].die_util_pct, 50);
  EXPECT_DOUBLE_EQ(jobs[0].gpu_util_pct, 90);
  EXPECT_DOUBLE_EQ(jobs[0].stranded_gpu_seconds, 15);  // 30 s x 50%, over the covered time only
  EXPECT_EQ(jobs[0].chip_source, ChipSourceSeen::gpm);
}

TEST(Jobs, EnergyUnreadableMidJobIsNaNWithReason) {
  JobTracker t(180 * kS);
  t.add_record(record(0, 60, 80, 40, "dram"));
  t.observe(0, kUuid, std::nullopt, "", 1 * kS, {holder("a")}, 1000);
  t.observe(0, kUuid, std::nullopt, "", 2 * kS, {holder("a")}, std::nan(""), "NVML_ERROR_NOT_SUPPORTED");
  t.observe(0, kUuid, std::nullopt, "", 3 * kS, {}, 3000);
  const auto jobs = t.take_finished(3 * kS);
  ASSERT_EQ(jobs.size(), 1U);
  EXPECT_TRUE(std::isnan(jobs[0].energy_j));
  EXPECT_EQ(jobs[0].energy_reason, "NVML_ERROR_NOT_SUPPORTED");
  EXPECT_DOUBLE_EQ(jobs[0].gpu_seconds, 1);
}

TEST(Jobs, WrittenAfterTheWaitWithoutARecord) {
  JobTracker t(10 * kS);
  t.observe(0, kUuid, std::nullopt, "", 1 * kS, {holder("a")}, 0);
  t.observe(0, kUuid, std::nullopt, "", 2 * kS, {}, 0);
  EXPECT_TRUE(t.take_finished(5 * kS).empty());
  const auto jobs = t.take_finished(12 * kS);
  ASSERT_EQ(jobs.size(), 1U);
  EXPECT_TRUE(std::isnan(jobs[0].die_util_pct));
  EXPECT_DOUBLE_EQ(jobs[0].coverage_pct, 0);
  EXPECT_EQ(jobs[0].chip_source, ChipSourceSeen::none);
}

TEST(Jobs, SeenAtOnePollTakesItsRecordWhole) {
  JobTracker t(180 * kS);
  t.add_record(record(0, 60, 70, 30, "l2"));
  t.observe(0, kUuid, std::nullopt, "", 5 * kS, {holder("a")}, 0);
  t.observe(0, kUuid, std::nullopt, "", 6 * kS, {}, 0);
  const auto jobs = t.take_finished(6 * kS);
  ASSERT_EQ(jobs.size(), 1U);
  EXPECT_DOUBLE_EQ(jobs[0].gpu_seconds, 0);
  EXPECT_DOUBLE_EQ(jobs[0].die_util_pct, 30);
  EXPECT_DOUBLE_EQ(jobs[0].stranded_gpu_seconds, 0);
  EXPECT_DOUBLE_EQ(jobs[0].coverage_pct, 100);
}

TEST(Jobs, MigInstanceJobHasNoDeviceWideFigures) {
  JobTracker t(180 * kS);
  t.add_record(record(0, 60, 80, 40, "dram"));
  t.observe(0, kUuid, 3U, "3g.71gb", 1 * kS, {holder("a")}, std::nan(""), "under MIG");
  t.observe(0, kUuid, 3U, "3g.71gb", 2 * kS, {holder("a")}, std::nan(""), "under MIG");
  t.observe(0, kUuid, 3U, "3g.71gb", 3 * kS, {}, std::nan(""), "under MIG");
  const auto jobs = t.take_finished(3 * kS);
  ASSERT_EQ(jobs.size(), 1U);
  EXPECT_EQ(jobs[0].gpu_instance_id, 3U);
  EXPECT_EQ(jobs[0].gpu_instance_profile, "3g.71gb");
  EXPECT_DOUBLE_EQ(jobs[0].gpu_seconds, 1);
  EXPECT_TRUE(std::isnan(jobs[0].die_util_pct));
  EXPECT_TRUE(std::isnan(jobs[0].energy_j));
  EXPECT_EQ(jobs[0].energy_reason, "under MIG");
}

TEST(Jobs, StoppingEndsOpenJobs) {
  JobTracker t(180 * kS);
  t.observe(0, kUuid, std::nullopt, "", 1 * kS, {holder("a")}, 0);
  t.observe(0, kUuid, std::nullopt, "", 4 * kS, {holder("a")}, 0);
  EXPECT_EQ(t.open_jobs(), 1U);
  const auto jobs = t.take_finished(5 * kS, true);
  ASSERT_EQ(jobs.size(), 1U);
  EXPECT_EQ(jobs[0].end_ns, 4 * kS);
  EXPECT_DOUBLE_EQ(jobs[0].gpu_seconds, 3);
  EXPECT_EQ(t.open_jobs(), 0U);
}

TEST(Jobs, MostWastefulFirstNaNLast) {
  std::vector<JobRecord> jobs(3);
  jobs[0].stranded_gpu_seconds = 5;
  jobs[1].stranded_gpu_seconds = std::nan("");
  jobs[2].stranded_gpu_seconds = 50;
  sort_most_wasteful(jobs);
  EXPECT_EQ(jobs[0].stranded_gpu_seconds, 50);
  EXPECT_EQ(jobs[1].stranded_gpu_seconds, 5);
  EXPECT_TRUE(std::isnan(jobs[2].stranded_gpu_seconds));
}

}  // namespace
}  // namespace diescope::attribution

namespace diescope::attribution {
namespace {

TEST(Jobs, FullCoverageIsExactly100AtAnyNanosecond) {
  // Times as a live agent has them (ns since the epoch, no round numbers): three records cover the job.
  const recording::TimeNs t0 = 1'796'227'243'085'162'019;
  JobTracker t(180 * kS);
  for (int i = 0; i < 3; ++i) {
    agent::AgentRecord r = record(0, 0, 90, 40, "dram");
    r.period_start_ns = t0 - 1'234'567 + i * 5'000'000'003LL;
    r.period_end_ns = r.period_start_ns + 5'000'000'003LL;
    t.add_record(r);
  }
  t.observe(0, kUuid, std::nullopt, "", t0, {holder("a")}, 0);
  t.observe(0, kUuid, std::nullopt, "", t0 + 7'000'014'165, {holder("a")}, 0);
  t.observe(0, kUuid, std::nullopt, "", t0 + 8'000'000'000, {}, 0);
  const auto jobs = t.take_finished(t0 + 8'000'000'000);
  ASSERT_EQ(jobs.size(), 1U);
  EXPECT_EQ(jobs[0].coverage_pct, 100.0);
}

}  // namespace
}  // namespace diescope::attribution
