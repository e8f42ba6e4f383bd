// Kernels of `diescope-workload calibrate` (the device side of `diescope calibrate`) beyond the
// bundled workloads' own (FFMA and STREAM copy/triad are reused from kernels.hpp). Every step kernel
// is pinned like the FFMA kernel (a dynamic shared-memory request over half an SM, so one block per
// SM and N blocks on N SMs) and writes its launch's start, end, cycles and time into a ClockTally of
// its own, so the host gets each launch's interval on the GPU timer.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "diescope/workloads/stream_kernel.hpp"
#include "kernels.hpp"

namespace diescope::workloads::gpu {

inline constexpr int kCalibThreads = 1024;  // threads per block of every pinned step kernel
inline constexpr int kCalibUnroll = 16;     // counted operations per loop trip and chain

enum class CalibKernel { imad, ffma_imad, dfma, mma_bf16, l1_load, l2_read };

// Per loop trip and thread (mma: per warp), what one kernel counts:
//  imad      : 16 chains x 16 IMAD                                       = 256 IMAD warp-lane ops
//  ffma_imad : 8 FFMA chains + 8 IMAD chains, 16 each                    = 128 FFMA + 128 IMAD
//  dfma      : 8 chains x 16 DFMA                                        = 128 DFMA
//  mma_bf16  : 4 chains x 4 mma.sync.m16n8k16 per warp                   = 16 MMA = 65536 FLOP per warp
//  l1_load   : 16 ld.global.ca.v4.f32 over a 32 KiB buffer that stays in L1 = 16 LDG.128 per thread
//  l2_read   : 16 ld.global.cg.v4.f32 over a buffer that fits L2         = 256 bytes per thread
inline constexpr int kImadChains = 16;
inline constexpr int kMixedChains = 8;  // of each, FFMA and IMAD
inline constexpr int kDfmaChains = 8;
inline constexpr int kMmaChains = 4;
inline constexpr int kMmaPerChain = 4;
inline constexpr double kMmaFlops = 2.0 * 16 * 8 * 16;  // one m16n8k16 MMA
inline constexpr int kL1LoadsPerTrip = 16;
inline constexpr unsigned kL1BufferFloat4s =
    2048;  // 32 KiB: fits L1 beside the pinning shared-memory request
inline constexpr int kL2LoadsPerTrip = 16;

struct CalibArgs {
  ClockTally* tally;             // this launch's own
  float* sink;                   // one value per thread, so the work is not optimised away
  const float* buffer;           // l2_read, l1_load: the buffer (l1_load reads its first kL1BufferFloat4s)
  std::uint64_t buffer_floats4;  // l2_read: float4 elements in it (a power of two)
  int iterations;                // loop trips
};

// Hopper's tensor step (wgmma_kernel.cu, built for sm_90a only; launch it on compute capability 9.0
// alone): two warpgroups per block, each issuing kWgmmaPerTrip wgmma.mma_async.m64n256k16 bf16 MMAs
// per trip, each 2 x 64 x 256 x 16 FLOP. Pinned to one block per SM like the kernels above.
inline constexpr int kWgmmaThreads = 256;
inline constexpr int kWgmmaWarpgroups = kWgmmaThreads / 128;
inline constexpr int kWgmmaPerTrip = 4;
inline constexpr double kWgmmaFlops = 2.0 * 64 * 256 * 16;
cudaError_t wgmma_set_shared_bytes(std::size_t shared_bytes);
cudaError_t wgmma_blocks_per_sm(int* blocks, std::size_t shared_bytes);
cudaError_t launch_wgmma(const CalibArgs& args, int blocks, std::size_t shared_bytes, cudaStream_t stream);

cudaError_t calib_set_shared_bytes(CalibKernel kernel, std::size_t shared_bytes);
cudaError_t calib_blocks_per_sm(CalibKernel kernel, int* blocks, std::size_t shared_bytes);
cudaError_t launch_calib(CalibKernel kernel, const CalibArgs& args, int blocks, std::size_t shared_bytes,
                         cudaStream_t stream);

// STREAM scale (b = s a) and add (c = a + b), beside kernels.hpp's copy and triad.
cudaError_t launch_stream_scale(const float* a, float* b, float scalar, std::uint64_t n, int blocks,
                                cudaStream_t stream);
cudaError_t launch_stream_add(const float* a, const float* b, float* c, std::uint64_t n, int blocks,
                              cudaStream_t stream);

// The same four kernels in one pass: one float4 of each vector per thread, n / (4 threads) blocks, no
// loop and no range guard (cudaErrorInvalidValue unless n is a multiple of 4 threads).
cudaError_t launch_stream_pass(StreamKernel kernel, float* a, float* b, float* c, float scalar,
                               std::uint64_t n, int threads, cudaStream_t stream);

// The untiled weight-gradient contraction dw[o,i] = sum_k dy[k,o] x[k,i] (dy: k x m, x: k x n,
// row-major): one 16x16 output tile per block, one output per thread, tile t covering output rows
// (t % (m/16))*16 and columns (t / (m/16))*16. m and n must be multiples of 16.
inline constexpr int kWsTile = 16;
cudaError_t ws_blocks_per_sm(int* blocks);
cudaError_t launch_ws_contraction(const float* dy, const float* x, float* dw, int m, int n, int k,
                                  cudaStream_t stream);

// Re-reads a buffer of `floats4` float4s `passes` times with L1-bypassing loads, grid-strided, so
// every thread reads the same addresses in every pass: the distance between two reads of one
// address is the whole buffer. `sink` gets one value per thread.
inline constexpr int kRereadThreads = 256;
cudaError_t launch_reread(const float* buffer, std::uint64_t floats4, int passes, float* sink, int blocks,
                          cudaStream_t stream);

// The register-blocktiled form of the same contraction with a pinned block geometry (block tile
// bm x bn x bk, thread tile tm x tn): 32x32x8/4x4 (64 threads) or 64x64x8/4x4 (256 threads). m, n
// multiples of the block tile, k of bk. Returns cudaErrorInvalidValue for another geometry.
cudaError_t launch_tiled_contraction(int bm, int bn, int bk, int tm, int tn, const float* dy, const float* x,
                                     float* dw, int m, int n, int k, cudaStream_t stream);

}  // namespace diescope::workloads::gpu
