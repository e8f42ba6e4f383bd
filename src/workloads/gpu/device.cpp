#include "device.hpp"

#include <cuda_runtime.h>

#include <string>

#include "diescope/core/error.hpp"

namespace diescope::workloads::gpu {

namespace {

std::string version_string(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

}  // namespace

void check(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return;
  const std::string detail = std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status);
  if (status == cudaErrorMemoryAllocation) {
    throw core::DeviceError(
        std::string(what) + " failed: not enough GPU memory (" + detail + ")",
        "use a smaller problem size, or free the GPU from other processes (nvidia-smi lists them)");
  }
  if (status == cudaErrorNoKernelImageForDevice || status == cudaErrorUnsupportedPtxVersion) {
    throw core::DeviceError(
        std::string(what) + " failed: this build has no kernel for this GPU (" + detail + ")",
        "rebuild with this GPU's architecture in CMAKE_CUDA_ARCHITECTURES, or update the driver");
  }
  throw core::DeviceError(
      std::string(what) + " failed (" + detail + ")",
      "check the GPU with nvidia-smi; if it reports errors, the GPU or driver needs attention");
}

DeviceInfo open_device(int index) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status == cudaErrorNoDevice || (status == cudaSuccess && count == 0)) {
    throw core::DeviceError("no CUDA GPU found on this machine",
                            "run the workload on a machine with an NVIDIA GPU (nvidia-smi should list it)");
  }
  if (status == cudaErrorInsufficientDriver) {
    int runtime = 0;
    cudaRuntimeGetVersion(&runtime);
    throw core::DeviceError("the NVIDIA driver is missing or too old for CUDA " + version_string(runtime) +
                                ", which this binary was built with",
                            "install an NVIDIA driver that supports CUDA " + version_string(runtime) +
                                " or newer and check that nvidia-smi works");
  }
  check(status, "counting CUDA devices");
  if (index < 0 || index >= count) {
    throw core::UsageError(
        "GPU index " + std::to_string(index) + " does not exist: this machine has " + std::to_string(count) +
            " CUDA device" + (count == 1 ? "" : "s"),
        "use --device 0" + (count > 1 ? " to " + std::to_string(count - 1) : std::string()));
  }
  check(cudaSetDevice(index), "selecting the CUDA device");
  check(cudaFree(nullptr), "creating the CUDA context");

  DeviceInfo info;
  info.index = index;
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, index), "reading the device properties");
  info.name = prop.name;
  info.cc_major = prop.major;
  info.cc_minor = prop.minor;
  info.sm_count = prop.multiProcessorCount;
  info.max_threads_per_sm = prop.maxThreadsPerMultiProcessor;
  info.shared_per_sm = prop.sharedMemPerMultiprocessor;
  info.shared_per_block_optin = prop.sharedMemPerBlockOptin;
  info.reserved_shared_per_block = prop.reservedSharedMemPerBlock;
  info.total_memory = prop.totalGlobalMem;
  char bus[32] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, index) == cudaSuccess) info.pci_bus_id = bus;
  int clock_khz = 0;
  check(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, index), "reading the rated SM clock");
  info.rated_max_sm_clock_mhz = clock_khz / 1000.0;
  check(cudaDriverGetVersion(&info.driver_cuda_version), "reading the driver's CUDA version");
  check(cudaRuntimeGetVersion(&info.runtime_version), "reading the CUDA runtime version");
  return info;
}

nlohmann::json device_json(const DeviceInfo& d) {
  return {{"index", d.index},
          {"name", d.name},
          {"pci_bus_id", d.pci_bus_id},
          {"compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)},
          {"sm_count", d.sm_count},
          {"memory_bytes", d.total_memory},
          {"rated_max_sm_clock_mhz", d.rated_max_sm_clock_mhz},
          {"driver_cuda_version", version_string(d.driver_cuda_version)},
          {"runtime_cuda_version", version_string(d.runtime_version)}};
}

DeviceBuffer::DeviceBuffer(std::size_t bytes, const char* what) : bytes_(bytes) {
  check(cudaMalloc(&ptr_, bytes), what);
}
DeviceBuffer::~DeviceBuffer() {
  if (ptr_ != nullptr) cudaFree(ptr_);
}

Event::Event() {
  check(cudaEventCreate(&event_), "creating a CUDA event");
}
Event::~Event() {
  if (event_ != nullptr) cudaEventDestroy(event_);
}
void Event::record(cudaStream_t stream) {
  check(cudaEventRecord(event_, stream), "recording a CUDA event");
}

double elapsed_ms(const Event& from, const Event& to) {
  check(cudaEventSynchronize(to.get()), "waiting for the GPU");
  float ms = 0.0f;
  check(cudaEventElapsedTime(&ms, from.get(), to.get()), "reading a CUDA event time");
  return static_cast<double>(ms);
}

Stream::Stream() {
  check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "creating a CUDA stream");
}
Stream::~Stream() {
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}
void Stream::synchronize(const char* what) {
  check(cudaStreamSynchronize(stream_), what);
}

}  // namespace diescope::workloads::gpu
