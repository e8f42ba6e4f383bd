// A memory-bound kernel you can copy (the kernel is in kernels.cu): a device-to-device copy, timed with CUDA
// events, cold (the L2 flushed before every sample) and batch (back-to-back launches), beside cudaMemcpyAsync
// moving the same bytes. Bandwidth counts bytes read plus bytes written.
//
//   ./memory_bound                      all sizes, both timings, both copies
//   ./memory_bound --filter cold --json cold.json
#include <cuda_runtime.h>

#include <memory>
#include <vector>

#include "diescope/harness/cuda.hpp"
#include "diescope/harness/main.hpp"
#include "example_cuda.hpp"
#include "kernels.hpp"

using namespace diescope::harness;

namespace {

void check(cudaError_t e, const char* what) {
  examples::check_cuda("memory_bound", e, what);
}

constexpr std::int64_t kMiB = 1 << 20;

struct Buffers {
  cudaStream_t stream = nullptr;
  void* src = nullptr;
  void* dst = nullptr;
  int blocks = 0;
  explicit Buffers(std::size_t bytes) {
    check(cudaStreamCreate(&stream), "cudaStreamCreate");
    check(cudaMalloc(&src, bytes), "cudaMalloc");
    check(cudaMalloc(&dst, bytes), "cudaMalloc");
    check(cudaMemset(src, 1, bytes), "cudaMemset");
    int sms = 0;
    check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "reading the SM count");
    blocks = sms * 8;  // enough resident warps to keep every memory channel busy
  }
  ~Buffers() {
    cudaFree(src);
    cudaFree(dst);
    cudaStreamDestroy(stream);
  }
};

Benchmark copy_benchmark(const char* name, const std::shared_ptr<Buffers>& b, TimingMode timing,
                         bool use_memcpy) {
  Benchmark bench(name, [b, use_memcpy](State& state) {
    const auto bytes = static_cast<std::size_t>(state.get_int("bytes"));
    for (std::uint64_t i = 0; i < state.iterations(); ++i) {
      if (use_memcpy) {
        cudaMemcpyAsync(b->dst, b->src, bytes, cudaMemcpyDeviceToDevice, b->stream);
      } else {
        examples::launch_copy(b->src, b->dst, bytes, b->blocks, b->stream);
      }
    }
  });
  bench.domain(MeasurementDomain::gpu)
      .timing(timing)
      .backend(cuda_event_backend(b->stream))  // events on the stream the work runs on
      .clock_monitor(gpu_clock_monitor())
      .int_axis("bytes", {8 * kMiB, 64 * kMiB, 1024 * kMiB})
      .bytes_per_iteration([](const AxisPoint& p) { return 2.0 * static_cast<double>(p.get_int("bytes")); })
      .time_unit(TimeUnit::microsecond);
  if (timing == TimingMode::cold) bench.cache_flusher(cuda_l2_flusher(b->stream));
  return bench;
}

}  // namespace

int main(int argc, char** argv) {
  if (!examples::have_gpu("memory_bound")) return 4;
  auto buffers = std::make_shared<Buffers>(1024 * kMiB);
  return bench_main(argc, argv,
                    {copy_benchmark("copy_kernel_cold", buffers, TimingMode::cold, false),
                     copy_benchmark("copy_kernel_batch", buffers, TimingMode::batch, false),
                     copy_benchmark("cudaMemcpy_cold", buffers, TimingMode::cold, true),
                     copy_benchmark("cudaMemcpy_batch", buffers, TimingMode::batch, true)});
}
