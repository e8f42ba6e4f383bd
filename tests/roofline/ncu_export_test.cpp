// Reading ncu's raw-page exports of the bundled workloads on the H200 (tests/roofline/fixtures/):
// every FLOP and byte figure below is worked out by hand from the numbers in the fixture files.
#include <gtest/gtest.h>

#include <cmath>

#include "diescope/core/error.hpp"
#include "diescope/roofline/ncu.hpp"
#include "fixtures.hpp"

namespace diescope::roofline {
namespace {

using test::fixture_path;
using test::fixture_rows;
using test::read_file;

TEST(NcuExport, FfmaLaunchCountsFp32FlopsAnFmaAsTwo) {
  const auto rows = fixture_rows("h200-ffma.raw.csv", "ffma");
  ASSERT_EQ(rows.size(), 3u);
  const Row& r = rows[2];  // the steady launch: 45 loop trips
  EXPECT_EQ(r.launch, 2);
  EXPECT_EQ(r.kernel, "unnamed>::ffma_kernel(FfmaArgs)");
  EXPECT_EQ(r.gpu, "NVIDIA H200");
  EXPECT_EQ(r.grid, "(132, 1, 1)");
  EXPECT_EQ(r.block, "(1024, 1, 1)");
  EXPECT_DOUBLE_EQ(r.duration_s, 49792e-9);
  // fadd 2,162,688 + fmul 0 + 2 x ffma 1,559,298,048
  EXPECT_DOUBLE_EQ(r.flop[index(Precision::fp32)], 2162688.0 + 2.0 * 1559298048.0);
  // HFMA2.MMA the compiler uses to move registers: 135,300 thread hfma, no hadd or hmul. Without the
  // kernel's SASS (docs/roofline.md#packed-half-precision) they are the range [1, 4] FLOPs each.
  EXPECT_DOUBLE_EQ(r.flop[index(Precision::fp16)], 135300.0);
  EXPECT_DOUBLE_EQ(r.fp16_flop_high, 4.0 * 135300.0);
  EXPECT_EQ(r.fp16_why, "the kernel's SASS was not read");
  EXPECT_DOUBLE_EQ(r.flop[index(Precision::fp64)], 0.0);
  EXPECT_DOUBLE_EQ(r.flop[index(Precision::tensor_bf16)], 0.0);
  EXPECT_DOUBLE_EQ(r.bytes[index(Level::dram)], 8192.0);
  EXPECT_DOUBLE_EQ(r.bytes[index(Level::l2)], 1169024.0);
  EXPECT_DOUBLE_EQ(r.bytes[index(Level::l1)], 566016.0);
  EXPECT_DOUBLE_EQ(r.sm_hz, 1962941594.61);
  EXPECT_DOUBLE_EQ(r.level_hz[index(Level::dram)], 3196015424.16);
  // 16,896 thread FFMA per cycle over the GPU (128 per SM x 132), two FLOPs each
  EXPECT_DOUBLE_EQ(r.peak_flop_per_cycle[index(Precision::fp32)], 2.0 * 16896.0);
  EXPECT_DOUBLE_EQ(r.peak_bytes_per_cycle[index(Level::dram)], 1504.0);
  EXPECT_TRUE(r.region.empty());
}

TEST(NcuExport, FfmaFlopsAgreeWithTheWorkloadsOwnCountWithinOnePercent) {
  // `diescope workload ffma` printed ffma_per_thread_per_launch 11520 and threads 135168 for its
  // 45-trip launches; it leaves out 16 FMAs and 16 adds per thread that set and sum the accumulators.
  const double counted = 2.0 * 11520 * 135168;
  const double measured = fixture_rows("h200-ffma.raw.csv", "ffma")[2].flop[index(Precision::fp32)];
  EXPECT_DOUBLE_EQ(measured - counted, 135168.0 * (2.0 * 16 + 16));
  EXPECT_LT(std::fabs(measured / counted - 1.0), 0.01);
}

TEST(NcuExport, DfmaFlopsMatchTheCalibrationKernelsCount) {
  // The 256-trip sizing launch: 16 unrolled x 8 chains of DFMA per trip, 1024 threads x 132 blocks,
  // plus 8 DADD per thread that sum the chains.
  const Row r = fixture_rows("h200-dfma.raw.csv", "dfma")[1];
  const double counted = 2.0 * 256 * 16 * 8 * 1024 * 132;
  EXPECT_DOUBLE_EQ(r.flop[index(Precision::fp64)], counted + 8.0 * 1024 * 132);
  EXPECT_LT(std::fabs(r.flop[index(Precision::fp64)] / counted - 1.0), 0.01);
  EXPECT_DOUBLE_EQ(r.peak_flop_per_cycle[index(Precision::fp64)], 2.0 * 8448);
}

TEST(NcuExport, GemmTensorOpsAreTwoMnkOverTheTilesComputed) {
  // cuBLAS's nvjet 320x128 tile on an 8192^3 bf16 GEMM: 26 tiles of 320 rows cover M = 8320, so the
  // tensor path does 2 x 8320 x 8192 x 8192 FLOPs, 1.5625% over the analytic 2·M·N·K.
  const auto rows = fixture_rows("h200-gemm.raw.csv", "gemm");
  ASSERT_EQ(rows.size(), 6u);
  const Row& r = rows[3];
  EXPECT_EQ(r.kernel, "nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_NNT");
  const double ops = r.flop[index(Precision::tensor_bf16)];
  EXPECT_DOUBLE_EQ(ops, 2.0 * 8320 * 8192 * 8192);
  EXPECT_DOUBLE_EQ(ops / (2.0 * 8192 * 8192 * 8192), 8320.0 / 8192.0);
  EXPECT_DOUBLE_EQ(r.flop[index(Precision::fp32)], 0.0);
  // Dense bf16 warpgroup MMA: 4,096 per SM per cycle x 132 SMs
  EXPECT_DOUBLE_EQ(r.peak_flop_per_cycle[index(Precision::tensor_bf16)], 4096.0 * 132);
  EXPECT_DOUBLE_EQ(r.peak_flop_per_cycle[index(Precision::tensor_tf32)], 2048.0 * 132);
  EXPECT_DOUBLE_EQ(r.tensor_inst, 34078720.0);
}

TEST(NcuExport, TriadDramBytesAgreeWithTheBytesItMovedWithinTwoPercent) {
  // `diescope workload stream --kernel triad`: 3 x 2^28 floats of 4 bytes per launch.
  const Row r = fixture_rows("h200-triad.raw.csv", "triad")[0];
  const double moved = 3.0 * (1u << 28) * 4;
  EXPECT_DOUBLE_EQ(r.bytes[index(Level::dram)], 3208256768.0);
  EXPECT_LT(std::fabs(r.bytes[index(Level::dram)] / moved - 1.0), 0.02);
  // one FFMA per element: a = b + s*c
  EXPECT_DOUBLE_EQ(r.flop[index(Precision::fp32)], 2.0 * (1u << 28));
}

TEST(NcuExport, RegionsComeFromTheLaunchingThreadsRangeElseAStartEndRange) {
  const std::string path = fixture_path("h200-resnet50-nvtx.raw.csv");
  const RawExport raw = parse_raw_export(read_file(path), path);
  ASSERT_EQ(raw.rows.size(), 4u);
  // forward (push/pop on the main thread), a backward kernel of the push-marked step (autograd's
  // thread: no range), a backward kernel of the start/end-marked step, optimizer.
  EXPECT_EQ(push_pop_region(raw.rows[0][2]), "forward");
  EXPECT_EQ(push_pop_region(raw.rows[1][2]), "");
  EXPECT_EQ(start_end_region(raw.rows[1][3]), "");
  EXPECT_EQ(push_pop_region(raw.rows[3][2]), "");
  EXPECT_EQ(start_end_region(raw.rows[3][3]), "backward");
  EXPECT_EQ(push_pop_region(raw.rows[2][2]), "optimizer");
  EXPECT_EQ(raw.row_lines[0], 3);
}

TEST(NcuExport, RangeNamesMayHoldColonsAndNestingTakesTheInnermost) {
  EXPECT_EQ(
      push_pop_region(
          R"(77  "<default domain>:step:none:none:none:none:none:none" "<default domain>:conv:a:none:none:none:none:none:none" )"),
      "conv:a");
  EXPECT_EQ(start_end_region(R"( "5:<default domain>:phase 2:none:none:none:none:none:none")"), "phase 2");
}

TEST(NcuExport, UnitsOtherThanBaseAreScaled) {
  const std::string text =
      "==PROF== note\n"
      "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\",\"sm__cycles_elapsed.avg.per_second\","
      "\"dram__bytes.sum\",\"lts__t_bytes.sum\",\"l1tex__t_bytes.sum\""
      ",\"smsp__sass_thread_inst_executed_op_hadd_pred_on.sum\",\"smsp__sass_thread_inst_executed_op_hmul_"
      "pred_on.sum\""
      ",\"smsp__sass_thread_inst_executed_op_hfma_pred_on.sum\",\"smsp__sass_thread_inst_executed_op_fadd_"
      "pred_on.sum\""
      ",\"smsp__sass_thread_inst_executed_op_fmul_pred_on.sum\",\"smsp__sass_thread_inst_executed_op_ffma_"
      "pred_on.sum\""
      ",\"smsp__sass_thread_inst_executed_op_dadd_pred_on.sum\",\"smsp__sass_thread_inst_executed_op_dmul_"
      "pred_on.sum\""
      ",\"smsp__sass_thread_inst_executed_op_dfma_pred_on.sum\"\n"
      "\"\",\"\",\"ms\",\"Ghz\",\"Gbyte\",\"Mbyte\",\"Kbyte\",\"inst\",\"inst\",\"inst\",\"inst\",\"inst\","
      "\"Minst\","
      "\"inst\",\"inst\",\"inst\"\n"
      "\"7\",\"k\",\"1.404992\",\"1.575366\",\"1.383630\",\"8.5\",\"49.024\",\"0\",\"0\",\"0\",\"0\",\"0\","
      "\"2.5\","
      "\"0\",\"0\",\"0\"\n";
  const auto rows = rows_from_export(parse_raw_export(text, "x.csv"), "x", "x.csv");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_DOUBLE_EQ(rows[0].duration_s, 1.404992e-3);
  EXPECT_DOUBLE_EQ(rows[0].sm_hz, 1.575366e9);
  EXPECT_DOUBLE_EQ(rows[0].bytes[index(Level::dram)], 1.383630e9);
  EXPECT_DOUBLE_EQ(rows[0].bytes[index(Level::l1)], 49024.0);
  EXPECT_DOUBLE_EQ(rows[0].flop[index(Precision::fp32)], 2.0 * 2.5e6);
  // A metric the export lacks is "not available", never zero.
  EXPECT_TRUE(std::isnan(rows[0].flop[index(Precision::tensor_bf16)]));
  EXPECT_TRUE(std::isnan(rows[0].peak_flop_per_cycle[index(Precision::fp32)]));
}

TEST(NcuExport, ATruncatedExportNamesTheFileAndLine) {
  std::string text = read_file(fixture_path("h200-gemm.raw.csv"));
  text.resize(text.size() - 400);  // cut inside the last row
  try {
    parse_raw_export(text, "gemm.raw.csv");
    FAIL() << "no error";
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.path(), "gemm.raw.csv");
    EXPECT_EQ(e.line(), 8);
    EXPECT_NE(e.fix().find("--page raw"), std::string::npos);
  }
}

TEST(NcuExport, AFileThatIsNoExportSaysWhatToGive) {
  EXPECT_THROW(parse_raw_export("==PROF== Disconnected\n", "log.txt"), core::InputError);
  EXPECT_THROW(parse_raw_export("\"ID\",\"Kernel Name\"\n", "cut.csv"), core::InputError);
}

TEST(NcuExport, AMissingMetricColumnIsNamed) {
  // The NVTX fixture was profiled with the time alone.
  const std::string path = fixture_path("h200-resnet50-nvtx.raw.csv");
  try {
    rows_from_export(parse_raw_export(read_file(path), path), "resnet", path);
    FAIL() << "no error";
  } catch (const core::InputError& e) {
    EXPECT_NE(e.cause().find("column sm__cycles_elapsed.avg.per_second is missing"), std::string::npos)
        << e.cause();
  }
}

TEST(NcuExport, ANumberThatIsNotOneNamesItsLine) {
  std::string text = read_file(fixture_path("h200-triad.raw.csv"));
  const std::size_t at = text.find("\"782,368\"");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 9, "\"78x368\"");
  try {
    rows_from_export(parse_raw_export(text, "t.csv"), "triad", "t.csv");
    FAIL() << "no error";
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.line(), 3);
    EXPECT_NE(e.cause().find("gpu__time_duration.sum is \"78x368\""), std::string::npos) << e.cause();
  }
}

TEST(NcuExport, AMetricNcuDoesNotKnowHasNoColumn) {
  const std::string path = fixture_path("h200-ffma.raw.csv");
  const RawExport raw = parse_raw_export(read_file(path), path);
  EXPECT_EQ(missing_metrics(raw, {"dram__bytes.sum", "sm__no_such_counter.sum"}),
            (std::vector<std::string>{"sm__no_such_counter.sum"}));
}

TEST(NcuExport, EveryMetricTheTableReadsIsAskedFor) {
  const auto& m = ncu_metrics();
  for (const char* name :
       {"gpu__time_duration.sum", "dram__bytes.sum.peak_sustained",
        "sm__ops_path_tensor_src_bf16_dst_fp32.sum", "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum"})
    EXPECT_NE(std::find(m.begin(), m.end(), name), m.end()) << name;
}

}  // namespace
}  // namespace diescope::roofline
