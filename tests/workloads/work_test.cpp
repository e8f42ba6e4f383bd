#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "diescope/workloads/work.hpp"

using namespace diescope::workloads;

TEST(WorkloadWork, Fp32LanesPerArchitecture) {
  EXPECT_EQ(fp32_lanes_per_sm(9, 0).value, 128.0);   // Hopper
  EXPECT_EQ(fp32_lanes_per_sm(8, 9).value, 128.0);   // Ada
  EXPECT_EQ(fp32_lanes_per_sm(8, 6).value, 128.0);   // GA10x
  EXPECT_EQ(fp32_lanes_per_sm(8, 0).value, 64.0);    // GA100
  EXPECT_EQ(fp32_lanes_per_sm(7, 5).value, 64.0);    // Turing
  EXPECT_EQ(fp32_lanes_per_sm(12, 0).value, 128.0);  // Blackwell consumer
  const Rate unknown = fp32_lanes_per_sm(6, 1);
  EXPECT_TRUE(std::isnan(unknown.value));
  EXPECT_NE(unknown.reason.find("6.1"), std::string::npos);
  // 128 lanes / 32 threads per warp = 4 FFMA warp instructions per SM per cycle.
  EXPECT_EQ(ffma_warp_instructions_per_sm_per_cycle(9, 0).value, 4.0);
  EXPECT_EQ(ffma_warp_instructions_per_sm_per_cycle(7, 5).value, 2.0);
  EXPECT_TRUE(std::isnan(ffma_warp_instructions_per_sm_per_cycle(6, 1).value));
}

TEST(WorkloadWork, FfmaCounts) {
  // 1000 trips x 16 unrolled x 16 accumulators = 256000 FFMAs per thread.
  EXPECT_EQ(ffma_per_thread(1000, 16, 16), 256000u);
  // 132 SMs x 1024 threads = 135168 threads = 4224 warps; x 256000 x 10 launches = 10,813,440,000.
  EXPECT_EQ(ffma_warp_instructions(256000, 132 * 1024, 10), 10813440000u);
  // 2 FLOP x 256000 x 135168 x 10 = 692,060,160,000.
  EXPECT_DOUBLE_EQ(ffma_flops(256000, 132 * 1024, 10), 692060160000.0);
  EXPECT_THROW(ffma_warp_instructions(1, 100, 1), std::invalid_argument);
  EXPECT_THROW(ffma_per_thread(std::uint64_t{1} << 40, std::uint64_t{1} << 20, 64), std::overflow_error);
}

TEST(WorkloadWork, ExpectedFmaPipePercent) {
  // The H200 probe: 56.7 TFLOP/s at 1980 MHz on 132 SMs. Over one second that is
  // 56.7e12 / 2 / 32 = 8.859375e11 warp instructions against 132 x 4 x 1.98e9 = 1.04544e12 slots:
  // 84.743%.
  EXPECT_NEAR(expected_fma_pipe_pct(8.859375e11, 132, 4, 1.98e9, 1.0), 84.743027, 1e-5);
  // 66 SMs each issuing 4 per cycle for 2 s at 1980 MHz: 66 x 4 x 1.98e9 x 2 = 1.04544e12 instructions,
  // which is 100% of the loaded SMs and 50% of the 132-SM device.
  EXPECT_NEAR(expected_fma_pipe_pct(1.04544e12, 66, 4, 1.98e9, 2.0), 100.0, 1e-9);
  EXPECT_NEAR(expected_fma_pipe_pct(1.04544e12, 132, 4, 1.98e9, 2.0), 50.0, 1e-9);
  EXPECT_TRUE(std::isnan(expected_fma_pipe_pct(1e9, 132, 4, 0.0, 1.0)));
  EXPECT_TRUE(std::isnan(expected_fma_pipe_pct(1e9, 132, std::nan(""), 1.98e9, 1.0)));
  // FP32 peak: 132 x 128 x 2 x 1.98e9 = 66.90816 TFLOP/s.
  EXPECT_DOUBLE_EQ(fp32_peak_flops(132, 128, 1.98e9), 66908160000000.0);
}

TEST(WorkloadWork, StreamBytes) {
  // copy and scale read one vector and write one, add and triad read two and write one:
  // copy 2 x 2^28 x 4 = 2^31; triad 3 x 2^28 x 4 = 3 x 2^30; copy of 1000 doubles 2 x 1000 x 8.
  EXPECT_EQ(stream_bytes(StreamKernel::copy, std::uint64_t{1} << 28), 2147483648u);
  EXPECT_EQ(stream_bytes(StreamKernel::scale, std::uint64_t{1} << 28), 2147483648u);
  EXPECT_EQ(stream_bytes(StreamKernel::add, std::uint64_t{1} << 28), 3221225472u);
  EXPECT_EQ(stream_bytes(StreamKernel::triad, std::uint64_t{1} << 28, 4), 3221225472u);
  EXPECT_EQ(stream_bytes(StreamKernel::copy, 1000, 8), 16000u);
  EXPECT_THROW(stream_bytes(StreamKernel::triad, std::uint64_t{1} << 62, 4), std::overflow_error);
  EXPECT_EQ(stream_kernel_name(StreamKernel::scale), "scale");
}

TEST(WorkloadWork, GemmFlopsAndTensorRate) {
  // 2 x 8192^3 = 2 x 2^39.
  EXPECT_DOUBLE_EQ(gemm_flops(8192, 8192, 8192), 1099511627776.0);
  EXPECT_DOUBLE_EQ(gemm_flops(4096, 2048, 1024), 2.0 * 4096 * 2048 * 1024);
  // GH100: 132 SMs x 4096 x 1.83 GHz = 989.43 TFLOP/s, NVIDIA's dense bf16 figure.
  EXPECT_NEAR(bf16_dense_flop_per_sm_per_cycle(9, 0).value * 132 * 1.83e9, 989.43e12, 0.01e12);
  // GA100: 108 SMs x 2048 x 1.41 GHz = 311.9 TFLOP/s.
  EXPECT_NEAR(bf16_dense_flop_per_sm_per_cycle(8, 0).value * 108 * 1.41e9, 311.87e12, 0.01e12);
  const Rate ada = bf16_dense_flop_per_sm_per_cycle(8, 9);
  EXPECT_TRUE(std::isnan(ada.value));
  EXPECT_FALSE(ada.reason.empty());
}

TEST(WorkloadWork, ClockFromCyclesAndNanoseconds) {
  // 1.98e9 cycles in 1e9 ns: 1.98 cycles per ns = 1980 MHz.
  EXPECT_DOUBLE_EQ(clock_mhz(1.98e9, 1e9), 1980.0);
  EXPECT_TRUE(std::isnan(clock_mhz(100, 0)));
}

TEST(WorkloadWork, ClockBetweenStamps) {
  // SM 0: 1,980,000 cycles over 1,000,000 ns = 1980 MHz; SM 1: 1,900,000 over 1,000,000 = 1900 MHz.
  // SM 2 is stamped only once and SM 3's stamps run backwards: both are left out. Mean 1940 MHz.
  const std::vector<SmStamp> first = {{0, 1000, 0}, {1, 5000, 10}, {3, 100, 50}};
  const std::vector<SmStamp> last = {{0, 1981000, 1000000}, {1, 1905000, 1000010}, {2, 7, 9}, {3, 200, 40}};
  const Rate mhz = clock_mhz_between(first, last);
  EXPECT_DOUBLE_EQ(mhz.value, 1940.0);
  EXPECT_TRUE(mhz.reason.empty());
  const Rate none = clock_mhz_between({}, last);
  EXPECT_TRUE(std::isnan(none.value));
  EXPECT_FALSE(none.reason.empty());
}

TEST(WorkloadWork, SharedMemoryThatPinsOneBlockPerSm) {
  // H200: 233472 bytes per SM, 1024 reserved per block, 232448 opt-in per block.
  // 233472 / 2 - 1024 + 1 = 115713; two blocks would need 2 x (115713 + 1024) = 233474 > 233472.
  const std::uint64_t h200 = shared_bytes_for_one_block_per_sm(233472, 1024, 232448);
  EXPECT_EQ(h200, 115713u);
  EXPECT_GT(2 * (h200 + 1024), 233472u);
  EXPECT_LE(h200 + 1024, 233472u);
  // Turing: 65536 per SM, none reserved: 32769.
  EXPECT_EQ(shared_bytes_for_one_block_per_sm(65536, 0, 65536), 32769u);
  // A per-block limit of 48 KiB cannot reach past half of 228 KiB.
  EXPECT_EQ(shared_bytes_for_one_block_per_sm(233472, 1024, 49152), 0u);
}

TEST(WorkloadWork, LaunchesAndOnFraction) {
  EXPECT_EQ(launches_to_fill(5.0, 0.05), 100u);  // 5 / 0.05 = 100 exactly
  EXPECT_EQ(launches_to_fill(5.0, 0.03), 167u);  // 166.67 rounds up
  EXPECT_EQ(launches_to_fill(0.01, 1.0), 1u);
  EXPECT_EQ(launches_to_fill(5.0, 0.0), 1u);
  EXPECT_DOUBLE_EQ(on_fraction(2.0, 4.0), 0.5);
  EXPECT_TRUE(std::isnan(on_fraction(1.0, 0.0)));
}
