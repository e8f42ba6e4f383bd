#pragma once

#include <cstddef>

struct CUstream_st;

namespace diescope::harness::testing {
// Copies `bytes` (a multiple of 16) from src to dst on `stream`; returns the launch's cudaError_t.
int launch_copy(const void* src, void* dst, std::size_t bytes, CUstream_st* stream);
}  // namespace diescope::harness::testing
