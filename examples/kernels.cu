#include <cuda_runtime.h>

#include "kernels.hpp"

namespace {

__global__ void copy_kernel(const float4* __restrict__ src, float4* __restrict__ dst, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    dst[i] = src[i];
  }
}

__global__ void saxpy_kernel(float a, const float* __restrict__ x, float* __restrict__ y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

// The chains are independent so the FMA pipe, not latency, limits; the result is stored so the
// compiler keeps the work.
__global__ void fma_kernel(float* out, int iterations) {
  float a = threadIdx.x * 1e-3f, b = a + 1, c = a + 2, d = a + 3, e = a + 4, f = a + 5, g = a + 6, h = a + 7;
  for (int i = 0; i < iterations; ++i) {
    a = fmaf(a, 1.0001f, 0.999f);
    b = fmaf(b, 1.0001f, 0.999f);
    c = fmaf(c, 1.0001f, 0.999f);
    d = fmaf(d, 1.0001f, 0.999f);
    e = fmaf(e, 1.0001f, 0.999f);
    f = fmaf(f, 1.0001f, 0.999f);
    g = fmaf(g, 1.0001f, 0.999f);
    h = fmaf(h, 1.0001f, 0.999f);
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = a + b + c + d + e + f + g + h;
}

}  // namespace

namespace examples {

int launch_copy(const void* src, void* dst, std::size_t bytes, int blocks, CUstream_st* stream) {
  copy_kernel<<<blocks, 512, 0, stream>>>(static_cast<const float4*>(src), static_cast<float4*>(dst),
                                          bytes / sizeof(float4));
  return static_cast<int>(cudaGetLastError());
}

int launch_saxpy(float a, const float* x, float* y, int n, int block, CUstream_st* stream) {
  saxpy_kernel<<<(n + block - 1) / block, block, 0, stream>>>(a, x, y, n);
  return static_cast<int>(cudaGetLastError());
}

int saxpy_blocks_per_sm(int block) {
  int blocks = 0;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, saxpy_kernel, block, 0);
  return blocks;
}

int launch_fma(float* out, int blocks, int threads, int iterations, CUstream_st* stream) {
  fma_kernel<<<blocks, threads, 0, stream>>>(out, iterations);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace examples
