// The STREAM kernels, defined once: for the workloads that run them (`diescope workload stream`, and
// calibrate's DRAM step and STREAM sweep in diescope-workload) and for the calibration that fits the
// DRAM ceiling from their times (calibrate/device_model.hpp). Plain C++17, as nvcc compiles it too.
#pragma once

#include <cstdint>
#include <string_view>

namespace diescope::workloads {

// Over single-precision vectors: copy (one vector into another), scale (a scalar times one vector
// into another), add (the sum of two into a third), triad (one plus a scalar times another into a
// third).
enum class StreamKernel { copy, scale, add, triad };
inline constexpr StreamKernel kStreamKernels[] = {StreamKernel::copy, StreamKernel::scale, StreamKernel::add,
                                                  StreamKernel::triad};

std::string_view stream_kernel_name(StreamKernel kernel);  // "copy", "scale", "add", "triad"
// Vectors read and written by one launch: 1 + 1 for copy and scale, 2 + 1 for add and triad.
int stream_vectors_read(StreamKernel kernel);
int stream_vectors_written(StreamKernel kernel);
// Bytes of one launch, counted as the kernel's reads plus writes: (reads + writes) x elements x
// element bytes (a float's 4 unless given). Throws std::overflow_error past 64 bits.
std::uint64_t stream_bytes(StreamKernel kernel, std::uint64_t elements, std::uint64_t element_bytes = 4);

}  // namespace diescope::workloads
