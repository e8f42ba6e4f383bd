// A counter replay pass you can copy: after the timed samples, the work is replayed under CUPTI's
// range profiler (once per hardware pass) and the SM, L2, DRAM and tensor-pipe percent of peak join
// the metric table, marked "diagnostic pass, not timed". Two kernels show the difference: a copy
// (DRAM-bound) and a chain of FMAs (SM-bound). Each kernel is also run without the pass, so the
// timing with and without it can be compared. The kernels are in kernels.cu.
//
// Counters may be restricted to administrators; then the pass reports gpu_counter_error and the
// timing still runs.
//
// `--metrics NAME,NAME,...` replaces the default counter set with CUPTI metric names of your own (to
// ask the pass and Nsight Compute for the same metrics, for example). `--pass-launches N` launches
// the kernel N times inside the pass's one range: the range also holds the GPU's idle time before the
// first launch and after the last (about 80 us on the H200), which N launches dilute. The other flags
// are the harness's (`--help`).
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "diescope/harness/cuda.hpp"
#include "diescope/harness/cupti.hpp"
#include "diescope/harness/main.hpp"
#include "example_cuda.hpp"
#include "kernels.hpp"

using namespace diescope::harness;

namespace {

void check(cudaError_t e, const char* what) {
  examples::check_cuda("counter_replay", e, what);
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

Benchmark timed(const char* name, const std::function<void()>& work) {
  Benchmark b(name, [work](State& state) {
    for (std::uint64_t i = 0; i < state.iterations(); ++i) work();
  });
  b.domain(MeasurementDomain::gpu)
      .timing(TimingMode::cold)
      .backend(cuda_event_backend())
      .cache_flusher(cuda_l2_flusher())
      .clock_monitor(gpu_clock_monitor())
      .time_unit(TimeUnit::microsecond);
  return b;
}

struct ExampleFlags {
  std::vector<CounterMetric> metrics = default_gpu_counters();
  int pass_launches = 1;
};

// Takes `--metrics LIST` and `--pass-launches N` out of argv, leaving the harness's own flags.
ExampleFlags take_example_flags(int& argc, char** argv) {
  ExampleFlags flags;
  std::string list;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--metrics" && i + 1 < argc) {
      list = argv[++i];
    } else if (arg == "--pass-launches" && i + 1 < argc) {
      flags.pass_launches = std::atoi(argv[++i]);
      if (flags.pass_launches < 1) {
        std::fprintf(stderr, "counter_replay: error: --pass-launches takes a count of 1 or more\n");
        std::exit(2);
      }
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  if (list.empty()) return flags;
  std::vector<CounterMetric> metrics;
  for (std::size_t start = 0; start <= list.size();) {
    std::size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    std::string name = list.substr(start, comma - start);
    if (!name.empty())
      metrics.push_back({name, name, name, name.find("pct") != std::string::npos ? "%" : ""});
    start = comma + 1;
  }
  flags.metrics = std::move(metrics);
  return flags;
}

}  // namespace

int main(int argc, char** argv) {
  if (!examples::have_gpu("counter_replay")) return 4;
  const ExampleFlags flags = take_example_flags(argc, argv);
  const std::vector<CounterMetric>& metrics = flags.metrics;
  auto device = std::make_shared<Device>();
  auto copy = [device] { device->copy(); };
  auto fma = [device] { device->fma(); };
  const int launches = flags.pass_launches;
  auto replay_copy = [device, launches](State&) {
    for (int i = 0; i < launches; ++i) device->copy();
  };
  auto replay_fma = [device, launches](State&) {
    for (int i = 0; i < launches; ++i) device->fma();
  };

  std::vector<Benchmark> benchmarks;
  benchmarks.push_back(timed("copy", copy).bytes_per_iteration(2.0 * kCopyBytes));
  benchmarks.push_back(timed("copy_with_counters", copy)
                           .bytes_per_iteration(2.0 * kCopyBytes)
                           .diagnostic_pass(counter_replay_pass(replay_copy, metrics), 3));
  benchmarks.push_back(timed("fma", fma).flops_per_iteration(device->fma_flops()));
  benchmarks.push_back(timed("fma_with_counters", fma)
                           .flops_per_iteration(device->fma_flops())
                           .diagnostic_pass(counter_replay_pass(replay_fma, metrics), 3));
  return bench_main(argc, argv, benchmarks);
}
