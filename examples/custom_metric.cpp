// Custom metrics you can copy: a SAXPY kernel (in kernels.cu) whose block size is an axis. Each sample pushes
// what the launch looked like (blocks per SM from the occupancy calculator, as integers, and the theoretical
// occupancy in its own section) beside the harness's own timing and bandwidth.
//
//   ./custom_metric --csv saxpy.csv
#include <cuda_runtime.h>

#include <memory>

#include "diescope/harness/cuda.hpp"
#include "diescope/harness/main.hpp"
#include "example_cuda.hpp"
#include "kernels.hpp"

using namespace diescope::harness;

namespace {

void check(cudaError_t e, const char* what) {
  examples::check_cuda("custom_metric", e, what);
}

constexpr int kElements = 1 << 26;  // 256 MiB per array

struct Arrays {
  float* x = nullptr;
  float* y = nullptr;
  cudaDeviceProp prop{};
  Arrays() {
    check(cudaMalloc(&x, kElements * sizeof(float)), "cudaMalloc");
    check(cudaMalloc(&y, kElements * sizeof(float)), "cudaMalloc");
    check(cudaMemset(x, 0, kElements * sizeof(float)), "cudaMemset");
    check(cudaMemset(y, 0, kElements * sizeof(float)), "cudaMemset");
    check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  }
  ~Arrays() {
    cudaFree(x);
    cudaFree(y);
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (!examples::have_gpu("custom_metric")) return 4;
  auto arrays = std::make_shared<Arrays>();
  Benchmark saxpy_bench("saxpy", [arrays](State& state) {
    const int block = static_cast<int>(state.get_int("block"));
    const int grid = (kElements + block - 1) / block;
    for (std::uint64_t i = 0; i < state.iterations(); ++i)
      examples::launch_saxpy(2.0f, arrays->x, arrays->y, kElements, block, nullptr);

    // What the launch looked like: the same every sample, so mean = min = max; an Integer metric
    // prints without decimals.
    const int blocks_per_sm = examples::saxpy_blocks_per_sm(block);
    state.push_metric(MetricValue::integer("blocks_per_sm", blocks_per_sm, "blocks")
                          .with_display_name("resident blocks/SM"));
    state.push_metric(MetricValue::integer("grid", grid, "blocks").with_display_name("grid size"));
    const double occupancy = 100.0 * blocks_per_sm * block / arrays->prop.maxThreadsPerMultiProcessor;
    state.push_metric(MetricValue("theoretical_occupancy", occupancy, "%").with_section("launch"));
  });
  saxpy_bench.domain(MeasurementDomain::gpu)
      .backend(cuda_event_backend())
      .clock_monitor(gpu_clock_monitor())
      .int_axis("block", {64, 128, 256, 1024})
      .bytes_per_iteration(3.0 * kElements * sizeof(float))  // read x and y, write y
      .flops_per_iteration(2.0 * kElements)
      .time_unit(TimeUnit::microsecond);
  return bench_main(argc, argv, {saxpy_bench});
}
