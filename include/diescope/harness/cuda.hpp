// The CUDA side of diescope::harness (library diescope_harness_cuda, built only where nvcc exists):
// CUDA-event timing on a chosen stream and L2 flushing for cold samples. The header needs no CUDA
// header itself: CudaStream is the same type as cudaStream_t.
#pragma once

#include <cstddef>
#include <string>

#include "diescope/harness/backend.hpp"
#include "diescope/harness/clock.hpp"
#include "diescope/harness/flush.hpp"

struct CUstream_st;
struct CUevent_st;

namespace diescope::harness {

using CudaStream = CUstream_st*;  // cudaStream_t; nullptr is the legacy default stream

// "cudaErrorInvalidValue" for 1, and so on.
std::string cuda_error_name(int code);

// Records a CUDA event on `stream` before the benchmark function and another after it, waits for
// the second, and reports the events' elapsed time as the sample's duration (see backend.hpp for the
// metrics). The work must be issued on the same stream. A CUDA error, including failing to create
// the events on a machine without a GPU, becomes cuda_error_code and a failed sample.
class CudaEventBackend final : public DeviceEventBackend {
 public:
  explicit CudaEventBackend(CudaStream stream = nullptr);
  ~CudaEventBackend() override;
  CudaEventBackend(const CudaEventBackend&) = delete;
  CudaEventBackend& operator=(const CudaEventBackend&) = delete;
  std::string_view label() const override { return "cuda-events"; }

 protected:
  int record_start() override;
  int record_stop_and_wait() override;
  int elapsed_seconds(const SampleWindow& window, double& seconds) override;
  std::string error_name(int code) const override { return cuda_error_name(code); }

 private:
  CudaStream stream_;
  CUevent_st* start_ = nullptr;
  CUevent_st* stop_ = nullptr;
  int creation_error_ = 0;
};

BackendFactory cuda_event_backend(CudaStream stream = nullptr);

// Evicts the GPU's L2 before each cold sample by reading a device buffer twice the L2's size on
// `stream` (so the read is ordered before the sample's start event). A read leaves only clean lines:
// a written flush would leave the sample up to one L2 of dirty lines to write back in its window. Throws
// DeviceError when the device or the buffer is unavailable.
class CudaL2Flusher final : public CacheFlusher {
 public:
  explicit CudaL2Flusher(CudaStream stream = nullptr);
  ~CudaL2Flusher() override;
  CudaL2Flusher(const CudaL2Flusher&) = delete;
  CudaL2Flusher& operator=(const CudaL2Flusher&) = delete;
  void flush() override;
  std::string describe() const override;
  std::size_t l2_bytes() const { return l2_bytes_; }
  std::size_t buffer_bytes() const { return buffer_bytes_; }

 private:
  CudaStream stream_;
  void* buffer_ = nullptr;
  std::size_t l2_bytes_ = 0;
  std::size_t buffer_bytes_ = 0;
  int blocks_ = 0;
};

CacheFlusherFactory cuda_l2_flusher(CudaStream stream = nullptr);

// Throttle detection for a CUDA device: the SM clock read through NVML after every sample, against
// the device's peak clock (cudaDevAttrClockRate) as the reference. The device is matched to its NVML
// handle by UUID, so CUDA_VISIBLE_DEVICES reordering cannot pick the wrong GPU. Where NVML cannot be
// loaded the monitor reads nothing and the runner says throttle detection is off, and why.
ClockMonitorFactory gpu_clock_monitor(int cuda_device = 0);

}  // namespace diescope::harness
