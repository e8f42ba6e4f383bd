// The range backend (docs/roofline.md#the-range-profiler): the region rule the injection library
// follows, its output file read back, and the pass groups merged into rows. Files are written here
// as the library writes them; every expected figure is worked out by hand in the test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "diescope/core/error.hpp"
#include "diescope/roofline/range.hpp"
#include "region_tracker.hpp"

namespace diescope::roofline {
namespace {

using collect::range::RegionTracker;

// ---- the region rule ----------------------------------------------------------------------------

TEST(RangeRegions, InnermostPushPopOfTheLatestThreadIsCurrent) {
  RegionTracker t;
  auto c = t.push(1, "step");
  EXPECT_FALSE(c.before);
  ASSERT_TRUE(c.after);
  EXPECT_EQ(t.occurrence(*c.after).name, "step");
  c = t.push(1, "forward");
  EXPECT_TRUE(c.changed());
  EXPECT_EQ(t.occurrence(*t.current()).name, "forward");
  c = t.pop(1);  // forward ends, step is current again
  ASSERT_EQ(c.ended.size(), 1u);
  EXPECT_EQ(t.occurrence(c.ended[0]).name, "forward");
  EXPECT_EQ(t.occurrence(*c.after).name, "step");
  c = t.push(1, "forward");  // the second forward is occurrence 2
  EXPECT_EQ(t.occurrence(*c.after).number, 2);
  EXPECT_EQ(t.occurrence(*c.after).name, "forward");
}

TEST(RangeRegions, StartEndRangeIsCurrentWhereNoPushIsOpen) {
  RegionTracker t;
  t.push(1, "forward");
  // Another thread (autograd's) marks nothing: its events see the start/end range.
  auto c = t.start(2, 77, "backward");
  EXPECT_EQ(t.occurrence(*c.after).name, "backward");
  c = t.push(1, "inner");  // the latest event's thread has a push open: it wins
  EXPECT_EQ(t.occurrence(*c.after).name, "inner");
  c = t.end(2, 77);  // thread 2 has no push: nothing current after backward ends
  ASSERT_EQ(c.ended.size(), 1u);
  EXPECT_EQ(t.occurrence(c.ended[0]).name, "backward");
  EXPECT_FALSE(c.after);
  EXPECT_EQ(t.still_open().size(), 2u);  // forward and inner
}

// Every CUPTI range has a name of its own: a region's second occurrence (or second segment) must not
// fold into the first's node.
TEST(RangeRegions, CuptiRangeNamesAreUnique) {
  EXPECT_EQ(collect::range::cupti_range_name("forward", 1), "forward #1");
  EXPECT_EQ(collect::range::cupti_range_name("forward", 7), "forward #7");
  EXPECT_NE(collect::range::cupti_range_name("forward", 1), collect::range::cupti_range_name("forward", 2));
  EXPECT_EQ(collect::range::cupti_range_name("", 3), "(outside) #3");
}

TEST(RangeRegions, PopWithNothingPushedAndUnknownEndAreUnmatched) {
  RegionTracker t;
  EXPECT_TRUE(t.pop(1).unmatched);
  EXPECT_TRUE(t.end(1, 5).unmatched);
  EXPECT_FALSE(t.current());
  EXPECT_EQ(t.size(), 0u);
}

// ---- the library's file -------------------------------------------------------------------------

// Group 0 of a two-group run: duration, SM clock and DRAM bytes; group 1: the FP32 SASS counts.
const std::string kGroup0 =
    "diescope-range\t1\n"
    "mode\tcounters\n"
    "device\tNVIDIA H200\tGH100\n"
    "groups\t2\t0\n"
    "refused\tsm__ops_path_tensor_src_fp16.sum\n"
    "metrics\tgpu__time_duration.sum\tsm__cycles_elapsed.avg.per_second\tdram__bytes.sum\n"
    "open\tfma\t1\t100\n"
    "row\tfma\t1\t1\t4\tffma_kernel\t100\t900\t20000000\t1980000000\t1000\n"
    "open\ttriad\t1\t1000\n"
    "row\ttriad\t1\t1\t1\ttriad_kernel\t1000\t2000\t1000000\t1500000000\t3221225472\n"
    "row\t\t1\t1\t2\tinit\t10\t20\t100000\t1000000000\t64\n"
    "end\t0\n";
const std::string kGroup1 =
    "diescope-range\t1\n"
    "mode\tcounters\n"
    "device\tNVIDIA H200\tGH100\n"
    "groups\t2\t1\n"
    "metrics\tsm__sass_thread_inst_executed_op_fadd_pred_on.sum\tsm__sass_thread_inst_executed_op_fmul_pred_"
    "on."
    "sum\tsm__sass_thread_inst_executed_op_ffma_pred_on.sum\n"
    "open\tfma\t1\t100\n"
    "row\tfma\t1\t1\t4\tffma_kernel\t100\t900\t10\t20\t1000\n"
    "open\ttriad\t1\t1000\n"
    "row\ttriad\t1\t1\t1\ttriad_kernel\t1000\t2000\t0\t0\t268435456\n"
    "row\t\t1\t1\t2\tinit\t10\t20\tnan\tnan\tnan\n"
    "end\t0\n";

TEST(RangeFile, ReadsEveryKindOfLine) {
  const RangeRun r = parse_range_output(kGroup0, "g0.txt");
  EXPECT_EQ(r.mode, "counters");
  EXPECT_EQ(r.gpu, "NVIDIA H200");
  EXPECT_EQ(r.chip, "GH100");
  EXPECT_EQ(r.groups, 2);
  EXPECT_EQ(r.group, 0);
  ASSERT_EQ(r.metrics.size(), 3u);
  ASSERT_EQ(r.refused.size(), 1u);
  ASSERT_EQ(r.regions.size(), 3u);
  EXPECT_EQ(r.regions[0].name, "fma");
  EXPECT_EQ(r.regions[0].launches, 4);
  EXPECT_DOUBLE_EQ(r.regions[0].values[2], 1000.0);
  EXPECT_EQ(r.regions[2].name, "");  // outside every region
  EXPECT_TRUE(r.ended);
  const RangeRun g1 = parse_range_output(kGroup1, "g1.txt");
  EXPECT_TRUE(std::isnan(g1.regions[2].values[0]));  // "nan": not measured
}

TEST(RangeFile, LineCutShortByACrashIsNotRead) {
  const std::string cut =
      "diescope-range\t1\nmetrics\tgpu__time_duration.sum\nopen\tfma\t1\t5\nrow\tfma\t1\t1\t";
  const RangeRun r = parse_range_output(cut, "cut.txt");
  EXPECT_TRUE(r.regions.empty());
  ASSERT_EQ(r.opened.size(), 1u);
  EXPECT_EQ(r.opened[0], "fma#1");
  EXPECT_FALSE(r.ended);
}

TEST(RangeFile, ForeignOrMalformedFilesNameTheLine) {
  EXPECT_THROW(parse_range_output("", "empty.txt"), core::InputError);
  try {
    parse_range_output("hello\n", "x.txt");
    FAIL();
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.line(), 1);
    EXPECT_NE(e.cause().find("not written by libdiescope-range"), std::string::npos);
  }
  try {
    parse_range_output("diescope-range\t1\nmetrics\ta\nrow\tr\t1\t1\tmany\tk\t0\t0\t1\n", "y.txt");
    FAIL();
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.line(), 3);  // "many" launches is not a number
  }
  try {
    parse_range_output("diescope-range\t1\nmetrics\ta\tb\nrow\tr\t1\t1\t1\tk\t0\t0\t1\n", "z.txt");
    FAIL();
  } catch (const core::InputError& e) {
    EXPECT_NE(e.cause().find("1 values where the metrics line names 2"), std::string::npos);
  }
}

// ---- merging the pass groups --------------------------------------------------------------------

TEST(RangeRows, GroupsMergeByRegionAndOccurrence) {
  std::vector<std::string> warnings;
  const std::vector<Row> rows = rows_from_range(
      {parse_range_output(kGroup0, "g0.txt"), parse_range_output(kGroup1, "g1.txt")}, "bench", warnings);
  // The outside row is dropped: the program marks regions (docs/roofline.md#regions).
  ASSERT_EQ(rows.size(), 2u);
  const Row& fma = rows[0];
  EXPECT_EQ(fma.profiler, Profiler::range);
  EXPECT_EQ(fma.caches, "program");  // the program ran as it is
  EXPECT_EQ(fma.region, "fma");
  EXPECT_EQ(fma.kernel, "ffma_kernel");
  EXPECT_EQ(fma.launches, 4);
  EXPECT_EQ(fma.gpu, "NVIDIA H200");
  EXPECT_DOUBLE_EQ(fma.duration_s, 0.02);  // CUPTI evaluates gpu__time_duration.sum in ns: 2e7 ns
  EXPECT_DOUBLE_EQ(fma.sm_hz, 1.98e9);
  // fp32 FLOPs = fadd + fmul + 2 x ffma = 10 + 20 + 2000
  EXPECT_DOUBLE_EQ(fma.flop[index(Precision::fp32)], 2030.0);
  EXPECT_DOUBLE_EQ(fma.bytes[index(Level::dram)], 1000.0);
  // The triad: 2 x 2^28 FLOPs over 3 x 2^30 bytes.
  EXPECT_DOUBLE_EQ(rows[1].flop[index(Precision::fp32)], 536870912.0);
  EXPECT_DOUBLE_EQ(intensity(rows[1], Level::dram), 536870912.0 / 3221225472.0);
  // fp64 was in neither group's metrics: not available, never 0.
  EXPECT_TRUE(std::isnan(fma.flop[index(Precision::fp64)]));
  ASSERT_EQ(warnings.size(), 1u);  // the refused metric
  EXPECT_NE(warnings[0].find("sm__ops_path_tensor_src_fp16.sum"), std::string::npos);
}

TEST(RangeRows, NoRegionGivesOneRowForTheWholeRunWithAWarning) {
  const std::string run =
      "diescope-range\t1\nmetrics\tgpu__time_duration.sum\tdram__bytes.sum\n"
      "row\t\t1\t1\t7\tk\t0\t0\t500000000\t4096\nend\t0\n";
  std::vector<std::string> warnings;
  const auto rows = rows_from_range({parse_range_output(run, "a.txt")}, "plain", warnings);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].region, "");
  EXPECT_EQ(rows[0].launches, 7);
  EXPECT_DOUBLE_EQ(rows[0].bytes[index(Level::dram)], 4096.0);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("marks no NVTX region, so its whole run is one row"), std::string::npos);
}

TEST(RangeRows, RegionNeverClosedKeepsItsRowAndSaysSo) {
  const std::string run =
      "diescope-range\t1\nmetrics\tgpu__time_duration.sum\n"
      "open\tleak\t1\t0\nrow\tleak\t1\t0\t3\tk\t0\t9\t250000000\nend\t1\n";
  std::vector<std::string> warnings;
  const auto rows = rows_from_range({parse_range_output(run, "a.txt")}, "leaky", warnings);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_DOUBLE_EQ(rows[0].duration_s, 0.25);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("region leak (occurrence 1) was never closed"), std::string::npos);
}

TEST(RangeRows, CrashInsideARegionKeepsTheClosedOnesAndNamesTheOpenOne) {
  const std::string run =
      "diescope-range\t1\nmetrics\tgpu__time_duration.sum\n"
      "open\tok\t1\t0\nrow\tok\t1\t1\t1\tk\t0\t9\t0.1\nopen\tboom\t1\t10\n";
  std::vector<std::string> warnings;
  const auto rows = rows_from_range({parse_range_output(run, "a.txt")}, "crashy", warnings);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].region, "ok");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("crashed or was killed) inside boom#1, whose rows are lost"), std::string::npos);
  EXPECT_NE(warnings[0].find("(pass group 0 of 1)"),
            std::string::npos);  // no groups line: group -1, shown +1
}

TEST(RangeRows, SameCauseInSeveralGroupsIsOneWarning) {
  const std::string g0 = "diescope-range\t1\ngroups\t2\t0\nmetrics\tgpu__time_duration.sum\nopen\tx\t1\t0\n";
  const std::string g1 = "diescope-range\t1\ngroups\t2\t1\nmetrics\tdram__bytes.sum\nopen\tx\t1\t0\n";
  std::vector<std::string> warnings;
  const auto rows = rows_from_range({parse_range_output(g0, "g0.txt"), parse_range_output(g1, "g1.txt")},
                                    "crashy", warnings);
  EXPECT_TRUE(rows.empty());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("inside x#1, whose rows are lost"), std::string::npos);
  EXPECT_NE(warnings[0].find("(pass groups 1, 2 of 2)"), std::string::npos);
}

TEST(RangeRows, RegionMissingFromAGroupIsNamed) {
  const std::string g0 =
      "diescope-range\t1\ngroups\t2\t0\nmetrics\tgpu__time_duration.sum\n"
      "row\ta\t1\t1\t1\tk\t0\t9\t0.1\nrow\ta\t2\t1\t1\tk\t0\t9\t0.1\nend\t0\n";
  const std::string g1 =
      "diescope-range\t1\ngroups\t2\t1\nmetrics\tdram__bytes.sum\nrow\ta\t1\t1\t1\tk\t0\t9\t8\nend\t0\n";
  std::vector<std::string> warnings;
  const auto rows = rows_from_range({parse_range_output(g0, "g0.txt"), parse_range_output(g1, "g1.txt")},
                                    "flaky", warnings);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_DOUBLE_EQ(rows[0].bytes[index(Level::dram)], 8.0);
  EXPECT_TRUE(std::isnan(rows[1].bytes[index(Level::dram)]));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("region a occurrence 2 is in 1 of the 2 pass groups"), std::string::npos);
}

TEST(RangeRows, RangeCuptiDidNotRecordLeavesTheRegionEmpty) {
  // The library found the last range in CUPTI's buffer named "optimizer" where it closed "forward":
  // it writes a stale line and NaN for the segment, so the row is empty, never another region's.
  const std::string run =
      "diescope-range\t1\nmetrics\tgpu__time_duration.sum\tdram__bytes.sum\n"
      "stale\tforward\toptimizer\t0\nrow\tforward\t2\t1\t5\tk\t0\t9\tnan\tnan\nend\t0\n";
  std::vector<std::string> warnings;
  const auto rows = rows_from_range({parse_range_output(run, "a.txt")}, "resnet", warnings);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_TRUE(std::isnan(rows[0].bytes[index(Level::dram)]));
  EXPECT_TRUE(std::isnan(rows[0].duration_s));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("CUPTI did not record 1 counter range(s)"), std::string::npos);
}

TEST(RangeRows, MetricNamesFollowTheRangeProfiler) {
  const auto m = range_metrics();
  EXPECT_NE(std::find(m.begin(), m.end(), "sm__sass_thread_inst_executed_op_ffma_pred_on.sum"), m.end());
  EXPECT_EQ(std::find(m.begin(), m.end(), "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"), m.end());
  EXPECT_EQ(std::find(m.begin(), m.end(), "launch__grid_size"), m.end());
  // fp16 and int8 tensor totals need two passes: their one-pass parts are asked for instead.
  EXPECT_EQ(std::find(m.begin(), m.end(), "sm__ops_path_tensor_src_fp16.sum"), m.end());
  EXPECT_NE(std::find(m.begin(), m.end(), "sm__ops_path_tensor_op_hgmma_src_fp16.sum"), m.end());
  EXPECT_NE(std::find(m.begin(), m.end(), "sm__ops_path_tensor_op_hmma_src_fp16_dst_fp32.sum"), m.end());
  EXPECT_EQ(std::find(m.begin(), m.end(), "sm__ops_path_tensor_src_int8.sum"), m.end());
  EXPECT_NE(std::find(m.begin(), m.end(), "sm__ops_path_tensor_op_imma_src_int8_sparsity_on.sum"), m.end());
}

// The fp16 total is its three parts' sum, here in two pass groups (hgmma alone, the two hmma parts
// together); int8 lacks a part (not measured) and stays not available, never a partial sum.
TEST(RangeRows, Fp16TensorFlopsAreThePartsSum) {
  const std::string g0 =
      "diescope-range\t1\ngroups\t2\t0\n"
      "metrics\tgpu__time_duration.sum\tsm__ops_path_tensor_op_hgmma_src_fp16.sum\t"
      "sm__ops_path_tensor_op_igmma_src_int8.sum\n"
      "open\thgemm\t1\t0\nrow\thgemm\t1\t1\t2\tk\t0\t9\t1000000\t6000\t5\nend\t0\n";
  const std::string g1 =
      "diescope-range\t1\ngroups\t2\t1\n"
      "metrics\tsm__ops_path_tensor_op_hmma_src_fp16_dst_fp16.sum\t"
      "sm__ops_path_tensor_op_hmma_src_fp16_dst_fp32.sum\n"
      "open\thgemm\t1\t0\nrow\thgemm\t1\t1\t2\tk\t0\t9\t300\t40\nend\t0\n";
  std::vector<std::string> warnings;
  const auto rows =
      rows_from_range({parse_range_output(g0, "g0.txt"), parse_range_output(g1, "g1.txt")}, "h", warnings);
  ASSERT_EQ(rows.size(), 1u);
  // 6000 (warpgroup) + 300 (warp, fp16 accumulate) + 40 (warp, fp32 accumulate) = 6340.
  EXPECT_DOUBLE_EQ(rows[0].flop[index(Precision::tensor_fp16)], 6340.0);
  EXPECT_TRUE(std::isnan(rows[0].flop[index(Precision::tensor_int8)]));
  EXPECT_TRUE(warnings.empty()) << warnings.front();
}

}  // namespace
}  // namespace diescope::roofline

namespace diescope::roofline {
namespace {

TEST(RangeRows, BackendsStayApartWhenTablesMeet) {
  Row ncu;
  ncu.executable = "prog";
  ncu.region = "ffma";
  ncu.launch = 1;
  Row range = ncu;
  range.profiler = Profiler::range;
  // Same executable, region and launch ID: both kept, one per backend.
  EXPECT_EQ(concatenate({{ncu}, {range}}).size(), 2u);
  EXPECT_EQ(concatenate({{ncu}, {ncu}}).size(), 1u);
  // Sum aggregation groups by backend too: two rows, not one with both added.
  EXPECT_EQ(aggregate({ncu, range}, Aggregate::sum).size(), 2u);
  // A range row outside every region of a program with no region: kept, and no ncu wording.
  Row whole = range;
  whole.region.clear();
  std::vector<std::string> warnings;
  EXPECT_EQ(filter_regions({whole}, std::nullopt, warnings).size(), 1u);
  EXPECT_TRUE(warnings.empty());
}

}  // namespace
}  // namespace diescope::roofline
