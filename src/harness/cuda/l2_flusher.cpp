#include <cuda_runtime.h>

#include <fmt/format.h>

#include "diescope/harness/cuda.hpp"
#include "diescope/core/error.hpp"
#include "l2_read.hpp"

namespace diescope::harness {

namespace {

void check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  throw core::DeviceError(
      fmt::format("L2 flusher: {} failed: {} ({})", what, cudaGetErrorName(e), cudaGetErrorString(e)),
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
  if (buffer_bytes_ == 0) return;
  check(cudaMalloc(&buffer_, buffer_bytes_ + sizeof(unsigned)), "allocating the flush buffer");
  check(cudaMemsetAsync(buffer_, 0, buffer_bytes_ + sizeof(unsigned), stream_), "clearing the flush buffer");
  int sms = 0;
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "reading the SM count");
  blocks_ = 8 * sms;
}

CudaL2Flusher::~CudaL2Flusher() {
  if (buffer_) cudaFree(buffer_);
}

void CudaL2Flusher::flush() {
  if (!buffer_) return;
  // Ordered before the sample's start event on the same stream, so never inside the window. A read,
  // not a write: a written flush leaves L2 full of dirty lines, and the sample would pay for writing
  // them back (up to one L2 of extra DRAM writes inside its window). Reading twice the L2 evicts
  // everything, writes back what the last sample left dirty, and leaves only clean lines.
  auto* sink = reinterpret_cast<unsigned*>(static_cast<char*>(buffer_) + buffer_bytes_);
  check(detail::launch_l2_read(buffer_, buffer_bytes_, sink, blocks_, stream_), "launching the flush read");
}

std::string CudaL2Flusher::describe() const {
  return fmt::format(
      "GPU L2 flush: {:.1f} MiB read (2x the {:.1f} MiB L2) before each cold sample, so no dirty line is "
      "left for the sample to write back",
      static_cast<double>(buffer_bytes_) / (1 << 20), static_cast<double>(l2_bytes_) / (1 << 20));
}

CacheFlusherFactory cuda_l2_flusher(CudaStream stream) {
  return [stream] { return std::make_unique<CudaL2Flusher>(stream); };
}

}  // namespace diescope::harness
