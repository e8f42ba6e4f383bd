// Device code of the bundled workloads. Each kernel that counts its own time reads clock64() (its
// SM's cycle counter) and %globaltimer (nanoseconds) in thread 0 of every block, at block start and
// after a final barrier, so the mean SM clock comes from the kernel itself.
#include <cuda_bf16.h>

#include "block_clock.cuh"
#include "kernels.hpp"

namespace diescope::workloads::gpu {

namespace {

// One block per SM (the launch's shared-memory request makes a second impossible); `pin` is never
// touched, only reserved.
__global__ void __launch_bounds__(kFfmaThreads, 1) ffma_kernel(FfmaArgs args) {
  extern __shared__ float pin[];
  BlockClock clock;
  clock.start();
  float acc[kFfmaAccumulators];
#pragma unroll
  for (int i = 0; i < kFfmaAccumulators; ++i) acc[i] = ffma_initial_value(threadIdx.x, i);
  const float m = args.multiplier;
  const float a = args.addend;
  for (int trip = 0; trip < args.iterations; ++trip) {
#pragma unroll
    for (int u = 0; u < kFfmaUnroll; ++u) {
#pragma unroll
      for (int i = 0; i < kFfmaAccumulators; ++i) acc[i] = fmaf(acc[i], m, a);
    }
  }
  float sum = 0.0f;
#pragma unroll
  for (int i = 0; i < kFfmaAccumulators; ++i) sum += acc[i];
  args.out[static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x] = sum;
  __syncthreads();
  if (threadIdx.x == 0) args.smids[blockIdx.x] = sm_id();
  clock.stop(args.tally);
}

__global__ void stream_fill_kernel(float* data, unsigned long long n, float base, float step) {
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  for (unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    data[i] = base + step * static_cast<float>(i & 1023u);
}

// Four independent 16-byte loads in flight per thread before the stores.
__global__ void __launch_bounds__(kStreamThreads)
    stream_copy_kernel(const float* __restrict__ a, float* __restrict__ b, unsigned long long n,
                       ClockTally* tally) {
  BlockClock clock;
  clock.start();
  const unsigned long long n4 = n / 4;
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  const float4* __restrict__ a4 = reinterpret_cast<const float4*>(a);
  float4* __restrict__ b4 = reinterpret_cast<float4*>(b);
  unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + 3 * stride < n4; i += 4 * stride) {
    const float4 v0 = a4[i], v1 = a4[i + stride], v2 = a4[i + 2 * stride], v3 = a4[i + 3 * stride];
    b4[i] = v0;
    b4[i + stride] = v1;
    b4[i + 2 * stride] = v2;
    b4[i + 3 * stride] = v3;
  }
  for (; i < n4; i += stride) b4[i] = a4[i];
  const unsigned long long tail =
      n4 * 4 + static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (tail < n) b[tail] = a[tail];
  __syncthreads();
  clock.stop(tally);
}

__device__ __forceinline__ float4 triad4(float4 b, float4 c, float s) {
  return make_float4(b.x + s * c.x, b.y + s * c.y, b.z + s * c.z, b.w + s * c.w);
}

__global__ void __launch_bounds__(kStreamThreads)
    stream_triad_kernel(float* __restrict__ a, const float* __restrict__ b, const float* __restrict__ c,
                        float s, unsigned long long n, ClockTally* tally) {
  BlockClock clock;
  clock.start();
  const unsigned long long n4 = n / 4;
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  float4* __restrict__ a4 = reinterpret_cast<float4*>(a);
  const float4* __restrict__ b4 = reinterpret_cast<const float4*>(b);
  const float4* __restrict__ c4 = reinterpret_cast<const float4*>(c);
  unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + stride < n4; i += 2 * stride) {
    const float4 b0 = b4[i], c0 = c4[i], b1 = b4[i + stride], c1 = c4[i + stride];
    a4[i] = triad4(b0, c0, s);
    a4[i + stride] = triad4(b1, c1, s);
  }
  for (; i < n4; i += stride) a4[i] = triad4(b4[i], c4[i], s);
  const unsigned long long tail =
      n4 * 4 + static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (tail < n) a[tail] = b[tail] + s * c[tail];
  __syncthreads();
  clock.stop(tally);
}

__global__ void fill_bf16_kernel(__nv_bfloat16* data, unsigned long long n, unsigned int seed) {
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  for (unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    // A 32-bit integer hash (lowbias32) of index and seed, mapped to [-1, 1).
    unsigned int h = static_cast<unsigned int>(i) ^ static_cast<unsigned int>(i >> 32) * 0x9e3779b9u ^ seed;
    h ^= h >> 16;
    h *= 0x7feb352du;
    h ^= h >> 15;
    h *= 0x846ca68bu;
    h ^= h >> 16;
    data[i] = __float2bfloat16(static_cast<float>(h >> 8) * (2.0f / 16777216.0f) - 1.0f);
  }
}

__global__ void clock_stamp_kernel(RawStamp* stamps) {
  if (threadIdx.x == 0) {
    RawStamp s;
    s.smid = sm_id();
    s.pad = 0;
    s.ns = global_ns();
    s.cycles = static_cast<unsigned long long>(clock64());
    stamps[blockIdx.x] = s;
  }
}

__global__ void __launch_bounds__(kDutyThreads)
    duty_kernel(float* out, ClockTally* tally, unsigned long long on_ns) {
  BlockClock clock;
  clock.start();
  const unsigned long long t0 = global_ns();
  float acc[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) acc[i] = ffma_initial_value(threadIdx.x, i);
  while (global_ns() - t0 < on_ns) {
#pragma unroll
    for (int u = 0; u < 8; ++u) {
#pragma unroll
      for (int i = 0; i < 8; ++i) acc[i] = fmaf(acc[i], kFfmaMultiplier, kFfmaAddend);
    }
  }
  float sum = 0.0f;
#pragma unroll
  for (int i = 0; i < 8; ++i) sum += acc[i];
  out[static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x] = sum;
  __syncthreads();
  clock.stop(tally);
}

int fill_blocks(unsigned long long n, int threads) {
  const unsigned long long blocks = (n + threads - 1) / threads;
  return static_cast<int>(blocks < 4096ull ? (blocks == 0 ? 1ull : blocks) : 4096ull);
}

}  // namespace

cudaError_t ffma_set_shared_bytes(std::size_t shared_bytes) {
  return cudaFuncSetAttribute(ffma_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                              static_cast<int>(shared_bytes));
}

cudaError_t ffma_blocks_per_sm(int* blocks, std::size_t shared_bytes) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, ffma_kernel, kFfmaThreads, shared_bytes);
}

cudaError_t launch_ffma(const FfmaArgs& args, int blocks, std::size_t shared_bytes, cudaStream_t stream) {
  ffma_kernel<<<blocks, kFfmaThreads, shared_bytes, stream>>>(args);
  return cudaGetLastError();
}

cudaError_t launch_stream_fill(float* data, std::uint64_t n, float base, float step, cudaStream_t stream) {
  stream_fill_kernel<<<fill_blocks(n, 256), 256, 0, stream>>>(data, n, base, step);
  return cudaGetLastError();
}

cudaError_t launch_stream_copy(const float* a, float* b, std::uint64_t n, ClockTally* tally, int blocks,
                               cudaStream_t stream) {
  stream_copy_kernel<<<blocks, kStreamThreads, 0, stream>>>(a, b, n, tally);
  return cudaGetLastError();
}

cudaError_t launch_stream_triad(float* a, const float* b, const float* c, float scalar, std::uint64_t n,
                                ClockTally* tally, int blocks, cudaStream_t stream) {
  stream_triad_kernel<<<blocks, kStreamThreads, 0, stream>>>(a, b, c, scalar, n, tally);
  return cudaGetLastError();
}

cudaError_t launch_fill_bf16(void* data, std::uint64_t n, std::uint32_t seed, cudaStream_t stream) {
  fill_bf16_kernel<<<fill_blocks(n, 256), 256, 0, stream>>>(static_cast<__nv_bfloat16*>(data), n, seed);
  return cudaGetLastError();
}

cudaError_t launch_clock_stamps(RawStamp* stamps, int blocks, cudaStream_t stream) {
  clock_stamp_kernel<<<blocks, 32, 0, stream>>>(stamps);
  return cudaGetLastError();
}

cudaError_t duty_blocks_per_sm(int* blocks) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, duty_kernel, kDutyThreads, 0);
}

cudaError_t launch_duty(float* out, ClockTally* tally, unsigned long long on_ns, int blocks,
                        cudaStream_t stream) {
  duty_kernel<<<blocks, kDutyThreads, 0, stream>>>(out, tally, on_ns);
  return cudaGetLastError();
}

}  // namespace diescope::workloads::gpu
