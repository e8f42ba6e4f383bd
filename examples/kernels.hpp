// The examples' kernels, behind plain C++ functions: nvcc compiles kernels.cu as C++17, while the
// benchmark files are C++20 and compiled by the host compiler. Each launcher returns the launch's
// cudaError_t (0 on success).
#pragma once

#include <cstddef>

struct CUstream_st;

namespace examples {

// dst = src, `bytes` a multiple of 16, grid-stride over `blocks` x 512 threads.
int launch_copy(const void* src, void* dst, std::size_t bytes, int blocks, CUstream_st* stream);

// y = a * x + y over n elements with `block` threads per block.
int launch_saxpy(float a, const float* x, float* y, int n, int block, CUstream_st* stream);
// Resident blocks per SM for launch_saxpy at this block size (the occupancy calculator's answer).
int saxpy_blocks_per_sm(int block);

// Eight independent FMA chains of `iterations` each per thread: 16 x iterations FLOP per thread.
int launch_fma(float* out, int blocks, int threads, int iterations, CUstream_st* stream);

}  // namespace examples
