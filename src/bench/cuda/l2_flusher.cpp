#include <cuda_runtime.h>

#include <fmt/format.h>

#include "diescope/bench/cuda.hpp"
#include "diescope/core/error.hpp"

namespace diescope::bench {

namespace {

void check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  throw DeviceError(fmt::format("L2 flusher: {} failed: {} ({})", what, cudaGetErrorName(e), cudaGetErrorString(e)),
                    "run on a machine with a CUDA GPU and driver, or use batch timing, which needs no flusher");
}

}  // namespace

CudaL2Flusher::CudaL2Flusher(CudaStream stream) : stream_(stream) {
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  int l2 = 0;
  check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device), "reading the L2 size");
  l2_bytes_ = static_cast<std::size_t>(l2);
  buffer_bytes_ = 2 * l2_bytes_;
  if (buffer_bytes_ > 0) check(cudaMalloc(&buffer_, buffer_bytes_), "allocating the flush buffer");
}

CudaL2Flusher::~CudaL2Flusher() {
  if (buffer_) cudaFree(buffer_);
}

void CudaL2Flusher::flush() {
  if (!buffer_) return;
  // Ordered before the sample's start event on the same stream, so never inside the window.
  check(cudaMemsetAsync(buffer_, ++pass_ & 0xff, buffer_bytes_, stream_), "cudaMemsetAsync on the flush buffer");
}

std::string CudaL2Flusher::describe() const {
  return fmt::format("GPU L2 flush: {:.1f} MiB written (2x the {:.1f} MiB L2) before each cold sample",
                     static_cast<double>(buffer_bytes_) / (1 << 20), static_cast<double>(l2_bytes_) / (1 << 20));
}

CacheFlusherFactory cuda_l2_flusher(CudaStream stream) {
  return [stream] { return std::make_unique<CudaL2Flusher>(stream); };
}

}  // namespace diescope::bench
