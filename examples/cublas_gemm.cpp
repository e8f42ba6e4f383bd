// A cuBLAS GEMM you can copy: C = A x B for square matrices, FP32 (CUDA cores) and FP16/BF16 with
// FP32 accumulation (tensor cores), timed with CUDA events on the handle's stream; TFLOP/s from
// 2 n^3 floating-point operations per GEMM.
//
//   ./cublas_gemm --filter 'n:8192' --json gemm.json
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <memory>
#include <string>

#include "diescope/harness/cuda.hpp"
#include "diescope/harness/main.hpp"
#include "example_cuda.hpp"

using namespace diescope::harness;

namespace {

constexpr std::int64_t kMaxN = 8192;

struct Gemm {
  cublasHandle_t handle = nullptr;
  cudaStream_t stream = nullptr;
  void* a = nullptr;
  void* b = nullptr;
  void* c = nullptr;
  bool ok = false;
  Gemm() {
    const std::size_t bytes = kMaxN * kMaxN * sizeof(float);  // room for the widest type
    ok = cudaStreamCreate(&stream) == cudaSuccess && cudaMalloc(&a, bytes) == cudaSuccess &&
         cudaMalloc(&b, bytes) == cudaSuccess && cudaMalloc(&c, bytes) == cudaSuccess &&
         cudaMemset(a, 0, bytes) == cudaSuccess && cudaMemset(b, 0, bytes) == cudaSuccess &&
         cublasCreate(&handle) == CUBLAS_STATUS_SUCCESS &&
         cublasSetStream(handle, stream) == CUBLAS_STATUS_SUCCESS;
  }
  ~Gemm() {
    if (handle) cublasDestroy(handle);
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    if (stream) cudaStreamDestroy(stream);
  }

  // Returns the cuBLAS status; the benchmark turns a failure into a skipped point.
  cublasStatus_t run(const std::string& type, int n) {
    const float one = 1.0f, zero = 0.0f;
    const cudaDataType_t t = type == "fp16" ? CUDA_R_16F : type == "bf16" ? CUDA_R_16BF : CUDA_R_32F;
    const cublasComputeType_t compute = CUBLAS_COMPUTE_32F;  // FP32 accumulation for every type
    return cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, t, n, b, t, n, &zero, c, t, n,
                        compute, CUBLAS_GEMM_DEFAULT);
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (!examples::have_gpu("cublas_gemm")) return 4;
  auto gemm = std::make_shared<Gemm>();
  if (!gemm->ok) {
    std::fprintf(
        stderr,
        "cublas_gemm: error: could not set up cuBLAS and %lld MiB of device memory\n  fix: free GPU memory\n",
        static_cast<long long>(3 * kMaxN * kMaxN * sizeof(float) >> 20));
    return 4;
  }
  Benchmark bench("gemm", [gemm](State& state) {
    const int n = static_cast<int>(state.get_int("n"));
    for (std::uint64_t i = 0; i < state.iterations(); ++i) {
      if (cublasStatus_t s = gemm->run(state.get_string("type"), n); s != CUBLAS_STATUS_SUCCESS) {
        return state.skip(std::string("cuBLAS refused this GEMM: ") + cublasGetStatusString(s));
      }
    }
  });
  bench.domain(MeasurementDomain::gpu)
      .backend(cuda_event_backend(gemm->stream))
      .clock_monitor(gpu_clock_monitor())
      .string_axis("type", {"fp32", "fp16", "bf16"})
      .int_axis("n", {1024, 4096, 8192})
      .flops_per_iteration([](const AxisPoint& p) {
        const double n = static_cast<double>(p.get_int("n"));
        return 2.0 * n * n * n;
      })
      .time_unit(TimeUnit::microsecond);
  return bench_main(argc, argv, {bench});
}
