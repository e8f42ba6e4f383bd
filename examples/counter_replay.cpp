// A counter replay pass you can copy: after the timed samples, the work is replayed under CUPTI's
// range profiler (once per hardware pass) and the SM, L2, DRAM and tensor-pipe percent of peak join
// the metric table, marked "diagnostic pass, not timed". Two kernels show the difference: a copy
// (DRAM-bound) and a chain of FMAs (SM-bound). Each kernel is also run without the pass, so the
// timing with and without it can be compared. The kernels are in kernels.cu.
//
// Counters may be restricted to administrators; then the pass reports gpu_counter_error and the
// timing still runs.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "diescope/bench/cuda.hpp"
#include "diescope/bench/cupti.hpp"
#include "diescope/bench/main.hpp"
#include "kernels.hpp"

using namespace diescope::bench;

namespace {

void check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "counter_replay: %s failed: %s\n", what, cudaGetErrorString(e));
  std::exit(1);
}

constexpr std::size_t kCopyBytes = std::size_t{1} << 30;
constexpr int kFmaIterations = 20000;

struct Device {
  void* src = nullptr;
  void* dst = nullptr;
  float* out = nullptr;
  int sms = 0;
  Device() {
    check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "reading the SM count");
    check(cudaMalloc(&src, kCopyBytes), "cudaMalloc");
    check(cudaMalloc(&dst, kCopyBytes), "cudaMalloc");
    check(cudaMalloc(&out, static_cast<std::size_t>(sms) * 8 * 1024 * sizeof(float)), "cudaMalloc");
    check(cudaMemset(src, 1, kCopyBytes), "cudaMemset");
  }
  ~Device() {
    cudaFree(src);
    cudaFree(dst);
    cudaFree(out);
  }
  void copy() const { examples::launch_copy(src, dst, kCopyBytes, sms * 8, nullptr); }
  void fma() const { examples::launch_fma(out, sms * 8, 1024, kFmaIterations, nullptr); }
  double fma_flops() const { return 2.0 * 8 * kFmaIterations * static_cast<double>(sms) * 8 * 1024; }
};

Benchmark timed(const char* name, std::function<void()> work) {
  Benchmark b(name, [work](State& state) {
    for (std::uint64_t i = 0; i < state.iterations(); ++i) work();
  });
  b.domain(MeasurementDomain::Gpu)
      .timing(TimingMode::Cold)
      .backend(cuda_event_backend())
      .cache_flusher(cuda_l2_flusher())
      .clock_monitor(gpu_clock_monitor())
      .time_unit(TimeUnit::Microsecond);
  return b;
}

}  // namespace

int main(int argc, char** argv) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "counter_replay: error: no CUDA GPU\n  fix: run it on a machine with an NVIDIA GPU and driver\n");
    return 4;
  }
  auto device = std::make_shared<Device>();
  auto copy = [device] { device->copy(); };
  auto fma = [device] { device->fma(); };

  std::vector<Benchmark> benchmarks;
  benchmarks.push_back(timed("copy", copy).bytes_per_iteration(2.0 * kCopyBytes));
  benchmarks.push_back(timed("copy_with_counters", copy)
                           .bytes_per_iteration(2.0 * kCopyBytes)
                           .diagnostic_pass(counter_replay_pass([copy](State&) { copy(); }), 3));
  benchmarks.push_back(timed("fma", fma).flops_per_iteration(device->fma_flops()));
  benchmarks.push_back(timed("fma_with_counters", fma)
                           .flops_per_iteration(device->fma_flops())
                           .diagnostic_pass(counter_replay_pass([fma](State&) { fma(); }), 3));
  return bench_main(argc, argv, benchmarks);
}
