// The work the bundled workloads count and the figures derived from it. Pure arithmetic, so every
// formula is checked on the CPU against hand-computed values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "diescope/workloads/options.hpp"

namespace diescope::workloads {

// A figure that may be unknown: NaN with the reason, never 0.
struct Rate {
  double value;
  std::string reason;  // empty when value is known
};

// FP32 lanes per SM (each lane retires one FFMA per cycle). 64 on Volta, Turing and GA100; 128 from
// GA10x on (Ampere consumer, Ada, Hopper, Blackwell). Unknown architectures give NaN and a reason.
Rate fp32_lanes_per_sm(int cc_major, int cc_minor);

// Peak FFMA warp instructions one SM issues per cycle: lanes / 32 threads per warp (Hopper: 4).
Rate ffma_warp_instructions_per_sm_per_cycle(int cc_major, int cc_minor);

// Dense bf16 tensor-core FLOP per SM per cycle (FP32 accumulate), from NVIDIA's published rates:
// GA100 312 TFLOP/s = 108 SMs x 2048 x 1.41 GHz; GH100 989.4 TFLOP/s = 132 SMs x 4096 x 1.83 GHz.
// Other architectures: NaN with a reason (consumer parts differ by SKU).
Rate bf16_dense_flop_per_sm_per_cycle(int cc_major, int cc_minor);

// FFMA kernel: each thread runs `iterations` loop trips of `unroll` x `accumulators` FFMAs.
std::uint64_t ffma_per_thread(std::uint64_t iterations, std::uint64_t unroll, std::uint64_t accumulators);
// Warp instructions: every FFMA of a full warp is one instruction. `threads` must be a multiple of 32.
std::uint64_t ffma_warp_instructions(std::uint64_t fma_per_thread, std::uint64_t threads,
                                     std::uint64_t launches);
// FLOPs: 2 per FMA (a multiply and an add) for every thread of every launch.
double ffma_flops(std::uint64_t fma_per_thread, std::uint64_t threads, std::uint64_t launches);

// What the FMA pipe's device-wide counter (sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_elapsed)
// should read: instructions / (SMs x peak instructions per SM per cycle x cycles elapsed), in percent.
// `sm_count` is the SMs the average runs over: the device's for the device-wide figure, the loaded
// ones for the per-loaded-SM figure.
double expected_fma_pipe_pct(double warp_instructions, double sm_count, double peak_per_sm_per_cycle,
                             double sm_clock_hz, double seconds);

// FP32 peak in FLOP/s at a clock: SMs x lanes x 2 x clock.
double fp32_peak_flops(double sm_count, double lanes_per_sm, double sm_clock_hz);

// STREAM's bytes per launch: stream_bytes() in stream_kernel.hpp, which calibrate shares.

// GEMM FLOPs of one call: m x n x k multiply-adds, 2 FLOP each.
double gemm_flops(std::int64_t m, std::int64_t n, std::int64_t k);

// Mean SM clock from cycles counted by clock64() over nanoseconds counted by %globaltimer.
double clock_mhz(double cycles, double nanoseconds);

// One reading of an SM's cycle counter and the global timer, taken together by a tiny kernel.
struct SmStamp {
  int smid;
  std::uint64_t cycles;
  std::uint64_t ns;
};
// Mean SM clock between two sets of stamps: for every SM stamped in both, its cycles over the
// nanoseconds between them; the mean over those SMs. NaN (with reason) when no SM was stamped twice.
Rate clock_mhz_between(const std::vector<SmStamp>& first, const std::vector<SmStamp>& last);

// Dynamic shared memory per block that makes a second block on the same SM impossible:
// more than half of what an SM holds, counting the 1 KiB the hardware reserves for each block.
// 0 when the per-block opt-in limit cannot reach that far.
std::uint64_t shared_bytes_for_one_block_per_sm(std::uint64_t shared_per_sm, std::uint64_t reserved_per_block,
                                                std::uint64_t shared_per_block_optin);

// How many launches of `seconds_per_launch` fill `seconds` (at least 1).
std::uint64_t launches_to_fill(double seconds, double seconds_per_launch);

// Fraction of the window a duty-cycled kernel was running.
double on_fraction(double on_seconds, double window_seconds);

}  // namespace diescope::workloads
