// Workloads with known work, each in its own NVTX region, for the backends' cross-check
// (docs/roofline.md#the-range-profiler, bench/roofline/three_backends.sh):
//   ffma   FMA chains: 2 x 4 x ITER x threads fp32 FLOPs per launch, nothing else floating point
//   triad  a = b + s c over N floats: 3 x 4 x N bytes at DRAM, 2 N FLOPs per launch
//   gemm   cuBLAS bf16 M = N = K = 10240: 2 M N K tensor FLOPs per call
// Each region runs REPS launches; the program prints one JSON line per region with its own count and
// the region's time by CUDA events (the workload's own time, for the injection library's cost).
// Modes for bad input: --no-nvtx (no region at all), --unclosed (the last region is never popped),
// --crash (SIGSEGV inside the triad region, after its launches).
// --long makes every launch 20 ms or more for the sampled backend (docs/roofline.md#the-sampled-backend):
// ffma 10 x ITER per thread (about 22 ms), triad 24 sweeps of the arrays in one launch (about 21 ms),
// gemm M = N = K = 22528 (about 25 ms).
// sgemm (only with --only sgemm): cuBLAS fp32 on the FP32 pipes, M = N = K = 8192 with --long (about 20
// ms), 4096 without: a GEMM of 20 ms or more that stays under the H200's power limit, where the bf16
// GEMM's clock follows the limit and differs between ncu's lone replays and back-to-back launches.
// The tensor paths whose totals the range backend adds from parts (docs/roofline.md#the-range-profiler),
// each only with --only: hgemm (cuBLAS fp16 4096³: the warpgroup path, 2 M N K FLOPs), hmma (mma.sync
// m16n8k16 fp16 with fp32 accumulators: 4096 FLOPs per warp instruction), imma (mma.sync m16n8k32
// int8: 8192 OPs per warp instruction); the last two on 132 blocks of 4 warps, 20,000 instructions each.
//
//   nvcc -O3 -arch=sm_90 -o range_regions range_regions.cu -lcublas
//   range_regions [--reps N] [--only ffma|triad|gemm|sgemm|hgemm|hmma|imma] [--long]
//                 [--no-nvtx|--unclosed|--crash]
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#define CHECK(x)                                                           \
  do {                                                                     \
    cudaError_t e_ = (x);                                                  \
    if (e_ != cudaSuccess) {                                               \
      std::fprintf(stderr, "%s failed: %s\n", #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                        \
    }                                                                      \
  } while (0)

constexpr int kIter = 1 << 16;  // about 2 ms per launch on an H200
constexpr int kLongIter = 10 * kIter;
constexpr int kLongSweeps = 24;
constexpr int kLongGemm = 22528;

template <int ITER>
__global__ void ffma_kernel(float* out, float a, float b) {
  float x0 = threadIdx.x, x1 = x0 + 1, x2 = x0 + 2, x3 = x0 + 3;
  for (int i = 0; i < ITER; ++i) {
    x0 = fmaf(x0, a, b);
    x1 = fmaf(x1, a, b);
    x2 = fmaf(x2, a, b);
    x3 = fmaf(x3, a, b);
  }
  // Integer-only store guard: no extra floating-point instruction in the count.
  if (__float_as_int(x0) == 0x7fffffff && __float_as_int(x1) == 0 && __float_as_int(x2) == 0 &&
      __float_as_int(x3) == 0)
    out[blockIdx.x] = x0;
}

__global__ void triad_kernel(float* a, const float* b, const float* c, float s, size_t n) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    a[i] = fmaf(s, c[i], b[i]);
}

// The triad `sweeps` times over the arrays in one launch (1 GiB each, far beyond L2: every sweep
// moves its 12 bytes per element at DRAM again).
__global__ void triad_sweeps_kernel(float* a, const float* b, const float* c, float s, size_t n, int sweeps) {
  for (int k = 0; k < sweeps; ++k)
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
      a[i] = fmaf(s, c[i], b[i]);
}

constexpr int kMmaIter = 20000;

// mma.sync on zero fragments, kMmaIter times per warp: fp16 (m16n8k16, fp32 accumulators) or int8
// (m16n8k32, int32 accumulators); the sum is stored only when impossible (the asm is volatile, so the
// loop stays).
template <bool kFp16>
__global__ void mma_kernel(void* out) {
  const unsigned a = 0, b = 0;
  unsigned d[4] = {0, 0, 0, 0};  // the accumulators' bits: floats for fp16, ints for int8
  for (int i = 0; i < kMmaIter; ++i) {
    if constexpr (kFp16)
      asm volatile(
          "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
          "{%0,%1,%2,%3};"
          : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
          : "r"(a), "r"(a), "r"(a), "r"(a), "r"(b), "r"(b));
    else
      asm volatile(
          "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
          "{%0,%1,%2,%3};"
          : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
          : "r"(a), "r"(a), "r"(a), "r"(a), "r"(b), "r"(b));
  }
  if (d[0] + d[1] + d[2] + d[3] == 12345u) static_cast<unsigned*>(out)[threadIdx.x] = d[0];
}

struct Options {
  int reps = 10;
  std::string only;
  bool nvtx = true, unclosed = false, crash = false, long_launches = false;
};

void push(const Options& o, const char* name) {
  if (o.nvtx) nvtxRangePushA(name);
}
void pop(const Options& o) {
  if (o.nvtx) nvtxRangePop();
}

// Times `body` with CUDA events; prints the region's line.
template <class F>
void region(const Options& o, const char* name, const char* count_name, double count, bool last, F body) {
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  push(o, name);
  CHECK(cudaEventRecord(start));
  body();
  CHECK(cudaEventRecord(stop));
  CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  if (o.crash && std::strcmp(name, "triad") == 0) {
    std::fflush(stdout);
    std::raise(SIGSEGV);
  }
  if (!(o.unclosed && last)) pop(o);
  std::printf("{\"region\":\"%s\",\"reps\":%d,\"%s\":%.17g,\"ms\":%.6f}\n", name, o.reps, count_name, count,
              ms);
  std::fflush(stdout);
}

// A cuBLAS GEMM region: M = N = K = m, zero inputs of `in_type` (`in_bytes` each), fp32 output; one call
// before the region (cuBLAS's own set-up, outside it) and o.reps inside. Returns false when cuBLAS
// cannot start.
bool cublas_region(const Options& o, const char* name, const char* count_name, int m, cudaDataType in_type,
                   size_t in_bytes, cublasComputeType_t compute) {
  void *A, *B;
  float* C;
  CHECK(cudaMalloc(&A, size_t(m) * m * in_bytes));
  CHECK(cudaMalloc(&B, size_t(m) * m * in_bytes));
  CHECK(cudaMalloc(&C, size_t(m) * m * 4));
  CHECK(cudaMemset(A, 0, size_t(m) * m * in_bytes));
  CHECK(cudaMemset(B, 0, size_t(m) * m * in_bytes));
  cublasHandle_t h;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) return false;
  const float alpha = 1, beta = 0;
  auto gemm = [&] {
    cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, m, m, &alpha, A, in_type, m, B, in_type, m, &beta, C,
                 CUDA_R_32F, m, compute, CUBLAS_GEMM_DEFAULT);
  };
  gemm();
  CHECK(cudaDeviceSynchronize());
  region(o, name, count_name, 2.0 * m * double(m) * m * o.reps, true, [&] {
    for (int r = 0; r < o.reps; ++r) gemm();
  });
  cublasDestroy(h);
  CHECK(cudaFree(A));
  CHECK(cudaFree(B));
  CHECK(cudaFree(C));
  return true;
}

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--reps" && i + 1 < argc)
      o.reps = std::atoi(argv[++i]);
    else if (a == "--only" && i + 1 < argc)
      o.only = argv[++i];
    else if (a == "--no-nvtx")
      o.nvtx = false;
    else if (a == "--unclosed")
      o.unclosed = true;
    else if (a == "--crash")
      o.crash = true;
    else if (a == "--long")
      o.long_launches = true;
    else {
      std::fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  CHECK(cudaFree(nullptr));
  const bool all = o.only.empty();
  // ffma: 132 SMs x 8 blocks x 256 threads
  if (all || o.only == "ffma") {
    const int blocks = 132 * 8, threads = 256;
    float* out = nullptr;
    CHECK(cudaMalloc(&out, blocks * sizeof(float)));
    const double flop = 2.0 * 4 * (o.long_launches ? kLongIter : kIter) * double(blocks) * threads * o.reps;
    region(o, "ffma", "fp32_flop", flop, o.only == "ffma", [&] {
      for (int r = 0; r < o.reps; ++r) {
        if (o.long_launches)
          ffma_kernel<kLongIter><<<blocks, threads>>>(out, 0.999f, 0.001f);
        else
          ffma_kernel<kIter><<<blocks, threads>>>(out, 0.999f, 0.001f);
      }
    });
    CHECK(cudaFree(out));
  }
  if (all || o.only == "triad") {
    const size_t n = size_t(1) << 28;  // 1 GiB per array: far beyond the 50 MB L2
    float *a, *b, *c;
    CHECK(cudaMalloc(&a, n * 4));
    CHECK(cudaMalloc(&b, n * 4));
    CHECK(cudaMalloc(&c, n * 4));
    CHECK(cudaMemset(b, 0, n * 4));
    CHECK(cudaMemset(c, 0, n * 4));
    const double bytes = 12.0 * double(n) * o.reps * (o.long_launches ? kLongSweeps : 1);
    region(o, "triad", "dram_bytes", bytes, o.only == "triad", [&] {
      for (int r = 0; r < o.reps; ++r) {
        if (o.long_launches)
          triad_sweeps_kernel<<<132 * 16, 512>>>(a, b, c, 2.0f, n, kLongSweeps);
        else
          triad_kernel<<<132 * 16, 512>>>(a, b, c, 2.0f, n);
      }
    });
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    CHECK(cudaFree(c));
  }
  if ((all || o.only == "gemm") &&
      !cublas_region(o, "gemm", "tensor_flop", o.long_launches ? kLongGemm : 10240, CUDA_R_16BF, 2,
                     CUBLAS_COMPUTE_32F))
    return 1;
  if (o.only == "hgemm" &&
      !cublas_region(o, "hgemm", "tensor_fp16_flop", 4096, CUDA_R_16F, 2, CUBLAS_COMPUTE_32F))
    return 1;
  if (o.only == "hmma" || o.only == "imma") {
    void* out = nullptr;
    CHECK(cudaMalloc(&out, 128 * 4));
    const bool fp16 = o.only == "hmma";
    const double per_instruction = fp16 ? 2.0 * 16 * 8 * 16 : 2.0 * 16 * 8 * 32;
    const double work = per_instruction * kMmaIter * 132 * 4 * o.reps;
    region(o, fp16 ? "hmma" : "imma", fp16 ? "tensor_fp16_flop" : "tensor_int8_op", work, true, [&] {
      for (int r = 0; r < o.reps; ++r) {
        if (fp16)
          mma_kernel<true><<<132, 128>>>(out);
        else
          mma_kernel<false><<<132, 128>>>(out);
      }
      CHECK(cudaGetLastError());
    });
    CHECK(cudaFree(out));
  }
  // CUBLAS_COMPUTE_32F_PEDANTIC: fp32 FMAs, never TF32 on the tensor cores.
  if (o.only == "sgemm" && !cublas_region(o, "sgemm", "fp32_flop", o.long_launches ? 8192 : 4096, CUDA_R_32F,
                                          4, CUBLAS_COMPUTE_32F_PEDANTIC))
    return 1;
  return 0;
}
