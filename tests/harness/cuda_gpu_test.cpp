// The CUDA side on a GPU (label gpu): event timing, cold-mode L2 flushing and the counter replay pass
// on a device-to-device copy whose bytes are known.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include "copy_kernel.hpp"
#include "diescope/harness/cuda.hpp"
#include "diescope/harness/cupti.hpp"
#include "diescope/harness/runner.hpp"

namespace diescope::harness {
namespace {

bool gpu_present() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

struct Buffers {
  void* src = nullptr;
  void* dst = nullptr;
  explicit Buffers(std::size_t bytes) {
    cudaMalloc(&src, bytes);
    cudaMalloc(&dst, bytes);
    cudaMemset(src, 1, bytes);
  }
  ~Buffers() {
    cudaFree(src);
    cudaFree(dst);
  }
};

constexpr std::size_t kMiB = std::size_t{1} << 20;

RunResult copy_run(Buffers& buffers, std::size_t bytes, TimingMode mode) {
  Benchmark b("copy", [&buffers, bytes](State& state) {
    for (std::uint64_t i = 0; i < state.iterations(); ++i)
      testing::launch_copy(buffers.src, buffers.dst, bytes, nullptr);
  });
  b.domain(MeasurementDomain::gpu)
      .timing(mode)
      .backend(cuda_event_backend())
      .bytes_per_iteration(2.0 * static_cast<double>(bytes));
  if (mode == TimingMode::cold) b.cache_flusher(cuda_l2_flusher());
  b.stopping({.min_samples = 20, .min_time_s = 0.05, .max_noise = 0.02, .timeout_s = 10});
  return run_point(b, AxisPoint{});
}

TEST(CudaGpu, EventTimeIsTheDurationAndScalesWithBytes) {
  if (!gpu_present()) GTEST_SKIP() << "no CUDA GPU on this machine";
  Buffers buffers(512 * kMiB);
  const RunResult small = copy_run(buffers, 256 * kMiB, TimingMode::batch);
  const RunResult large = copy_run(buffers, 512 * kMiB, TimingMode::batch);
  ASSERT_TRUE(small.ok() && large.ok()) << small.error.value_or("") << large.error.value_or("");
  EXPECT_EQ(small.backend, "cuda-events");
  // Twice the bytes of a memory-bound copy take about twice as long (both far above launch cost).
  const double ratio = large.time.median / small.time.median;
  EXPECT_GT(ratio, 1.6);
  EXPECT_LT(ratio, 2.4);
  const MetricSummary* device = small.find_metric("backend", "cuda_event_ms");
  ASSERT_TRUE(device);
  // cuda_event_ms is per sample; the duration is per iteration.
  EXPECT_NEAR(device->stats.median / 1e3 / static_cast<double>(small.iterations_per_sample),
              small.time.median, 0.05 * small.time.median);
}

TEST(CudaGpu, ColdSamplesFlushTwiceTheL2) {
  if (!gpu_present()) GTEST_SKIP() << "no CUDA GPU on this machine";
  CudaL2Flusher flusher;
  int device = 0, l2 = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device);
  EXPECT_EQ(flusher.buffer_bytes(), 2 * static_cast<std::size_t>(l2));
  // A copy that fits in L2 is slower cold than warm.
  Buffers buffers(8 * kMiB);
  const RunResult warm = copy_run(buffers, 8 * kMiB, TimingMode::batch);
  const RunResult cold = copy_run(buffers, 8 * kMiB, TimingMode::cold);
  ASSERT_TRUE(warm.ok() && cold.ok());
  EXPECT_GT(cold.time.median, warm.time.median);
}

TEST(CudaGpu, CounterReplayPassSeesACopyAsMemoryBound) {
  if (!gpu_present()) GTEST_SKIP() << "no CUDA GPU on this machine";
  Buffers buffers(1024 * kMiB);
  Benchmark b("copy", [&buffers](State& state) {
    for (std::uint64_t i = 0; i < state.iterations(); ++i)
      testing::launch_copy(buffers.src, buffers.dst, 1024 * kMiB, nullptr);
  });
  b.domain(MeasurementDomain::gpu)
      .timing(TimingMode::cold)
      .backend(cuda_event_backend())
      .cache_flusher(cuda_l2_flusher())
      .stopping({.min_samples = 5, .min_time_s = 0, .max_noise = 0.05, .timeout_s = 10})
      .diagnostic_pass(counter_replay_pass(
          [&buffers](State&) { testing::launch_copy(buffers.src, buffers.dst, 1024 * kMiB, nullptr); }));
  const RunResult r = run_point(b, AxisPoint{});
  ASSERT_TRUE(r.ok());
  for (const std::string& line : r.visible_diagnostics()) std::printf("diagnostic: %s\n", line.c_str());
  const MetricSummary* dram = r.find_metric("gpu_counters", "gpu_dram_peak_pct");
  if (!dram && r.find_metric("gpu_counters", "gpu_counter_error")) {
    GTEST_SKIP() << "GPU counters are not available to this user (see the diagnostic above)";
  }
  ASSERT_TRUE(dram);
  // A 1 GiB copy keeps DRAM busy: the H200 probe measured 82 % of peak for the same kind of kernel.
  EXPECT_GT(dram->stats.mean, 50.0);
  EXPECT_LE(dram->stats.mean, 100.5);
  const MetricSummary* tensor = r.find_metric("gpu_counters", "gpu_tensor_active_pct");
  ASSERT_TRUE(tensor);
  EXPECT_LT(tensor->stats.mean, 1.0);  // a copy issues no tensor instructions
}

}  // namespace
}  // namespace diescope::harness
