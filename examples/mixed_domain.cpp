// What the mixed domain changes (docs/harness.md#measurement-domains): a benchmark whose host does real
// work between kernels. Each iteration lays out a host buffer (a transpose), copies it to the device
// and runs a SAXPY on it, then waits:
//
//   layout_mixed        the mixed domain with host perf counters: host-PMU findings are shown, each
//                       prefixed [host], because the host's work is part of what is measured
//   layout_mixed_events the same work with CUDA events (device time): a device-timed backend
//                       suppresses host-PMU findings in every domain, mixed included
//
// Run on a GPU:
//   ./mixed_domain
#include <cuda_runtime.h>

#include <memory>
#include <vector>

#include "diescope/harness/cuda.hpp"
#include "diescope/harness/group.hpp"
#include "diescope/harness/main.hpp"
#include "example_cuda.hpp"
#include "kernels.hpp"

using namespace diescope::harness;

namespace {

constexpr int kSide = 1024;  // a 1024 x 1024 float tile: 4 MiB

struct Work {
  cudaStream_t stream = nullptr;
  std::vector<float> in = std::vector<float>(kSide * kSide, 1.0f);
  float* host = nullptr;  // pinned, so the copy is asynchronous
  float* x = nullptr;
  float* y = nullptr;
  Work() {
    cudaStreamCreate(&stream);
    cudaMallocHost(&host, sizeof(float) * kSide * kSide);
    cudaMalloc(&x, sizeof(float) * kSide * kSide);
    cudaMalloc(&y, sizeof(float) * kSide * kSide);
    cudaMemset(y, 0, sizeof(float) * kSide * kSide);
  }
  ~Work() {
    cudaFree(x);
    cudaFree(y);
    cudaFreeHost(host);
    cudaStreamDestroy(stream);
  }
  Work(const Work&) = delete;
  Work& operator=(const Work&) = delete;

  void iteration() {
    for (int i = 0; i < kSide; ++i)  // the host's share: a column-order transpose (cache-unfriendly)
      for (int j = 0; j < kSide; ++j) host[j * kSide + i] = in[i * kSide + j];
    cudaMemcpyAsync(x, host, sizeof(float) * kSide * kSide, cudaMemcpyHostToDevice, stream);
    examples::launch_saxpy(2.0f, x, y, kSide * kSide, 256, stream);
    cudaStreamSynchronize(stream);
  }
};

// The measured loop, the same under both backends: the iterations, and the tile in and out per iteration.
void add_layout(Group<Work>& group, const char* name) {
  group
      .add(name,
           [](Work& w, State& state) {
             for (std::uint64_t i = 0; i < state.iterations(); ++i) w.iteration();
           })
      .bytes_per_iteration(2.0 * sizeof(float) * kSide * kSide)
      .time_unit(TimeUnit::microsecond);
}

}  // namespace

int main(int argc, char** argv) {
  if (!examples::have_gpu("mixed_domain")) return 4;
  Group<Work> host_counted("layout_mixed", [] { return std::make_unique<Work>(); });
  host_counted.domain(MeasurementDomain::mixed);  // host perf counters, findings prefixed [host]
  add_layout(host_counted, "perf");

  Group<Work> device_timed("layout_mixed_events", [] { return std::make_unique<Work>(); });
  device_timed.domain(MeasurementDomain::mixed).backend([](Work& w) {
    return cuda_event_backend(w.stream)();
  });
  add_layout(device_timed, "events");

  std::vector<Benchmark> all = host_counted.benchmarks();
  for (const Benchmark& b : device_timed.benchmarks()) all.push_back(b);
  return bench_main(argc, argv, all);
}
