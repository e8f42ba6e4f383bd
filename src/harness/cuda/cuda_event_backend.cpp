#include <cuda_runtime.h>

#include "diescope/harness/cuda.hpp"

namespace diescope::harness {

std::string cuda_error_name(int code) {
  return cudaGetErrorName(static_cast<cudaError_t>(code));
}

CudaEventBackend::CudaEventBackend(CudaStream stream) : stream_(stream) {
  // Creation errors are kept, not thrown: every sample then reports them as cuda_error_code.
  if (cudaError_t e = cudaEventCreate(&start_); e != cudaSuccess) {
    creation_error_ = e;
    start_ = nullptr;
  } else if (e = cudaEventCreate(&stop_); e != cudaSuccess) {
    creation_error_ = e;
    stop_ = nullptr;
  }
  if (creation_error_ != 0) cudaGetLastError();  // clear the non-sticky error for later calls
}

CudaEventBackend::~CudaEventBackend() {
  if (start_) cudaEventDestroy(start_);
  if (stop_) cudaEventDestroy(stop_);
}

int CudaEventBackend::record_start() {
  if (creation_error_ != 0) return creation_error_;
  return cudaEventRecord(start_, stream_);
}

int CudaEventBackend::record_stop_and_wait() {
  if (cudaError_t e = cudaEventRecord(stop_, stream_); e != cudaSuccess) return e;
  // A kernel that faulted inside the window reports here.
  return cudaEventSynchronize(stop_);
}

int CudaEventBackend::elapsed_seconds(const SampleWindow&, double& seconds) {
  float ms = 0;
  if (cudaError_t e = cudaEventElapsedTime(&ms, start_, stop_); e != cudaSuccess) return e;
  seconds = static_cast<double>(ms) * 1e-3;
  return 0;
}

BackendFactory cuda_event_backend(CudaStream stream) {
  return [stream] { return std::make_unique<CudaEventBackend>(stream); };
}

}  // namespace diescope::harness
