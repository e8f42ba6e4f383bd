// Device code of `diescope-workload calibrate`: the pinned step kernels with counted work, STREAM
// scale and add, and the two forms of the weight-gradient contraction the device-model sweeps time.
// Counted operations are issued through inline PTX where the compiler could otherwise merge them
// (integer multiply-adds, shared and L1-bypassing loads, MMAs), so the count is the count issued.
#include "calibrate_kernels.hpp"

#include "block_clock.cuh"

namespace diescope::workloads::gpu {

namespace {

__device__ __forceinline__ void imad(unsigned& acc, unsigned m, unsigned a) {
  asm volatile("mad.lo.u32 %0, %0, %1, %2;" : "+r"(acc) : "r"(m), "r"(a));
}

__global__ void __launch_bounds__(kCalibThreads, 1) imad_kernel(CalibArgs args) {
  BlockClock clock;
  clock.start();
  unsigned acc[kImadChains];
#pragma unroll
  for (int i = 0; i < kImadChains; ++i) acc[i] = threadIdx.x + i;
  const unsigned m = 1664525u + (args.iterations & 0), a = 1013904223u;
  for (int trip = 0; trip < args.iterations; ++trip) {
#pragma unroll
    for (int u = 0; u < kCalibUnroll; ++u) {
#pragma unroll
      for (int i = 0; i < kImadChains; ++i) imad(acc[i], m, a);
    }
  }
  unsigned sum = 0;
#pragma unroll
  for (int i = 0; i < kImadChains; ++i) sum ^= acc[i];
  args.sink[static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x] = static_cast<float>(sum & 1023u);
  __syncthreads();
  clock.stop(args.tally);
}

__global__ void __launch_bounds__(kCalibThreads, 1) ffma_imad_kernel(CalibArgs args) {
  BlockClock clock;
  clock.start();
  float f[kMixedChains];
  unsigned u32[kMixedChains];
#pragma unroll
  for (int i = 0; i < kMixedChains; ++i) {
    f[i] = ffma_initial_value(threadIdx.x, i);
    u32[i] = threadIdx.x + i;
  }
  const unsigned m = 1664525u + (args.iterations & 0), a = 1013904223u;
  for (int trip = 0; trip < args.iterations; ++trip) {
#pragma unroll
    for (int u = 0; u < kCalibUnroll; ++u) {
#pragma unroll
      for (int i = 0; i < kMixedChains; ++i) {
        f[i] = fmaf(f[i], kFfmaMultiplier, kFfmaAddend);
        imad(u32[i], m, a);
      }
    }
  }
  float sum = 0.0f;
#pragma unroll
  for (int i = 0; i < kMixedChains; ++i) sum += f[i] + static_cast<float>(u32[i] & 1u);
  args.sink[static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x] = sum;
  __syncthreads();
  clock.stop(args.tally);
}

__global__ void __launch_bounds__(kCalibThreads, 1) dfma_kernel(CalibArgs args) {
  BlockClock clock;
  clock.start();
  double acc[kDfmaChains];
#pragma unroll
  for (int i = 0; i < kDfmaChains; ++i) acc[i] = static_cast<double>(ffma_initial_value(threadIdx.x, i));
  for (int trip = 0; trip < args.iterations; ++trip) {
#pragma unroll
    for (int u = 0; u < kCalibUnroll; ++u) {
#pragma unroll
      for (int i = 0; i < kDfmaChains; ++i) acc[i] = fma(acc[i], 0.999, 0.001);
    }
  }
  double sum = 0.0;
#pragma unroll
  for (int i = 0; i < kDfmaChains; ++i) sum += acc[i];
  args.sink[static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x] = static_cast<float>(sum);
  __syncthreads();
  clock.stop(args.tally);
}

// bf16 mma.sync m16n8k16 exists from compute capability 8.0: built for an older architecture the
// kernel is empty and traps, and calibrate plans no bf16-mma step there (judged_workload,
// docs/calibration.md#the-step-kernels-calibrate_kernelscu).
__global__ void __launch_bounds__(kCalibThreads, 1) mma_bf16_kernel(CalibArgs args) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  (void)args;
  __trap();
#else
  BlockClock clock;
  clock.start();
  // Operands: bf16 pairs of small values (0x3c00 is 0.0078125); the accumulators stay finite.
  const unsigned a0 = 0x3c003c00u + (args.iterations & 0), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0;
  float d[kMmaChains][4];
#pragma unroll
  for (int c = 0; c < kMmaChains; ++c) d[c][0] = d[c][1] = d[c][2] = d[c][3] = 0.0f;
  for (int trip = 0; trip < args.iterations; ++trip) {
#pragma unroll
    for (int r = 0; r < kMmaPerChain; ++r) {
#pragma unroll
      for (int c = 0; c < kMmaChains; ++c) {
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
            "{%0,%1,%2,%3};"
            : "+f"(d[c][0]), "+f"(d[c][1]), "+f"(d[c][2]), "+f"(d[c][3])
            : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
      }
    }
  }
  float sum = 0.0f;
#pragma unroll
  for (int c = 0; c < kMmaChains; ++c) sum += d[c][0] + d[c][1] + d[c][2] + d[c][3];
  args.sink[static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x] = sum;
  __syncthreads();
  clock.stop(args.tally);
#endif
}

// Global loads that hit L1: in trip r, thread t of every block reads float4 number
// (t + 1024 j + 64 r) mod 2048 of a 32 KiB buffer with .ca (cache in L1), so after the first trip
// every load is an L1 hit and each quarter-warp reads 128 contiguous bytes. The address moves with
// the trip so that ptxas cannot hoist the loads out of the loop (the first H200 run, with
// loop-invariant addresses, read 0.001%: the loads had left the loop). Whole-pipe and local/global Load/store
// counters both count these (shared-memory loads would count in only the first on Hopper).
__global__ void __launch_bounds__(kCalibThreads, 1) l1_load_kernel(CalibArgs args) {
  BlockClock clock;
  clock.start();
  const float4* buffer = reinterpret_cast<const float4*>(args.buffer);
  float acc = 0.0f;
  for (int trip = 0; trip < args.iterations; ++trip) {
#pragma unroll
    for (int j = 0; j < kL1LoadsPerTrip; ++j) {
      const unsigned index =
          (threadIdx.x + 1024u * static_cast<unsigned>(j) + 64u * static_cast<unsigned>(trip)) &
          (kL1BufferFloat4s - 1);
      float x, y, z, w;
      asm volatile("ld.global.ca.v4.f32 {%0,%1,%2,%3}, [%4];"
                   : "=f"(x), "=f"(y), "=f"(z), "=f"(w)
                   : "l"(buffer + index));
      acc += (x + y) + (z + w);
    }
  }
  args.sink[static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x] = acc;
  __syncthreads();
  clock.stop(args.tally);
}

// L1-bypassing (.cg) 16-byte loads, grid-strided over a buffer that fits L2.
__global__ void __launch_bounds__(kCalibThreads, 1) l2_read_kernel(CalibArgs args) {
  BlockClock clock;
  clock.start();
  const unsigned long long mask = args.buffer_floats4 - 1;
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  const unsigned long long g = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  float acc = 0.0f;
  unsigned long long step = 0;
  for (int trip = 0; trip < args.iterations; ++trip) {
#pragma unroll
    for (int j = 0; j < kL2LoadsPerTrip; ++j) {
      const float4* p = reinterpret_cast<const float4*>(args.buffer) + ((g + (step + j) * stride) & mask);
      float x, y, z, w;
      asm volatile("ld.global.cg.v4.f32 {%0,%1,%2,%3}, [%4];" : "=f"(x), "=f"(y), "=f"(z), "=f"(w) : "l"(p));
      acc += (x + y) + (z + w);
    }
    step += kL2LoadsPerTrip;
  }
  args.sink[g] = acc;
  __syncthreads();
  clock.stop(args.tally);
}

__global__ void __launch_bounds__(256)
    stream_scale_kernel(const float* __restrict__ a, float* __restrict__ b, float s, unsigned long long n) {
  const unsigned long long n4 = n / 4;
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  const float4* a4 = reinterpret_cast<const float4*>(a);
  float4* b4 = reinterpret_cast<float4*>(b);
  for (unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n4;
       i += stride) {
    const float4 v = a4[i];
    b4[i] = make_float4(s * v.x, s * v.y, s * v.z, s * v.w);
  }
}

__global__ void __launch_bounds__(256)
    stream_add_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                      unsigned long long n) {
  const unsigned long long n4 = n / 4;
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  const float4* a4 = reinterpret_cast<const float4*>(a);
  const float4* b4 = reinterpret_cast<const float4*>(b);
  float4* c4 = reinterpret_cast<float4*>(c);
  for (unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n4;
       i += stride) {
    const float4 u = a4[i], v = b4[i];
    c4[i] = make_float4(u.x + v.x, u.y + v.y, u.z + v.z, u.w + v.w);
  }
}

// The one-pass form of the four STREAM kernels: one float4 of each vector per thread, block k on
// the contiguous float4s [k T, (k+1) T), no loop and no range guard (the launcher takes only n that
// fills whole blocks). On the H200 this form moved the most bytes of every form tried
// (bench/results/calibrate/2026-11-29-h200-stream-forms): the blocks sweep memory in
// address order.
template <StreamKernel Op>
__global__ void stream_pass_kernel(float4* __restrict__ out, const float4* __restrict__ x,
                                   const float4* __restrict__ y, float s) {
  const unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const float4 u = x[i];
  if constexpr (Op == StreamKernel::copy) out[i] = u;
  if constexpr (Op == StreamKernel::scale) out[i] = make_float4(s * u.x, s * u.y, s * u.z, s * u.w);
  if constexpr (Op == StreamKernel::add || Op == StreamKernel::triad) {
    const float4 v = y[i];
    const float t = Op == StreamKernel::add ? 1.0f : s;
    out[i] = make_float4(u.x + t * v.x, u.y + t * v.y, u.z + t * v.z, u.w + t * v.w);
  }
}

__global__ void __launch_bounds__(kWsTile* kWsTile)
    ws_contraction_kernel(const float* __restrict__ dy, const float* __restrict__ x, float* __restrict__ dw,
                          int m, int n, int k) {
  const int tiles_m = m / kWsTile;
  const int t = blockIdx.x;
  const int ty = threadIdx.x / kWsTile, tx = threadIdx.x % kWsTile;
  const int o = (t % tiles_m) * kWsTile + ty;
  const int i = (t / tiles_m) * kWsTile + tx;
  float acc = 0.0f;
#pragma unroll 4
  for (int kk = 0; kk < k; ++kk)
    acc = fmaf(dy[static_cast<size_t>(kk) * m + o], x[static_cast<size_t>(kk) * n + i], acc);
  dw[static_cast<size_t>(o) * n + i] = acc;
}

__device__ __forceinline__ float4 load_cg(const float4* p) {
  float4 v;
  asm volatile("ld.global.cg.v4.f32 {%0,%1,%2,%3}, [%4];"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "l"(p));
  return v;
}

__global__ void __launch_bounds__(kRereadThreads)
    reread_kernel(const float4* __restrict__ buffer, unsigned long long n4, int passes, float* sink) {
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  const unsigned long long g = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  float acc = 0.0f;
  for (int pass = 0; pass < passes; ++pass) {
    unsigned long long i = g;
    for (; i + 7 * stride < n4; i += 8 * stride) {
      float4 v[8];
#pragma unroll
      for (int j = 0; j < 8; ++j) v[j] = load_cg(buffer + i + j * stride);
#pragma unroll
      for (int j = 0; j < 8; ++j) acc += (v[j].x + v[j].y) + (v[j].z + v[j].w);
    }
    for (; i < n4; i += stride) {
      const float4 v = load_cg(buffer + i);
      acc += (v.x + v.y) + (v.z + v.w);
    }
  }
  sink[g] = acc;
}

template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__((BM / TM) * (BN / TN))
    tiled_contraction_kernel(const float* __restrict__ dy, const float* __restrict__ x,
                             float* __restrict__ dw, int m, int n, int k) {
  constexpr int kThreads = (BM / TM) * (BN / TN);
  __shared__ float as[BK][BM];
  __shared__ float bs[BK][BN];
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  const int tr = threadIdx.x / (BN / TN), tc = threadIdx.x % (BN / TN);
  float acc[TM][TN] = {};
  for (int k0 = 0; k0 < k; k0 += BK) {
    for (int e = threadIdx.x; e < BK * BM; e += kThreads)
      as[e / BM][e % BM] = dy[static_cast<size_t>(k0 + e / BM) * m + row0 + e % BM];
    for (int e = threadIdx.x; e < BK * BN; e += kThreads)
      bs[e / BN][e % BN] = x[static_cast<size_t>(k0 + e / BN) * n + col0 + e % BN];
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      float a[TM], b[TN];
#pragma unroll
      for (int r = 0; r < TM; ++r) a[r] = as[kk][tr * TM + r];
#pragma unroll
      for (int c = 0; c < TN; ++c) b[c] = bs[kk][tc * TN + c];
#pragma unroll
      for (int r = 0; r < TM; ++r)
#pragma unroll
        for (int c = 0; c < TN; ++c) acc[r][c] = fmaf(a[r], b[c], acc[r][c]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int r = 0; r < TM; ++r)
#pragma unroll
    for (int c = 0; c < TN; ++c)
      dw[static_cast<size_t>(row0 + tr * TM + r) * n + col0 + tc * TN + c] = acc[r][c];
}

template <class Kernel>
cudaError_t set_shared(Kernel kernel, std::size_t bytes) {
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
}

}  // namespace

#define DIESCOPE_CALIB_DISPATCH(KERNEL, EXPR) \
  switch (KERNEL) {                           \
    case CalibKernel::imad: {                 \
      auto k = imad_kernel;                   \
      return EXPR;                            \
    }                                         \
    case CalibKernel::ffma_imad: {            \
      auto k = ffma_imad_kernel;              \
      return EXPR;                            \
    }                                         \
    case CalibKernel::dfma: {                 \
      auto k = dfma_kernel;                   \
      return EXPR;                            \
    }                                         \
    case CalibKernel::mma_bf16: {             \
      auto k = mma_bf16_kernel;               \
      return EXPR;                            \
    }                                         \
    case CalibKernel::l1_load: {              \
      auto k = l1_load_kernel;                \
      return EXPR;                            \
    }                                         \
    case CalibKernel::l2_read: {              \
      auto k = l2_read_kernel;                \
      return EXPR;                            \
    }                                         \
  }                                           \
  return cudaErrorInvalidValue

cudaError_t calib_set_shared_bytes(CalibKernel kernel, std::size_t shared_bytes) {
  DIESCOPE_CALIB_DISPATCH(kernel, set_shared(k, shared_bytes));
}

cudaError_t calib_blocks_per_sm(CalibKernel kernel, int* blocks, std::size_t shared_bytes) {
  DIESCOPE_CALIB_DISPATCH(
      kernel, cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, k, kCalibThreads, shared_bytes));
}

cudaError_t launch_calib(CalibKernel kernel, const CalibArgs& args, int blocks, std::size_t shared_bytes,
                         cudaStream_t stream) {
  DIESCOPE_CALIB_DISPATCH(kernel,
                          (k<<<blocks, kCalibThreads, shared_bytes, stream>>>(args), cudaGetLastError()));
}

cudaError_t launch_stream_scale(const float* a, float* b, float scalar, std::uint64_t n, int blocks,
                                cudaStream_t stream) {
  stream_scale_kernel<<<blocks, 256, 0, stream>>>(a, b, scalar, n);
  return cudaGetLastError();
}

cudaError_t launch_stream_add(const float* a, const float* b, float* c, std::uint64_t n, int blocks,
                              cudaStream_t stream) {
  stream_add_kernel<<<blocks, 256, 0, stream>>>(a, b, c, n);
  return cudaGetLastError();
}

cudaError_t launch_stream_pass(StreamKernel op, float* a, float* b, float* c, float scalar, std::uint64_t n,
                               int threads, cudaStream_t stream) {
  if (threads <= 0 || n % (4ull * threads) != 0 || n / (4ull * threads) > 0x7fffffffull)
    return cudaErrorInvalidValue;
  const auto blocks = static_cast<unsigned>(n / (4ull * threads));
  auto* a4 = reinterpret_cast<float4*>(a);
  auto* b4 = reinterpret_cast<float4*>(b);
  auto* c4 = reinterpret_cast<float4*>(c);
  // The four STREAM kernels: copy c = a, scale b = s a, add c = a + b, triad a = b + s c.
  switch (op) {
    case StreamKernel::copy:
      stream_pass_kernel<StreamKernel::copy><<<blocks, threads, 0, stream>>>(c4, a4, a4, scalar);
      break;
    case StreamKernel::scale:
      stream_pass_kernel<StreamKernel::scale><<<blocks, threads, 0, stream>>>(b4, a4, a4, scalar);
      break;
    case StreamKernel::add:
      stream_pass_kernel<StreamKernel::add><<<blocks, threads, 0, stream>>>(c4, a4, b4, scalar);
      break;
    case StreamKernel::triad:
      stream_pass_kernel<StreamKernel::triad><<<blocks, threads, 0, stream>>>(a4, b4, c4, scalar);
      break;
  }
  return cudaGetLastError();
}

cudaError_t ws_blocks_per_sm(int* blocks) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, ws_contraction_kernel, kWsTile * kWsTile, 0);
}

cudaError_t launch_ws_contraction(const float* dy, const float* x, float* dw, int m, int n, int k,
                                  cudaStream_t stream) {
  ws_contraction_kernel<<<(m / kWsTile) * (n / kWsTile), kWsTile * kWsTile, 0, stream>>>(dy, x, dw, m, n, k);
  return cudaGetLastError();
}

cudaError_t launch_reread(const float* buffer, std::uint64_t floats4, int passes, float* sink, int blocks,
                          cudaStream_t stream) {
  reread_kernel<<<blocks, kRereadThreads, 0, stream>>>(reinterpret_cast<const float4*>(buffer), floats4,
                                                       passes, sink);
  return cudaGetLastError();
}

cudaError_t launch_tiled_contraction(int bm, int bn, int bk, int tm, int tn, const float* dy, const float* x,
                                     float* dw, int m, int n, int k, cudaStream_t stream) {
  if (bm == 32 && bn == 32 && bk == 8 && tm == 4 && tn == 4) {
    tiled_contraction_kernel<32, 32, 8, 4, 4><<<dim3(n / 32, m / 32), 64, 0, stream>>>(dy, x, dw, m, n, k);
    return cudaGetLastError();
  }
  if (bm == 64 && bn == 64 && bk == 8 && tm == 4 && tn == 4) {
    tiled_contraction_kernel<64, 64, 8, 4, 4><<<dim3(n / 64, m / 64), 256, 0, stream>>>(dy, x, dw, m, n, k);
    return cudaGetLastError();
  }
  return cudaErrorInvalidValue;
}

}  // namespace diescope::workloads::gpu
