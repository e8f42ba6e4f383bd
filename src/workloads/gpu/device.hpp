// The CUDA device a workload runs on, and CUDA errors turned into diescope errors with a fix.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace diescope::workloads::gpu {

struct DeviceInfo {
  int index = 0;
  std::string name;
  std::string pci_bus_id;
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  int max_threads_per_sm = 0;
  std::uint64_t shared_per_sm = 0;
  std::uint64_t shared_per_block_optin = 0;
  std::uint64_t reserved_shared_per_block = 0;
  std::uint64_t total_memory = 0;
  double rated_max_sm_clock_mhz = 0.0;  // cudaDevAttrClockRate: the rated peak, not the live clock
  int driver_cuda_version = 0;          // highest CUDA version the installed driver supports
  int runtime_version = 0;              // the CUDA runtime linked into this binary
};

// Selects device `index` and reads what the workloads need. Throws DeviceError for no driver or no
// GPU, UsageError for an index that does not exist.
DeviceInfo open_device(int index);

// Throws DeviceError naming `what` and CUDA's error when `status` is not cudaSuccess.
void check(cudaError_t status, const char* what);

nlohmann::json device_json(const DeviceInfo& device);

// RAII CUDA resources.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t bytes, const char* what);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  template <typename T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  void* get_void() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

class Event {
 public:
  Event();
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return event_; }
  void record(cudaStream_t stream);

 private:
  cudaEvent_t event_ = nullptr;
};

// Milliseconds between two recorded, completed events.
double elapsed_ms(const Event& from, const Event& to);

class Stream {
 public:
  Stream();
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }
  void synchronize(const char* what);

 private:
  cudaStream_t stream_ = nullptr;
};

}  // namespace diescope::workloads::gpu
