// Loading libnvidia-ml and binding its symbols, newest version first.
#include <dlfcn.h>

#include "diescope/core/error.hpp"
#include "nvml_abi.hpp"

namespace diescope::collect::nvml_abi {
namespace {

// The library's soname, then where NVIDIA's container toolkit mounts it.
constexpr const char* kLibraryNames[] = {"libnvidia-ml.so.1", "/usr/local/nvidia/lib64/libnvidia-ml.so.1"};

// Binds the first of `names` the library has; returns the chosen name, empty when none.
template <typename Fn>
std::string bind(void* handle, Fn& target, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (void* symbol = dlsym(handle, name)) {
      target = reinterpret_cast<Fn>(symbol);
      return name;
    }
  }
  target = nullptr;
  return {};
}

}  // namespace

std::string return_name(Return code) {
  switch (code) {
    case 0:
      return "NVML_SUCCESS";
    case 1:
      return "NVML_ERROR_UNINITIALIZED";
    case 2:
      return "NVML_ERROR_INVALID_ARGUMENT";
    case 3:
      return "NVML_ERROR_NOT_SUPPORTED";
    case 4:
      return "NVML_ERROR_NO_PERMISSION";
    case 5:
      return "NVML_ERROR_ALREADY_INITIALIZED";
    case 6:
      return "NVML_ERROR_NOT_FOUND";
    case 7:
      return "NVML_ERROR_INSUFFICIENT_SIZE";
    case 8:
      return "NVML_ERROR_INSUFFICIENT_POWER";
    case 9:
      return "NVML_ERROR_DRIVER_NOT_LOADED";
    case 10:
      return "NVML_ERROR_TIMEOUT";
    case 11:
      return "NVML_ERROR_IRQ_ISSUE";
    case 12:
      return "NVML_ERROR_LIBRARY_NOT_FOUND";
    case 13:
      return "NVML_ERROR_FUNCTION_NOT_FOUND";
    case 14:
      return "NVML_ERROR_CORRUPTED_INFOROM";
    case 15:
      return "NVML_ERROR_GPU_IS_LOST";
    case 16:
      return "NVML_ERROR_RESET_REQUIRED";
    case 17:
      return "NVML_ERROR_OPERATING_SYSTEM";
    case 18:
      return "NVML_ERROR_LIB_RM_VERSION_MISMATCH";
    case 19:
      return "NVML_ERROR_IN_USE";
    case 20:
      return "NVML_ERROR_MEMORY";
    case 21:
      return "NVML_ERROR_NO_DATA";
    case 22:
      return "NVML_ERROR_VGPU_ECC_NOT_SUPPORTED";
    case 23:
      return "NVML_ERROR_INSUFFICIENT_RESOURCES";
    case 24:
      return "NVML_ERROR_FREQ_NOT_SUPPORTED";
    case 25:
      return "NVML_ERROR_ARGUMENT_VERSION_MISMATCH";
    case 26:
      return "NVML_ERROR_DEPRECATED";
    case 27:
      return "NVML_ERROR_NOT_READY";
    case 28:
      return "NVML_ERROR_GPU_NOT_FOUND";
    case 29:
      return "NVML_ERROR_INVALID_STATE";
    case 999:
      return "NVML_ERROR_UNKNOWN";
    default:
      return "NVML_ERROR_" + std::to_string(code);
  }
}

Library::~Library() {
  if (handle) dlclose(handle);
}

std::unique_ptr<Library> load_library() {
  auto library = std::make_unique<Library>();
  std::string tried;
  for (const char* name : kLibraryNames) {
    library->handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (library->handle) {
      library->path = name;
      break;
    }
    const char* why = dlerror();
    tried += std::string(tried.empty() ? "" : "; ") + (why ? why : name);
  }
  if (!library->handle) {
    throw core::DeviceError(
        "the NVIDIA driver's NVML library could not be loaded: libnvidia-ml.so.1 not found (" + tried + ")",
        "install the NVIDIA driver (nvidia-smi should then list your GPU), or add the folder "
        "holding libnvidia-ml.so.1 to LD_LIBRARY_PATH");
  }
  void* h = library->handle;
  Functions& f = library->functions;
  f.init_symbol = bind(h, f.init, {"nvmlInit_v2", "nvmlInit"});
  bind(h, f.shutdown, {"nvmlShutdown"});
  bind(h, f.error_string, {"nvmlErrorString"});
  f.count_symbol = bind(h, f.device_count, {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"});
  f.handle_symbol =
      bind(h, f.handle_by_index, {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"});
  bind(h, f.name, {"nvmlDeviceGetName"});
  bind(h, f.uuid, {"nvmlDeviceGetUUID"});
  bind(h, f.driver_version, {"nvmlSystemGetDriverVersion"});
  bind(h, f.utilization_rates, {"nvmlDeviceGetUtilizationRates"});
  bind(h, f.clock_info, {"nvmlDeviceGetClockInfo"});

  struct Required {
    const void* bound;
    const char* name;
  };
  const Required required[] = {
      {reinterpret_cast<const void*>(f.init), "nvmlInit_v2"},
      {reinterpret_cast<const void*>(f.shutdown), "nvmlShutdown"},
      {reinterpret_cast<const void*>(f.error_string), "nvmlErrorString"},
      {reinterpret_cast<const void*>(f.device_count), "nvmlDeviceGetCount_v2"},
      {reinterpret_cast<const void*>(f.handle_by_index), "nvmlDeviceGetHandleByIndex_v2"},
      {reinterpret_cast<const void*>(f.name), "nvmlDeviceGetName"},
      {reinterpret_cast<const void*>(f.uuid), "nvmlDeviceGetUUID"},
      {reinterpret_cast<const void*>(f.driver_version), "nvmlSystemGetDriverVersion"},
      {reinterpret_cast<const void*>(f.utilization_rates), "nvmlDeviceGetUtilizationRates"},
      {reinterpret_cast<const void*>(f.clock_info), "nvmlDeviceGetClockInfo"},
  };
  for (const auto& r : required) {
    if (!r.bound) {
      throw core::DeviceError(
          library->path + " lacks " + r.name + ", which diescope needs (the driver is too old)",
          "update the NVIDIA driver");
    }
  }

  bind(h, f.samples, {"nvmlDeviceGetSamples"});
  bind(h, f.compute_capability, {"nvmlDeviceGetCudaComputeCapability"});
  bind(h, f.pci_info, {"nvmlDeviceGetPciInfo_v3"});
  f.reasons_symbol =
      bind(h, f.clock_event_reasons,
           {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"});
  bind(h, f.enforced_power_limit, {"nvmlDeviceGetEnforcedPowerLimit"});
  bind(h, f.power_usage, {"nvmlDeviceGetPowerUsage"});
  bind(h, f.encoder_utilization, {"nvmlDeviceGetEncoderUtilization"});
  bind(h, f.decoder_utilization, {"nvmlDeviceGetDecoderUtilization"});
  bind(h, f.jpg_utilization, {"nvmlDeviceGetJpgUtilization"});
  bind(h, f.gpm_query_support, {"nvmlGpmQueryDeviceSupport"});
  bind(h, f.gpm_sample_alloc, {"nvmlGpmSampleAlloc"});
  bind(h, f.gpm_sample_free, {"nvmlGpmSampleFree"});
  bind(h, f.gpm_sample_get, {"nvmlGpmSampleGet"});
  bind(h, f.gpm_metrics_get, {"nvmlGpmMetricsGet"});
  if (!f.gpm_query_support || !f.gpm_sample_alloc || !f.gpm_sample_free || !f.gpm_sample_get ||
      !f.gpm_metrics_get) {
    // Half an API is none: GPM is used only when the whole set is there.
    f.gpm_query_support = nullptr;
    f.gpm_sample_alloc = nullptr;
    f.gpm_sample_free = nullptr;
    f.gpm_sample_get = nullptr;
    f.gpm_metrics_get = nullptr;
  }
  bind(h, f.total_energy, {"nvmlDeviceGetTotalEnergyConsumption"});
  bind(h, f.field_values, {"nvmlDeviceGetFieldValues"});
  bind(h, f.process_utilization, {"nvmlDeviceGetProcessUtilization"});
  bind(h, f.mig_mode, {"nvmlDeviceGetMigMode"});
  bind(h, f.max_mig_devices, {"nvmlDeviceGetMaxMigDeviceCount"});
  bind(h, f.mig_device_by_index, {"nvmlDeviceGetMigDeviceHandleByIndex"});
  bind(h, f.gpu_instance_id, {"nvmlDeviceGetGpuInstanceId"});
  if (f.gpm_sample_get) bind(h, f.gpm_mig_sample_get, {"nvmlGpmMigSampleGet"});
  // Entry layouts differ by version: _v3 and _v2 fill 24-byte entries, the unversioned call 16.
  f.compute_symbol =
      bind(h, f.compute_processes,
           {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2"});
  f.graphics_symbol =
      bind(h, f.graphics_processes,
           {"nvmlDeviceGetGraphicsRunningProcesses_v3", "nvmlDeviceGetGraphicsRunningProcesses_v2"});
  f.process_entry_size = sizeof(ProcessInfoV2);
  if (!f.compute_processes || !f.graphics_processes) {
    f.compute_symbol = bind(h, f.compute_processes, {"nvmlDeviceGetComputeRunningProcesses"});
    f.graphics_symbol = bind(h, f.graphics_processes, {"nvmlDeviceGetGraphicsRunningProcesses"});
    f.process_entry_size = sizeof(ProcessInfoV1);
  }
  return library;
}

}  // namespace diescope::collect::nvml_abi
