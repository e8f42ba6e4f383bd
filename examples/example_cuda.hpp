// What the GPU examples share: how they stop on a failed CUDA call, and what they say on a machine
// without a GPU. Each message starts with the example's name, as a command-line tool's does. Copy it
// with the example you start from.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

namespace examples {

// Stops the example (exit 1) when a CUDA call failed, naming the call (`what`) and CUDA's reason.
inline void check_cuda(const char* example, cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "%s: %s failed: %s\n", example, what, cudaGetErrorString(e));
  std::exit(1);
}

// False, after saying so with the fix, where CUDA sees no GPU; the example then exits 4.
inline bool have_gpu(const char* example) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0) return true;
  std::fprintf(stderr, "%s: error: no CUDA GPU\n  fix: run it on a machine with an NVIDIA GPU and driver\n",
               example);
  return false;
}

}  // namespace examples
