// Device-side clocks shared by the workload kernels (kernels.cu) and the calibration kernels
// (calibrate_kernels.cu): %globaltimer, the SM id, and BlockClock, which thread 0 of each block uses
// to add its block's cycles and time to a launch's ClockTally.
#pragma once

#include "kernels.hpp"

namespace diescope::workloads::gpu {

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ __forceinline__ unsigned int sm_id() {
  unsigned int id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

struct BlockClock {
  long long cycles0 = 0;
  unsigned long long ns0 = 0;
  __device__ void start() {
    if (threadIdx.x == 0) {
      ns0 = global_ns();
      cycles0 = clock64();
    }
  }
  // Call after a __syncthreads() so the block's last warp is done.
  __device__ void stop(ClockTally* tally) {
    if (threadIdx.x == 0) {
      const long long cycles1 = clock64();
      const unsigned long long ns1 = global_ns();
      atomicAdd(&tally->cycles, static_cast<unsigned long long>(cycles1 - cycles0));
      atomicAdd(&tally->ns, ns1 - ns0);
      atomicAdd(&tally->blocks, 1ull);
      atomicMin(&tally->first_start_ns, ns0);
      atomicMax(&tally->last_end_ns, ns1);
    }
  }
};

}  // namespace diescope::workloads::gpu
