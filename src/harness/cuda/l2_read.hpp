// Internal to the CUDA side of the harness: the flush read kernel's launcher.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace diescope::harness::detail {

// Reads `bytes` (a multiple of 16) of `buffer` with `blocks` blocks of 256 threads.
cudaError_t launch_l2_read(const void* buffer, std::size_t bytes, unsigned* sink, int blocks,
                           cudaStream_t stream);

}  // namespace diescope::harness::detail
