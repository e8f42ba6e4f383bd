// Half-precision kernels whose FLOPs are counted by hand, for the packed-half check of the roofline
// backends (docs/roofline.md#packed-half-precision). Each kernel runs in its own NVTX range (named as
// the kernel) and the program prints, per kernel, the FLOPs its source performs:
//   hfma2  packed __half2 FMA:  threads x (iters x chains x 4 + (chains - 1) x 2)   (HFMA2, then HADD2)
//   hfma   scalar __half FMA:   threads x (iters x chains x 2 + (chains - 1) x 1)   (HFMA, then HADD)
//   hadd2  packed __half2 add:  threads x (iters x chains x 2 + (chains - 1) x 2)
//   hmul2  packed __half2 mul:  threads x (iters x chains x 2 + (chains - 1) x 2)
// (an FMA is two FLOPs per lane, an add or a multiply one; a packed instruction has two lanes). The
// accumulators start from memory and end in memory, so no FP16 arithmetic happens outside these
// counts. Build (bench/roofline/packed_half.sh does):
//   nvcc -O3 -arch=sm_90 -o half_kernels bench/roofline/half_kernels.cu
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

constexpr int kChains = 8;
constexpr int kBlocks = 132 * 8;
constexpr int kThreads = 256;
constexpr long long kTotalThreads = static_cast<long long>(kBlocks) * kThreads;

__global__ void hfma2(const __half2* in, __half2* out, __half2 a, __half2 b, int iters) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  __half2 acc[kChains];
#pragma unroll
  for (int c = 0; c < kChains; ++c) acc[c] = in[c * kTotalThreads + t];
  for (int i = 0; i < iters; ++i)
#pragma unroll
    for (int c = 0; c < kChains; ++c) acc[c] = __hfma2(acc[c], a, b);
  __half2 s = acc[0];
#pragma unroll
  for (int c = 1; c < kChains; ++c) s = __hadd2(s, acc[c]);
  out[t] = s;
}

__global__ void hfma(const __half* in, __half* out, __half a, __half b, int iters) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  __half acc[kChains];
#pragma unroll
  for (int c = 0; c < kChains; ++c) acc[c] = in[c * kTotalThreads + t];
  for (int i = 0; i < iters; ++i)
#pragma unroll
    for (int c = 0; c < kChains; ++c) acc[c] = __hfma(acc[c], a, b);
  __half s = acc[0];
#pragma unroll
  for (int c = 1; c < kChains; ++c) s = __hadd(s, acc[c]);
  out[t] = s;
}

__global__ void hadd2(const __half2* in, __half2* out, __half2 a, __half2 /*unused*/, int iters) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  __half2 acc[kChains];
#pragma unroll
  for (int c = 0; c < kChains; ++c) acc[c] = in[c * kTotalThreads + t];
  for (int i = 0; i < iters; ++i)
#pragma unroll
    for (int c = 0; c < kChains; ++c) acc[c] = __hadd2(acc[c], a);
  __half2 s = acc[0];
#pragma unroll
  for (int c = 1; c < kChains; ++c) s = __hadd2(s, acc[c]);
  out[t] = s;
}

__global__ void hmul2(const __half2* in, __half2* out, __half2 a, __half2 /*unused*/, int iters) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  __half2 acc[kChains];
#pragma unroll
  for (int c = 0; c < kChains; ++c) acc[c] = in[c * kTotalThreads + t];
  for (int i = 0; i < iters; ++i)
#pragma unroll
    for (int c = 0; c < kChains; ++c) acc[c] = __hmul2(acc[c], a);
  // The reduction adds (HADD2), so this kernel also has hadd work: counted apart below.
  __half2 s = acc[0];
#pragma unroll
  for (int c = 1; c < kChains; ++c) s = __hadd2(s, acc[c]);
  out[t] = s;
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "half_kernels: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int iters = argc > 1 ? std::atoi(argv[1]) : 4096;
  void* in = nullptr;
  void* out = nullptr;
  const size_t in_bytes = sizeof(__half2) * kChains * kTotalThreads;
  check(cudaMalloc(&in, in_bytes), "cudaMalloc");
  check(cudaMalloc(&out, sizeof(__half2) * kTotalThreads), "cudaMalloc");
  check(cudaMemset(in, 0x3c, in_bytes), "cudaMemset");  // 0x3c3c: about 1.06 in every half
  const __half2 a = __floats2half2_rn(0.999f, 1.001f), b = __floats2half2_rn(0.001f, -0.001f);
  const __half ha = __float2half(0.999f), hb = __float2half(0.001f);
  const double T = static_cast<double>(kTotalThreads), I = iters, C = kChains;
  struct Line {
    const char* name;
    double fma_flop, add_flop, mul_flop;  // by hand, per the header
  };
  const Line lines[] = {
      {"hfma2", T * I * C * 4, T * (C - 1) * 2, 0},
      {"hfma", T * I * C * 2, T * (C - 1) * 1, 0},
      {"hadd2", 0, T * (I * C * 2 + (C - 1) * 2), 0},
      {"hmul2", 0, T * (C - 1) * 2, T * I * C * 2},
  };
  cudaEvent_t e0, e1;
  check(cudaEventCreate(&e0), "cudaEventCreate");
  check(cudaEventCreate(&e1), "cudaEventCreate");
  std::printf("kernel,threads,iters,chains,fma_flop,add_flop,mul_flop,total_flop,seconds,tflop_per_s\n");
  for (const Line& l : lines) {
    nvtxRangePushA(l.name);
    check(cudaEventRecord(e0), "cudaEventRecord");
    if (!std::strcmp(l.name, "hfma2"))
      hfma2<<<kBlocks, kThreads>>>(static_cast<__half2*>(in), static_cast<__half2*>(out), a, b, iters);
    else if (!std::strcmp(l.name, "hfma"))
      hfma<<<kBlocks, kThreads>>>(static_cast<__half*>(in), static_cast<__half*>(out), ha, hb, iters);
    else if (!std::strcmp(l.name, "hadd2"))
      hadd2<<<kBlocks, kThreads>>>(static_cast<__half2*>(in), static_cast<__half2*>(out), b, b, iters);
    else
      hmul2<<<kBlocks, kThreads>>>(static_cast<__half2*>(in), static_cast<__half2*>(out), a, a, iters);
    check(cudaEventRecord(e1), "cudaEventRecord");
    check(cudaEventSynchronize(e1), "cudaEventSynchronize");
    nvtxRangePop();
    check(cudaGetLastError(), l.name);
    float ms = 0;
    check(cudaEventElapsedTime(&ms, e0, e1), "cudaEventElapsedTime");
    const double total = l.fma_flop + l.add_flop + l.mul_flop;
    std::printf("%s,%lld,%d,%d,%.0f,%.0f,%.0f,%.0f,%.6f,%.3f\n", l.name, kTotalThreads, iters, kChains,
                l.fma_flop, l.add_flop, l.mul_flop, total, ms / 1e3, total / (ms / 1e3) / 1e12);
  }
  check(cudaFree(in), "cudaFree");
  check(cudaFree(out), "cudaFree");
  return 0;
}
