// Kernels of the bundled workloads and their launch wrappers. Compiled by nvcc (kernels.cu); the host
// code that uses them is plain C++ and sees only these declarations.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define DIESCOPE_HOST_DEVICE __host__ __device__
#else
#define DIESCOPE_HOST_DEVICE
#endif

namespace diescope::workloads::gpu {

// FFMA kernel shape. 16 independent accumulators x 16 unrolled steps = 256 FFMAs per loop trip
// against 2-3 loop instructions, so the FMA pipe, not the issue slots, limits it.
inline constexpr int kFfmaThreads = 1024;
inline constexpr int kFfmaAccumulators = 16;
inline constexpr int kFfmaUnroll = 16;

// Cycles (clock64) and nanoseconds (%globaltimer) that thread 0 of each block saw between its block's
// start and end, summed over blocks and launches; plus the earliest start and latest end seen.
struct ClockTally {
  unsigned long long cycles;
  unsigned long long ns;
  unsigned long long blocks;
  unsigned long long first_start_ns;
  unsigned long long last_end_ns;
};

// One SM's cycle counter and the global timer, read together.
struct RawStamp {
  unsigned int smid;
  unsigned int pad;
  unsigned long long cycles;
  unsigned long long ns;
};

// The starting value of an FFMA accumulator; exact in float, so host and device agree bit for bit.
DIESCOPE_HOST_DEVICE inline float ffma_initial_value(unsigned thread, int accumulator) {
  return static_cast<float>(thread & 63u) * 0.0009765625f + static_cast<float>(accumulator) * 0.03125f;
}
// acc <- acc * kFfmaMultiplier + kFfmaAddend converges to 1 and stays finite.
inline constexpr float kFfmaMultiplier = 0.999f;
inline constexpr float kFfmaAddend = 0.001f;

struct FfmaArgs {
  float* out;           // one value per thread: the sum of its accumulators
  unsigned int* smids;  // one per block: the SM it ran on
  ClockTally* tally;
  int iterations;  // loop trips; each runs kFfmaUnroll x kFfmaAccumulators FFMAs
  float multiplier;
  float addend;
};
cudaError_t ffma_set_shared_bytes(std::size_t shared_bytes);
cudaError_t ffma_blocks_per_sm(int* blocks, std::size_t shared_bytes);
cudaError_t launch_ffma(const FfmaArgs& args, int blocks, std::size_t shared_bytes, cudaStream_t stream);

// STREAM. Vectors are float; the kernels move 16 bytes per access and handle any tail.
inline constexpr int kStreamThreads = 256;
cudaError_t launch_stream_fill(float* data, std::uint64_t n, float base, float step, cudaStream_t stream);
cudaError_t launch_stream_copy(const float* a, float* b, std::uint64_t n, ClockTally* tally, int blocks,
                               cudaStream_t stream);
cudaError_t launch_stream_triad(float* a, const float* b, const float* c, float scalar, std::uint64_t n,
                                ClockTally* tally, int blocks, cudaStream_t stream);

// Fills `n` bf16 values with a hash of their index, spread over [-1, 1).
cudaError_t launch_fill_bf16(void* data, std::uint64_t n, std::uint32_t seed, cudaStream_t stream);

// One block per entry of `stamps`; thread 0 of each writes its SM's cycle counter and the timer.
cudaError_t launch_clock_stamps(RawStamp* stamps, int blocks, cudaStream_t stream);

// Duty: every thread runs FFMAs until `on_ns` of global time have passed since it started.
inline constexpr int kDutyThreads = 256;
cudaError_t duty_blocks_per_sm(int* blocks);
cudaError_t launch_duty(float* out, ClockTally* tally, unsigned long long on_ns, int blocks,
                        cudaStream_t stream);

}  // namespace diescope::workloads::gpu
