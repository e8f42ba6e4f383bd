// A one-thread kernel that spins, probe after probe, for a fixed number of SM cycles and records,
// from inside the kernel, the cycles and the nanoseconds (%globaltimer) each probe took: cycles over
// nanoseconds is the SM clock its SM ran at, whatever ran beside it. Loaded by
// bench/ncu/effective_sm_clock.py (ctypes) and launched on a side stream of the process whose kernels it
// measures (docs/method.md#comparing-with-nsight-compute). Build:
//   nvcc -O2 -shared -Xcompiler -fPIC -arch=sm_90 -o libsmclockprobe.so bench/ncu/sm_clock_probe.cu
#include <cuda_runtime.h>

namespace {

__global__ void spin(int n, long long cycles, unsigned long long* out) {
  for (int i = 0; i < n; ++i) {
    unsigned long long g0 = 0;
    unsigned long long g1 = 0;
    const long long c0 = clock64();
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g0));
    long long c1 = c0;
    while (c1 - c0 < cycles) c1 = clock64();
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g1));
    out[3 * i] = static_cast<unsigned long long>(c1 - c0);
    out[3 * i + 1] = g1 - g0;
    out[3 * i + 2] = g0;
  }
}

}  // namespace

// Launches one kernel on `stream` that runs n probes of `cycles` each, back to back (one launch, so
// a long chain never fills the launch queue); probe i writes its cycles, its nanoseconds and its
// start time (ns) to out[3i..3i+2] (device memory). Returns the launch error.
extern "C" int sm_clock_probes(void* stream, unsigned long long* out, int n, long long cycles) {
  spin<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(n, cycles, out);
  return static_cast<int>(cudaGetLastError());
}

namespace {

__global__ void stamp(unsigned long long* out) {
  unsigned long long g = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g));
  *out = g;
}

}  // namespace

// Writes %globaltimer (ns) to *out when the stream reaches it: the bounds of the measured stretch in
// the probes' own time base.
extern "C" int sm_clock_stamp(void* stream, unsigned long long* out) {
  stamp<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(out);
  return static_cast<int>(cudaGetLastError());
}
