// What the GPU domain changes (docs/harness.md#measurement-domains), on one FMA kernel timed twice:
//
//   fma_as_cpu  the CPU domain with the default backend (host perf counters): the host time around
//               launch + cudaStreamSynchronize, and host-PMU findings about a thread that only waited
//   fma_as_gpu  the GPU domain with CUDA events on the kernel's stream: the device's time, no host-PMU
//               findings, and host_overhead_ms beside it
//
// Both run the same work; the two tables show what each measurement describes. Run on a GPU:
//   ./gpu_domain
#include <cuda_runtime.h>

#include <memory>

#include "diescope/harness/cuda.hpp"
#include "diescope/harness/group.hpp"
#include "diescope/harness/main.hpp"
#include "example_cuda.hpp"
#include "kernels.hpp"

using namespace diescope::harness;

namespace {

constexpr int kThreads = 256;
constexpr int kIterations = 4096;  // 16 x 4096 FLOP per thread

struct Gpu {
  cudaStream_t stream = nullptr;
  float* out = nullptr;
  int blocks = 0;
  Gpu() {
    cudaStreamCreate(&stream);
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    blocks = sms * 8;
    cudaMalloc(&out, static_cast<std::size_t>(blocks) * kThreads * sizeof(float));
  }
  ~Gpu() {
    cudaFree(out);
    cudaStreamDestroy(stream);
  }
  Gpu(const Gpu&) = delete;
  Gpu& operator=(const Gpu&) = delete;
  double flops() const { return 16.0 * kIterations * static_cast<double>(blocks) * kThreads; }
};

}  // namespace

int main(int argc, char** argv) {
  if (!examples::have_gpu("gpu_domain")) return 4;
  // Both benchmarks share one context (stream, buffer); each has its own domain and backend.
  Group<Gpu> cpu_view("fma_as_cpu", [] { return std::make_unique<Gpu>(); });
  const double flops = cpu_view.context().flops();
  cpu_view.domain(MeasurementDomain::cpu);  // the default backend: host perf counters
  cpu_view
      .add("sync",
           [](Gpu& g, State& state) {
             for (std::uint64_t i = 0; i < state.iterations(); ++i)
               examples::launch_fma(g.out, g.blocks, kThreads, kIterations, g.stream);
             cudaStreamSynchronize(g.stream);  // the host waits: its counters describe the wait
           })
      .flops_per_iteration(flops)
      .time_unit(TimeUnit::microsecond);

  Group<Gpu> gpu_view("fma_as_gpu", [] { return std::make_unique<Gpu>(); });
  gpu_view.domain(MeasurementDomain::gpu).backend([](Gpu& g) { return cuda_event_backend(g.stream)(); });
  gpu_view
      .add("events",
           [](Gpu& g, State& state) {
             for (std::uint64_t i = 0; i < state.iterations(); ++i)
               examples::launch_fma(g.out, g.blocks, kThreads, kIterations, g.stream);
           })
      .flops_per_iteration(flops)
      .clock_monitor(gpu_clock_monitor())
      .time_unit(TimeUnit::microsecond);

  std::vector<Benchmark> all = cpu_view.benchmarks();
  for (const Benchmark& b : gpu_view.benchmarks()) all.push_back(b);
  return bench_main(argc, argv, all);
}
