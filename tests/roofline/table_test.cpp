// Derived figures, roofs, the calibration's ceilings, regions and aggregation (docs/roofline.md),
// on H200 exports and on rows built here; expected values worked out by hand in each test.
#include <gtest/gtest.h>

#include <cmath>

#include "diescope/core/error.hpp"
#include "diescope/roofline/ncu.hpp"
#include "diescope/roofline/table.hpp"
#include "fixtures.hpp"

namespace diescope::roofline {
namespace {

using test::fixture_rows;
using test::read_file;

const std::string kCalibration =
    std::string(DIESCOPE_SOURCE_DIR) + "/bench/results/calibrate/2026-11-29-h200-wgmma/calibration-full.json";

TEST(Table, GemmSitsUnderTheTensorRoof) {
  const Row r = fixture_rows("h200-gemm.raw.csv", "gemm")[3];
  ASSERT_EQ(dominant_precision(r), Precision::tensor_bf16);
  const double flop = 2.0 * 8320 * 8192 * 8192, seconds = 1404992e-9;
  EXPECT_DOUBLE_EQ(performance(r), flop / seconds);
  EXPECT_DOUBLE_EQ(intensity(r, Level::dram), flop / 1383630080.0);
  EXPECT_DOUBLE_EQ(counter_peak_flop_per_s(r, Precision::tensor_bf16), 540672.0 * 1575366028.18);
  // DRAM allows 807 FLOP/B x 4.81 TB/s = 3.9 PFLOP/s and L2 137 FLOP/B x 15.4 TB/s = 2.1 PFLOP/s: the
  // tensor peak, 852 TFLOP/s at the 1575 MHz the SMs ran at, is the roof.
  const Roof roof = binding_roof(r);
  EXPECT_EQ(roof.which, "tensor bf16");
  EXPECT_FALSE(roof.measured);
  EXPECT_DOUBLE_EQ(pct_of_roof(r), flop / seconds / (540672.0 * 1575366028.18) * 100.0);
  EXPECT_NEAR(pct_of_roof(r), 93.3, 0.05);
}

TEST(Table, TriadSitsOnTheDramRoof) {
  const Row r = fixture_rows("h200-triad.raw.csv", "triad")[0];
  const double flop = 2.0 * (1u << 28), dram = 3208256768.0;
  const Roof roof = binding_roof(r);
  EXPECT_EQ(roof.which, "dram");
  EXPECT_DOUBLE_EQ(roof.flop_per_s, flop / dram * 1504.0 * 3199394658.27);
  // 686 GFLOP/s against 805 GFLOP/s
  EXPECT_NEAR(pct_of_roof(r), 85.22, 0.01);
}

TEST(Table, CalibrationCeilingsArePercentOfTheCounterPeakAtTheCalibrationsClock) {
  const MeasuredCeilings c = ceilings_from_calibration_json(read_file(kCalibration), "calibration-full.json");
  ASSERT_TRUE(c.found);
  // From the file: FP32 98.81067800201556% at 1979.9134285816801 MHz (ffma 132/132 SMs), Tensor
  // 99.95083345371698% at 1753.559571464631 MHz, FP64 98.00768074486888% at 1978.9241190189507 MHz,
  // STREAM triad 4452551862360.51 B/s; the contraction sweep found no cache rate (all spilled), so L2
  // is the re-read sweep's transition rate, 8180491248184.528 B/s.
  ASSERT_TRUE(c.fp32_pct && c.tensor_pct && c.fp64_pct && c.dram_bytes_per_s);
  EXPECT_DOUBLE_EQ(*c.fp32_pct, 98.81067800201556);
  EXPECT_DOUBLE_EQ(c.fp32_mhz, 1979.9134285816801);
  EXPECT_DOUBLE_EQ(c.tensor_mhz, 1753.559571464631);
  EXPECT_DOUBLE_EQ(*c.dram_bytes_per_s, 4452551862360.51);
  ASSERT_TRUE(c.l2_bytes_per_s.has_value());
  EXPECT_DOUBLE_EQ(*c.l2_bytes_per_s, 8180491248184.528);

  std::vector<Row> rows = {fixture_rows("h200-gemm.raw.csv", "gemm")[3],
                           fixture_rows("h200-triad.raw.csv", "t")[0]};
  apply_ceilings(rows, c);
  EXPECT_DOUBLE_EQ(rows[0].measured_flop_per_s[index(Precision::tensor_bf16)],
                   0.9995083345371698 * 540672.0 * 1753.559571464631e6);  // 947.6 TFLOP/s
  EXPECT_DOUBLE_EQ(rows[0].measured_flop_per_s[index(Precision::fp32)],
                   0.9881067800201556 * 33792.0 * 1979.9134285816801e6);  // 66.1 TFLOP/s
  EXPECT_DOUBLE_EQ(rows[1].measured_bytes_per_s[index(Level::dram)], 4452551862360.51);
  EXPECT_TRUE(std::isnan(rows[1].measured_bytes_per_s[index(Level::l1)]));
  EXPECT_EQ(rows[1].calibration, "calibration-full.json");
  // The triad against STREAM: 0.1673 FLOP/B x 4.45 TB/s = 745 GFLOP/s, measured; it ran at 686 GFLOP/s.
  const Roof roof = binding_roof(rows[1]);
  EXPECT_TRUE(roof.measured);
  EXPECT_DOUBLE_EQ(roof.flop_per_s, 2.0 * (1u << 28) / 3208256768.0 * 4452551862360.51);
  EXPECT_NEAR(pct_of_roof(rows[1]), 92.10, 0.01);
}

TEST(Table, TheLookupFindsTheFileForThisGpuAndDriverOnly) {
  const MeasuredCeilings hit = find_measured_ceilings("NVIDIA H200", "580.159.04", kCalibration);
  EXPECT_TRUE(hit.found);
  const MeasuredCeilings other = find_measured_ceilings("NVIDIA A100-SXM4-80GB", "580.159.04", kCalibration);
  EXPECT_FALSE(other.found);
  EXPECT_NE(other.source.find("GPU model NVIDIA H200 vs NVIDIA A100-SXM4-80GB"), std::string::npos)
      << other.source;
}

Row row(const std::string& exe, const std::string& region, const std::string& kernel, double seconds,
        double fp32_flop, double dram_bytes, std::int64_t launch) {
  Row r;
  r.executable = exe;
  r.region = region;
  r.kernel = kernel;
  r.duration_s = seconds;
  r.launch = launch;
  r.sm_hz = 2e9;
  r.level_hz = {3e9, 1.5e9, 2e9};
  r.flop = {0, fp32_flop, 0, 0, 0, 0, 0, 0, 0};
  r.bytes = {dram_bytes, 2 * dram_bytes, 3 * dram_bytes};
  r.grid = "(1, 1, 1)";
  r.block = "(32, 1, 1)";
  return r;
}

TEST(Table, LaunchesOutsideEveryRegionAreDroppedUnlessTheExecutableHasNone) {
  std::vector<std::string> warnings;
  const auto kept = filter_regions({row("train", "forward", "a", 1, 1, 1, 0),
                                    row("train", "", "init", 1, 1, 1, 1), row("bench", "", "k", 1, 1, 1, 0)},
                                   std::nullopt, warnings);
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept[0].kernel, "a");
  EXPECT_EQ(kept[1].executable, "bench");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].rfind("bench: no launch is inside an NVTX region", 0), 0u) << warnings[0];
}

TEST(Table, RegionRegexKeepsMatchingRegions) {
  std::vector<std::string> warnings;
  const auto kept =
      filter_regions({row("t", "forward", "a", 1, 1, 1, 0), row("t", "backward", "b", 1, 1, 1, 1),
                      row("t", "optimizer", "c", 1, 1, 1, 2)},
                     std::regex("ward$"), warnings);
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept[1].region, "backward");
  EXPECT_TRUE(warnings.empty());
}

TEST(Table, KernelRegexKeepsMatchingKernels) {
  const auto kept = filter_kernels({row("t", "", "ffma_kernel(FfmaArgs)", 1, 1, 1, 0),
                                    row("t", "", "l2_read_kernel(const uint4 *)", 1, 1, 1, 1)},
                                   std::regex("ffma|dfma"));
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].launch, 0);
}

TEST(Table, SumAddsWorkAndTimePerExecutableAndRegionAndRecomputesIntensity) {
  // forward: kernel a twice (1 s, 10 FLOP, 5 B each; the second at 1 GHz), kernel b once (1.5 s, 4 FLOP, 1 B)
  Row a2 = row("t", "forward", "a", 1, 10, 5, 3);
  a2.sm_hz = 1e9;
  const std::vector<Row> rows = {row("t", "forward", "a", 1, 10, 5, 1),
                                 row("t", "forward", "b", 1.5, 4, 1, 2), a2,
                                 row("t", "backward", "c", 4, 8, 2, 4)};
  const auto sum = aggregate(rows, Aggregate::sum);
  ASSERT_EQ(sum.size(), 2u);
  const Row& f = sum[0];
  EXPECT_EQ(f.region, "forward");
  EXPECT_EQ(f.launches, 3);
  EXPECT_EQ(f.launch, 1);
  EXPECT_DOUBLE_EQ(f.duration_s, 3.5);
  EXPECT_DOUBLE_EQ(f.flop[index(Precision::fp32)], 24.0);
  EXPECT_DOUBLE_EQ(f.bytes[index(Level::dram)], 11.0);
  EXPECT_DOUBLE_EQ(intensity(f, Level::dram), 24.0 / 11.0);
  EXPECT_DOUBLE_EQ(performance(f), 24.0 / 3.5);
  // time-weighted SM clock: (2 GHz x 1 s + 2 GHz x 1.5 s + 1 GHz x 1 s) / 3.5 s
  EXPECT_NEAR(f.sm_hz, 6e9 / 3.5, 1e-3);
  EXPECT_EQ(f.kernel, "2 kernels; most time: a");
  EXPECT_EQ(f.grid, "(1, 1, 1)");

  const auto dom = aggregate(rows, Aggregate::dominant);
  ASSERT_EQ(dom.size(), 2u);
  // a: 2 s over its two launches, b: 1.5 s
  EXPECT_EQ(dom[0].kernel, "a");
  EXPECT_EQ(dom[0].launches, 2);
  EXPECT_DOUBLE_EQ(dom[0].flop[index(Precision::fp32)], 20.0);
  EXPECT_EQ(dom[1].kernel, "c");
  EXPECT_EQ(aggregate(rows, Aggregate::none).size(), 4u);
}

// docs/roofline.md#dram-bytes-and-the-cache-flush
TEST(Table, APlotMixingCacheStatesNamesEachKindWithItsRowsAndBackends) {
  auto with = [](const char* profiler, const char* caches, std::int64_t launch) {
    Row r = row("t", "forward", "k", 1, 1, 1, launch);
    r.profiler = *profiler_from_name(profiler);
    r.caches = caches;
    return r;
  };
  // One kind, with rows whose state was not recorded (older tables): nothing to say.
  EXPECT_FALSE(mixed_caches_warning({with("ncu", "flushed", 0), with("ncu", "", 1)}).has_value());
  EXPECT_FALSE(
      mixed_caches_warning({with("range", "program", 0), with("sampled", "program", 1)}).has_value());
  // 2 flushed (ncu), 1 unflushed (ncu), 2 program (range, sampled), 1 not recorded.
  const auto w =
      mixed_caches_warning({with("ncu", "flushed", 0), with("ncu", "flushed", 1), with("ncu", "unflushed", 2),
                            with("sampled", "program", 3), with("range", "program", 4), with("ncu", "", 5)});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(
      w->rfind("the rows were measured from caches in different states: 2 row(s) (ncu) from caches "
               "flushed before every kernel (ncu's default); 1 row(s) (ncu) from the caches ncu's "
               "previous replay pass left; 2 row(s) (range, sampled) from the caches the program left. ",
               0),
      0u)
      << *w;
  // Two kinds are enough.
  EXPECT_TRUE(mixed_caches_warning({with("ncu", "unflushed", 0), with("range", "program", 1)}).has_value());
  // Summed over a group measured both ways, a row has no single state.
  const auto sum = aggregate({with("ncu", "flushed", 0), with("ncu", "unflushed", 1)}, Aggregate::sum);
  ASSERT_EQ(sum.size(), 1u);
  EXPECT_EQ(sum[0].caches, "");
  EXPECT_EQ(aggregate({with("ncu", "flushed", 0), with("ncu", "flushed", 1)}, Aggregate::sum)[0].caches,
            "flushed");
}

TEST(Table, AggregateNamesAreParsed) {
  EXPECT_EQ(parse_aggregate("dominant"), Aggregate::dominant);
  EXPECT_THROW(parse_aggregate("mean"), core::UsageError);
}

TEST(Table, ConcatenationKeepsTheFirstRowOfEachExecutableAndLaunch) {
  const auto out = concatenate({{row("x", "", "a", 1, 1, 1, 0), row("x", "", "b", 1, 1, 1, 1)},
                                {row("x", "", "a-again", 1, 1, 1, 0), row("y", "", "a", 1, 1, 1, 0)}});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].kernel, "a");
  EXPECT_EQ(out[2].executable, "y");
}

TEST(Table, ARowWithoutFlopsHasNoRoof) {
  Row r = row("x", "", "memcpy-like", 1, 0, 100, 0);
  EXPECT_FALSE(dominant_precision(r).has_value());
  EXPECT_TRUE(std::isnan(binding_roof(r).flop_per_s));
}

// Twelve launches of a ResNet-50 training step (batch 32) profiled on the H200 by `diescope roofline
// profile`: the first four of forward (push/pop on the main thread), of backward (a start/end range:
// autograd launches them from its own thread) and of the optimizer.
TEST(Table, ResNetLaunchesFallInTheirRegionsAndAddUp) {
  const auto rows = fixture_rows("h200-resnet50.raw.csv", "resnet50_steps.py");
  ASSERT_EQ(rows.size(), 12u);
  for (std::size_t i = 0; i < 12; ++i)
    EXPECT_EQ(rows[i].region, i < 4 ? "forward" : i < 8 ? "backward" : "optimizer") << i;
  // The first convolution, 7x7x3 -> 64 at stride 2 over 224x224: 2 N P Q K (C R S) with the
  // reduction C R S = 147 padded to 160 by the implicit GEMM.
  const Row& conv = rows[2];
  EXPECT_EQ(conv.kernel.rfind("sm80_xmma_fprop_implicit_gemm", 0), 0u) << conv.kernel;
  EXPECT_DOUBLE_EQ(conv.flop[index(Precision::tensor_tf32)], 2.0 * 32 * 112 * 112 * 64 * 160);
  EXPECT_EQ(dominant_precision(conv), Precision::tensor_tf32);

  std::vector<std::string> warnings;
  const auto sum = aggregate(filter_regions(rows, std::nullopt, warnings), Aggregate::sum);
  EXPECT_TRUE(warnings.empty());
  ASSERT_EQ(sum.size(), 3u);
  EXPECT_EQ(sum[0].region, "forward");
  EXPECT_EQ(sum[0].launches, 4);
  EXPECT_DOUBLE_EQ(sum[0].duration_s, (66496.0 + 2912 + 188704 + 52800) * 1e-9);
  EXPECT_DOUBLE_EQ(sum[0].bytes[index(Level::dram)], 21431552.0 + 47104 + 97869312 + 183528960);
  EXPECT_DOUBLE_EQ(sum[0].flop[index(Precision::tensor_tf32)], 2.0 * 32 * 112 * 112 * 64 * 160);
  EXPECT_EQ(sum[1].launches, 4);
  EXPECT_EQ(sum[2].region, "optimizer");
  // The forward region's kernel with the most time is the convolution (188.7 us of 310.9).
  const auto dom = aggregate(rows, Aggregate::dominant);
  EXPECT_EQ(dom[0].kernel, conv.kernel);
}

}  // namespace
}  // namespace diescope::roofline
