// A small GPU load for checking the sampler on a real GPU: FFMA and copy phases with idle between,
// each phase's start and end printed on CLOCK_REALTIME (ns) after the GPU has finished it, with the
// work the kernels did by their own count. Not a product workload (those live in src/workloads).
//
//   sampler_gpu_load phases              idle 0.3 s, FFMA 1 s, idle 0.3 s, copy 1 s, idle 0.3 s
//   sampler_gpu_load ffma SECONDS        FFMA for SECONDS
//   sampler_gpu_load copy SECONDS        copy for SECONDS
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <thread>

namespace {

constexpr int kFfmaChains = 8;
constexpr int kFfmaIters = 20000;
constexpr int kThreads = 1024;

__global__ void ffma_kernel(float* out, int iters) {
  float a = threadIdx.x * 1e-3f, b = 1.0001f, c = 0.999f;
  float r[kFfmaChains];
  for (int i = 0; i < kFfmaChains; ++i) r[i] = a + float(i);
  for (int k = 0; k < iters; ++k) {
#pragma unroll
    for (int i = 0; i < kFfmaChains; ++i) r[i] = fmaf(r[i], b, c);
  }
  float sum = 0;
  for (int i = 0; i < kFfmaChains; ++i) sum += r[i];
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

__global__ void copy_kernel(const float4* __restrict__ in, float4* __restrict__ out, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    out[i] = in[i];
}

long long realtime_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void check(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess) {
    std::fprintf(stderr, "sampler_gpu_load: %s: %s\n", what, cudaGetErrorString(rc));
    std::exit(1);
  }
}

struct Gpu {
  int sms = 0;
  int clock_khz = 0;
  float* ffma_out = nullptr;
  float4* a = nullptr;
  float4* b = nullptr;
  size_t n = (2ull << 30) / sizeof(float4);  // 2 GiB per buffer
};

void idle(double seconds) {
  long long t0 = realtime_ns();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  std::printf("phase idle %lld %lld\n", t0, realtime_ns());
  std::fflush(stdout);
}

void ffma(Gpu& g, double seconds) {
  const int blocks = g.sms * 2;
  check(cudaDeviceSynchronize(), "sync");
  long long t0 = realtime_ns();
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  cudaEventRecord(e0);
  long launches = 0;
  while ((realtime_ns() - t0) < seconds * 1e9) {
    for (int i = 0; i < 4; ++i, ++launches) ffma_kernel<<<blocks, kThreads>>>(g.ffma_out, kFfmaIters);
    check(cudaDeviceSynchronize(), "ffma");
  }
  cudaEventRecord(e1);
  cudaEventSynchronize(e1);
  long long t1 = realtime_ns();
  float ms = 0;
  cudaEventElapsedTime(&ms, e0, e1);
  // One FFMA is 2 FLOP; every thread runs kFfmaChains FFMAs per iteration.
  double flop = 2.0 * kFfmaChains * double(kFfmaIters) * blocks * kThreads * double(launches);
  std::printf("phase ffma %lld %lld launches=%ld event_ms=%.3f tflops=%.3f\n", t0, t1, launches, ms,
              flop / ms / 1e9);
  std::fflush(stdout);
}

void copy(Gpu& g, double seconds) {
  check(cudaDeviceSynchronize(), "sync");
  long long t0 = realtime_ns();
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  cudaEventRecord(e0);
  long launches = 0;
  while ((realtime_ns() - t0) < seconds * 1e9) {
    for (int i = 0; i < 8; ++i, ++launches) copy_kernel<<<g.sms * 16, 512>>>(g.a, g.b, g.n);
    check(cudaDeviceSynchronize(), "copy");
  }
  cudaEventRecord(e1);
  cudaEventSynchronize(e1);
  long long t1 = realtime_ns();
  float ms = 0;
  cudaEventElapsedTime(&ms, e0, e1);
  double bytes = 2.0 * double(g.n) * sizeof(float4) * double(launches);  // read + write
  std::printf("phase copy %lld %lld launches=%ld event_ms=%.3f gbps=%.1f\n", t0, t1, launches, ms,
              bytes / ms / 1e6);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: sampler_gpu_load phases | ffma SECONDS | copy SECONDS\n");
    return 2;
  }
  Gpu g;
  check(cudaDeviceGetAttribute(&g.sms, cudaDevAttrMultiProcessorCount, 0), "attribute");
  check(cudaMalloc(&g.ffma_out, size_t(g.sms) * 2 * kThreads * sizeof(float)), "malloc");
  check(cudaMalloc(&g.a, g.n * sizeof(float4)), "malloc");
  check(cudaMalloc(&g.b, g.n * sizeof(float4)), "malloc");
  check(cudaMemset(g.a, 1, g.n * sizeof(float4)), "memset");
  ffma_kernel<<<1, 32>>>(g.ffma_out, 1);  // load the module before timing
  check(cudaDeviceSynchronize(), "warm-up");
  std::printf("ready %lld sms=%d\n", realtime_ns(), g.sms);
  std::fflush(stdout);
  const double seconds = argc > 2 ? std::atof(argv[2]) : 1.0;
  if (!std::strcmp(argv[1], "phases")) {
    idle(0.3);
    ffma(g, 1.0);
    idle(0.3);
    copy(g, 1.0);
    idle(0.3);
  } else if (!std::strcmp(argv[1], "ffma")) {
    ffma(g, seconds);
  } else if (!std::strcmp(argv[1], "copy")) {
    copy(g, seconds);
  } else {
    std::fprintf(stderr, "unknown mode %s\n", argv[1]);
    return 2;
  }
  return 0;
}
