// samples.csv: every chip sample as read, its DIE-Util, and the verdict the analysis reached.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "diescope/analysis/analyze.hpp"
#include "diescope/core/error.hpp"
#include "diescope/recording/memory_recording.hpp"
#include "diescope/report/samples_csv.hpp"
#include "fixtures.hpp"
#include "golden.hpp"

namespace diescope {
namespace {

using test::column;
using test::split_lines;

using test::kMs;
using test::kT0;

recording::OwnedChipSample chip(recording::TimeNs start_ms, recording::TimeNs end_ms,
                                std::vector<double> units, double diag, double count) {
  return recording::OwnedChipSample{
      kT0 + start_ms * kMs, kT0 + end_ms * kMs, std::move(units), {diag}, {count}};
}

// Seven samples, one of each kind (times in ms after T0 = 1 s):
//   0 [0, 614)    setup: first after the counters start at T0          -> dropped_first
//   1 [614, 624)  fp32 80, dram 1; engine reading at 630 gives nvenc 90 -> used, DIE-Util 90
//   2 [624, 634)  fp32 NaN                                             -> broken
//   3 [634, 634)  empty span                                           -> broken
//   4 [634, 644)  sm_active NaN                                        -> broken
//   5 [644, 654)  count NaN (a missing count leaves it in); engine reading at 660 is NaN
//                 -> used, DIE-Util max(10, 20) = 20
//   6 [700, 710)  after the run's end at 700                           -> outside the run
recording::MemoryRecording seven_samples() {
  recording::MemoryRecording rec;
  recording::RecordingMeta& m = rec.meta_data;
  m.units = {column("fp32", "FP32", "sm__inst_executed_pipe_fma"), column("dram", "DRAM", "dram__bytes")};
  m.diagnostics = {column("sm_active", "SM active", "gr__cycles_active")};
  m.counts = {column("dram_bytes", "DRAM bytes", "dram__bytes.sum")};
  m.engines = {column("nvenc", "NVENC", "nvml_encoder")};
  m.engines[0].source = recording::UnitSource::nvml_engine;
  m.engines[0].counted_by_gpu_util = false;
  m.start_ns = kT0;
  rec.side_records.counters = {recording::CountersEvent{kT0, true, ""}};
  rec.side_records.end = recording::RunEnd{kT0 + 700 * kMs, 0, recording::RunEnding::exit()};
  rec.side_records.last_ts_ns = kT0 + 710 * kMs;
  rec.list<recording::ChipSample>() = {chip(0, 614, {0.69, 0.54}, 99, 2.132e9),
                                       chip(614, 624, {80, 1}, 100, 1e8),
                                       chip(624, 634, {analysis::kNaN, 2}, 100, 1e8),
                                       chip(634, 634, {10, 20}, 100, 1e8),
                                       chip(634, 644, {10, 20}, analysis::kNaN, 1e8),
                                       chip(644, 654, {10, 20}, 50, analysis::kNaN),
                                       chip(700, 710, {10, 20}, 50, 1e8)};
  rec.list<recording::EngineReading>() = {recording::OwnedEngineReading{kT0 + 630 * kMs, {90}},
                                          recording::OwnedEngineReading{kT0 + 660 * kMs, {analysis::kNaN}}};
  return rec;
}

// The run [0, 700) ms and a steady window [640, 700) ms, as an analysis would give them.
analysis::Analysis run_and_window() {
  analysis::Analysis a;
  a.run.start_ns = kT0;
  a.run.end_ns = kT0 + 700 * kMs;
  a.window.found = true;
  a.window.results.start_ns = kT0 + 640 * kMs;
  a.window.results.end_ns = kT0 + 700 * kMs;
  return a;
}

std::string csv_of(const recording::Recording& rec, const analysis::Analysis* a,
                   report::SamplesCsvStats* stats = nullptr) {
  std::string out;
  report::SamplesCsvStats s =
      report::write_samples_csv(rec, a, [&](std::string_view piece) { out += piece; });
  if (stats) *stats = s;
  return out;
}

TEST(SamplesCsv, OneRowPerSampleAsReadWithItsVerdict) {
  recording::MemoryRecording rec = seven_samples();
  analysis::Analysis a = run_and_window();
  report::SamplesCsvStats stats;
  std::string csv = csv_of(rec, &a, &stats);
  // window_share: sample 4 [634, 644) overlaps the window [640, 700) for 4 of 10 ms = 0.4;
  // sample 5 lies inside it (1); the empty sample has no share (NaN); the others 0.
  // duration_ms: 614 and 10; numbers print in the shortest form that reads back exactly.
  const std::string want =
      "index,start_ns,end_ns,duration_ms,unit.fp32,unit.dram,diag.sm_active,count.dram_bytes,engine.nvenc,"
      "die_util_pct,use,drop_reason,window_share\n"
      "0,1000000000,1614000000,614,0.69,0.54,99,2132000000,NaN,0.69,dropped_first,"
      "first sample after the counters started: it spans their setup,0\n"
      "1,1614000000,1624000000,10,80,1,100,100000000,90,90,used,,0\n"
      "2,1624000000,1634000000,10,NaN,2,100,100000000,NaN,2,dropped_broken,unit fp32 is not a number,0\n"
      "3,1634000000,1634000000,0,10,20,100,100000000,NaN,20,dropped_broken,empty span: end is not after "
      "start,NaN\n"
      "4,1634000000,1644000000,10,10,20,NaN,100000000,NaN,20,dropped_broken,diagnostic sm_active is not a "
      "number,0.4\n"
      "5,1644000000,1654000000,10,10,20,50,NaN,NaN,20,used,,1\n"
      "6,1700000000,1710000000,10,10,20,50,100000000,NaN,20,outside_run,outside the run,0\n";
  EXPECT_EQ(csv, want);
  EXPECT_EQ(stats.rows, 7);
  EXPECT_EQ(stats.used, 2);
  EXPECT_EQ(stats.dropped_first, 1);
  EXPECT_EQ(stats.dropped_broken, 3);
  EXPECT_EQ(stats.outside_run, 1);
}

// --smooth 60: a boxcar of 60 ms (window [t-30, t+30) ms by each row's start) over the used rows only.
// Row 1 at 614 ms: [584, 644) holds row 1 alone (row 5 starts at 644, outside), so it is as read.
// Row 5 at 644 ms: [614, 674) holds rows 1 and 5: fp32 (80+10)/2 = 45, dram (1+20)/2 = 10.5,
// sm_active (100+50)/2 = 75, dram_bytes 1e8 (row 5's is NaN, left out), nvenc 90 (likewise),
// DIE-Util (90+20)/2 = 55. Dropped and outside rows keep their values and enter no window.
TEST(SamplesCsv, SmoothingAveragesUsedRowsOnly) {
  recording::MemoryRecording rec = seven_samples();
  analysis::Analysis a = run_and_window();
  std::string out;
  report::SamplesCsvWriter csv(
      rec.meta(), &a, [&](std::string_view piece) { out += piece; }, 0.060);
  report::walk_samples(rec, &a, [&](const report::WalkedSample& w) { csv.row(w); });
  report::SamplesCsvStats stats = csv.finish();
  EXPECT_EQ(stats.rows, 7);
  const std::vector<std::string> lines = split_lines(out);
  ASSERT_EQ(lines.size(), 8u);
  EXPECT_EQ(lines[2], "1,1614000000,1624000000,10,80,1,100,100000000,90,90,used,,0");
  EXPECT_EQ(lines[6], "5,1644000000,1654000000,10,45,10.5,75,100000000,90,55,used,,1");
  EXPECT_EQ(lines[1],
            "0,1000000000,1614000000,614,0.69,0.54,99,2132000000,NaN,0.69,dropped_first,"
            "first sample after the counters started: it spans their setup,0");
  EXPECT_EQ(lines[7], "6,1700000000,1710000000,10,10,20,50,100000000,NaN,20,outside_run,outside the run,0");
  EXPECT_THROW(report::SamplesCsvWriter(
                   rec.meta(), &a, [](std::string_view) {}, -1),
               core::UsageError);
}

TEST(SamplesCsv, VerdictsAddUpToTheAnalysisCounts) {
  recording::MemoryRecording rec = seven_samples();
  analysis::Analysis a = analysis::analyze(rec);
  report::SamplesCsvStats stats;
  std::string csv = csv_of(rec, &a, &stats);
  // The analysis reads the six samples that touch the run; the seventh is outside it.
  EXPECT_EQ(a.run.samples_read, stats.rows - stats.outside_run);
  EXPECT_EQ(a.run.samples_used, stats.used);
  EXPECT_EQ(a.run.dropped_first, stats.dropped_first);
  EXPECT_EQ(a.run.dropped_broken, stats.dropped_broken);
  // DIE-Util over the run from the used rows, time-weighted: (90 x 10 + 20 x 10) / 20 = 55.
  EXPECT_DOUBLE_EQ(a.run.die_util_pct, 55.0);
}

TEST(SamplesCsv, WithoutCountersEventsTheFirstSampleIsTheSetup) {
  recording::MemoryRecording rec = seven_samples();
  rec.side_records.counters.clear();
  auto lines = split_lines(csv_of(rec, nullptr));
  ASSERT_EQ(lines.size(), 8u);
  EXPECT_NE(lines[1].find(",dropped_first,"), std::string::npos);
  EXPECT_NE(lines[2].find(",used,"), std::string::npos);
  // Without an analysis there is no run to be outside of, and no window: window_share is NaN.
  EXPECT_NE(lines[7].find(",used,,NaN"), std::string::npos);
}

TEST(SamplesCsv, EachCountersStartDropsTheSampleAfterIt) {
  recording::MemoryRecording rec = seven_samples();
  // A restart at 630 ms: sample 2 [624, 634) is the first to end after it.
  rec.side_records.counters.push_back(recording::CountersEvent{kT0 + 630 * kMs, true, ""});
  auto lines = split_lines(csv_of(rec, nullptr));
  EXPECT_NE(lines[3].find(",dropped_first,first sample"), std::string::npos);  // sample 2
  EXPECT_NE(lines[2].find(",used,"), std::string::npos);                       // sample 1
  analysis::Analysis a = analysis::analyze(rec);
  report::SamplesCsvStats stats;
  csv_of(rec, &a, &stats);
  EXPECT_EQ(a.run.dropped_first, stats.dropped_first);
  EXPECT_EQ(a.run.dropped_broken, stats.dropped_broken);
  EXPECT_EQ(a.run.samples_used, stats.used);
}

TEST(SamplesCsv, FieldsWithCommasAreQuoted) {
  recording::MemoryRecording rec = seven_samples();
  rec.meta_data.units[0].key = "fp32,heavy";
  auto lines = split_lines(csv_of(rec, nullptr));
  EXPECT_EQ(lines[0].rfind("index,start_ns,end_ns,duration_ms,\"unit.fp32,heavy\",unit.dram,", 0), 0u);
  EXPECT_NE(lines[3].find(",\"unit fp32,heavy is not a number\","), std::string::npos);
}

TEST(SamplesCsv, StreamsInBoundedPieces) {
  // 20,000 samples of 10 ms: the writer hands the text on in pieces of about 64 KiB, never whole.
  recording::MemoryRecording rec;
  rec.meta_data.units = {column("fp32", "FP32", "x")};
  for (recording::TimeNs i = 0; i < 20'000; ++i)
    rec.list<recording::ChipSample>().push_back(
        recording::OwnedChipSample{kT0 + i * 10 * kMs, kT0 + (i + 1) * 10 * kMs, {42.5}, {}, {}});
  std::size_t pieces = 0, largest = 0, total = 0;
  report::SamplesCsvStats stats = report::write_samples_csv(rec, nullptr, [&](std::string_view p) {
    ++pieces;
    largest = std::max(largest, p.size());
    total += p.size();
  });
  EXPECT_EQ(stats.rows, 20'000);
  EXPECT_GT(total, 1'000'000u);  // ~60 bytes a row
  EXPECT_GT(pieces, 10u);
  EXPECT_LT(largest, (1u << 16) + 256);
}

}  // namespace
}  // namespace diescope
