// A plain device-to-device copy for the GPU tests: memory-bound, with bytes known exactly.
#include "copy_kernel.hpp"

namespace {
__global__ void copy_kernel(const float4* __restrict__ src, float4* __restrict__ dst, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    dst[i] = src[i];
  }
}
}  // namespace

namespace diescope::harness::testing {

int launch_copy(const void* src, void* dst, std::size_t bytes, CUstream_st* stream) {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  copy_kernel<<<sms * 8, 512, 0, stream>>>(static_cast<const float4*>(src), static_cast<float4*>(dst),
                                           bytes / sizeof(float4));
  return static_cast<int>(cudaGetLastError());
}

}  // namespace diescope::harness::testing
