// The few pieces of NVML's C ABI diescope uses, declared here because the build machines have no
// nvml.h: return codes, the opaque device handle, and the three structs whose layout NVML documents
// (nvmlUtilization_t, nvmlSample_t with its value union, nvmlProcessInfo_v2_t). Values and layouts
// follow NVML's published header; nothing else of it is copied. Internal: the public header
// (diescope/collect/nvml.hpp) carries no vendor types.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace diescope::collect::nvml_abi {

using Return = int;  // nvmlReturn_t
inline constexpr Return kSuccess = 0;
inline constexpr Return kErrorUninitialized = 1;
inline constexpr Return kErrorInvalidArgument = 2;
inline constexpr Return kErrorNotSupported = 3;
inline constexpr Return kErrorNoPermission = 4;
inline constexpr Return kErrorNotFound = 6;
inline constexpr Return kErrorInsufficientSize = 7;
inline constexpr Return kErrorDriverNotLoaded = 9;
inline constexpr Return kErrorTimeout = 10;
inline constexpr Return kErrorLibraryNotFound = 12;
inline constexpr Return kErrorFunctionNotFound = 13;
inline constexpr Return kErrorGpuIsLost = 15;
inline constexpr Return kErrorNoData = 21;
inline constexpr Return kErrorGpuNotFound = 28;
inline constexpr Return kErrorUnknown = 999;

// NVML's symbolic name for a return code ("NVML_ERROR_NOT_SUPPORTED"); "NVML_ERROR_<n>" when unknown.
std::string return_name(Return code);

struct DeviceTag;           // nvmlDevice_st, opaque
using Device = DeviceTag*;  // nvmlDevice_t

struct Utilization {  // nvmlUtilization_t
  unsigned int gpu;
  unsigned int memory;
};

union Value {  // nvmlValue_t
  double dVal;
  int siVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  signed long long sllVal;
  unsigned short usVal;
};
inline constexpr int kValueDouble = 0;  // nvmlValueType_t
inline constexpr int kValueUnsignedInt = 1;
inline constexpr int kValueUnsignedLong = 2;
inline constexpr int kValueUnsignedLongLong = 3;
inline constexpr int kValueSignedLongLong = 4;
inline constexpr int kValueSignedInt = 5;
inline constexpr int kValueUnsignedShort = 6;

struct FieldValue {  // nvmlFieldValue_t
  unsigned int fieldId;
  unsigned int scopeId;
  long long timestamp;    // microseconds
  long long latencyUsec;  // how old the value was when read
  int valueType;          // nvmlValueType_t
  Return nvmlReturn;
  Value value;
};
static_assert(sizeof(FieldValue) == 40, "nvmlFieldValue_t is 40 bytes");
inline constexpr unsigned kFieldTotalEnergy = 83;  // NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION (mJ)

struct Sample {                  // nvmlSample_t
  unsigned long long timeStamp;  // microseconds since the Unix epoch
  Value sampleValue;
};
static_assert(sizeof(Sample) == 16, "nvmlSample_t is 16 bytes");

struct ProcessInfoV2 {  // nvmlProcessInfo_v2_t, the layout the _v2 and _v3 calls fill
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};
static_assert(sizeof(ProcessInfoV2) == 24, "nvmlProcessInfo_v2_t is 24 bytes");
struct ProcessInfoV1 {  // nvmlProcessInfo_v1_t, for drivers with only the unversioned calls
  unsigned int pid;
  unsigned long long usedGpuMemory;
};
static_assert(sizeof(ProcessInfoV1) == 16, "nvmlProcessInfo_v1_t is 16 bytes");

struct ProcessUtilizationSample {  // nvmlProcessUtilizationSample_t
  unsigned int pid;
  unsigned long long timeStamp;  // microseconds since the Unix epoch
  unsigned int smUtil;
  unsigned int memUtil;
  unsigned int encUtil;
  unsigned int decUtil;
};
static_assert(sizeof(ProcessUtilizationSample) == 32, "nvmlProcessUtilizationSample_t is 32 bytes");
// nvmlProcessInfo_v2_t::gpuInstanceId when MIG is off.
inline constexpr unsigned kNoGpuInstance = 0xFFFFFFFFu;
inline constexpr unsigned kDeviceMigEnable = 1;  // NVML_DEVICE_MIG_ENABLE

inline constexpr int kClockSm = 1;  // nvmlClockType_t
inline constexpr int kClockMem = 2;
inline constexpr int kGpuUtilizationSamples = 1;  // nvmlSamplingType_t
inline constexpr unsigned kNameBuffer = 96;       // NVML_DEVICE_NAME_V2_BUFFER_SIZE
inline constexpr unsigned kUuidBuffer = 96;       // NVML_DEVICE_UUID_V2_BUFFER_SIZE
inline constexpr unsigned kDriverBuffer = 80;     // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE

// GPM (GPU performance monitoring, Hopper and later): the driver's own counters, read as pairs of
// samples. Layouts as NVML's header declares them.
struct GpmSampleTag;                                  // nvmlGpmSample_st, opaque
using GpmSample = GpmSampleTag*;                      // nvmlGpmSample_t
inline constexpr unsigned kGpmSupportVersion = 1;     // NVML_GPM_SUPPORT_VERSION
inline constexpr unsigned kGpmMetricsGetVersion = 1;  // NVML_GPM_METRICS_GET_VERSION
// NVML_GPM_METRIC_MAX in CUDA 13's header (older headers have fewer entries). Only numMetrics
// entries are read or written, so a larger array than the driver's is safe and a smaller one is not.
inline constexpr unsigned kGpmMetricMax = 333;
struct GpmSupport {  // nvmlGpmSupport_t
  unsigned int version;
  unsigned int isSupportedDevice;
};
struct GpmMetric {  // nvmlGpmMetric_t
  unsigned int metricId;
  Return nvmlReturn;
  double value;
  struct {
    char* shortName;
    char* longName;
    char* unit;
  } metricInfo;
};
static_assert(sizeof(GpmMetric) == 40, "nvmlGpmMetric_t is 40 bytes");
struct GpmMetricsGet {  // nvmlGpmMetricsGet_t
  unsigned int version;
  unsigned int numMetrics;
  GpmSample sample1;
  GpmSample sample2;
  GpmMetric metrics[kGpmMetricMax];
};

struct PciInfo {  // nvmlPciInfo_t
  char busIdLegacy[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[32];  // "00000000:19:00.0", as dcgm-exporter's pci_bus_id label
};
static_assert(sizeof(PciInfo) == 68, "nvmlPciInfo_t is 68 bytes");

// The function table. Required entries are never null once loaded; optional ones are null when the
// driver lacks them. Tests fill one with fakes.
struct Functions {
  // Required.
  Return (*init)() = nullptr;                              // nvmlInit_v2, else nvmlInit
  Return (*shutdown)() = nullptr;                          // nvmlShutdown
  const char* (*error_string)(Return) = nullptr;           // nvmlErrorString
  Return (*device_count)(unsigned*) = nullptr;             // nvmlDeviceGetCount_v2, else nvmlDeviceGetCount
  Return (*handle_by_index)(unsigned, Device*) = nullptr;  // nvmlDeviceGetHandleByIndex_v2, else unversioned
  Return (*name)(Device, char*, unsigned) = nullptr;       // nvmlDeviceGetName
  Return (*uuid)(Device, char*, unsigned) = nullptr;       // nvmlDeviceGetUUID
  Return (*driver_version)(char*, unsigned) = nullptr;     // nvmlSystemGetDriverVersion
  Return (*utilization_rates)(Device, Utilization*) = nullptr;  // nvmlDeviceGetUtilizationRates
  Return (*clock_info)(Device, int, unsigned*) = nullptr;       // nvmlDeviceGetClockInfo
  // Optional.
  Return (*samples)(Device, int, unsigned long long, int*, unsigned*,
                    Sample*) = nullptr;                        // nvmlDeviceGetSamples
  Return (*compute_capability)(Device, int*, int*) = nullptr;  // nvmlDeviceGetCudaComputeCapability
  Return (*pci_info)(Device, PciInfo*) = nullptr;              // nvmlDeviceGetPciInfo_v3
  Return (*clock_event_reasons)(Device, unsigned long long*) =
      nullptr;  // ...ClocksEventReasons, else ...ThrottleReasons
  Return (*enforced_power_limit)(Device, unsigned*) = nullptr;  // nvmlDeviceGetEnforcedPowerLimit (mW)
  Return (*power_usage)(Device, unsigned*) = nullptr;           // nvmlDeviceGetPowerUsage (mW)
  Return (*encoder_utilization)(Device, unsigned*, unsigned*) = nullptr;  // nvmlDeviceGetEncoderUtilization
  Return (*decoder_utilization)(Device, unsigned*, unsigned*) = nullptr;  // nvmlDeviceGetDecoderUtilization
  Return (*jpg_utilization)(Device, unsigned*, unsigned*) = nullptr;      // nvmlDeviceGetJpgUtilization
  // GPM (Hopper and later); all five or none are bound.
  Return (*gpm_query_support)(Device, GpmSupport*) = nullptr;  // nvmlGpmQueryDeviceSupport
  Return (*gpm_sample_alloc)(GpmSample*) = nullptr;            // nvmlGpmSampleAlloc
  Return (*gpm_sample_free)(GpmSample) = nullptr;              // nvmlGpmSampleFree
  Return (*gpm_sample_get)(Device, GpmSample) = nullptr;       // nvmlGpmSampleGet
  Return (*gpm_metrics_get)(GpmMetricsGet*) = nullptr;         // nvmlGpmMetricsGet
  // Attribution (docs/attribution.md): energy, per-process utilisation, MIG instances.
  Return (*total_energy)(Device, unsigned long long*) = nullptr;  // nvmlDeviceGetTotalEnergyConsumption (mJ)
  Return (*field_values)(Device, int, FieldValue*) = nullptr;     // nvmlDeviceGetFieldValues
  Return (*process_utilization)(Device, ProcessUtilizationSample*, unsigned*,
                                unsigned long long) = nullptr;  // nvmlDeviceGetProcessUtilization
  Return (*mig_mode)(Device, unsigned*, unsigned*) = nullptr;   // nvmlDeviceGetMigMode (current, pending)
  Return (*max_mig_devices)(Device, unsigned*) = nullptr;       // nvmlDeviceGetMaxMigDeviceCount
  Return (*mig_device_by_index)(Device, unsigned, Device*) = nullptr;   // nvmlDeviceGetMigDeviceHandleByIndex
  Return (*gpu_instance_id)(Device, unsigned*) = nullptr;               // nvmlDeviceGetGpuInstanceId
  Return (*gpm_mig_sample_get)(Device, unsigned, GpmSample) = nullptr;  // nvmlGpmMigSampleGet
  // Process lists: the _v3 or _v2 call (24-byte entries) when present, else the unversioned one (16).
  Return (*compute_processes)(Device, unsigned*, void*) = nullptr;
  Return (*graphics_processes)(Device, unsigned*, void*) = nullptr;
  unsigned process_entry_size = sizeof(ProcessInfoV2);
  // Which symbols were bound, for the probe's report ("nvmlInit_v2", ...).
  std::string init_symbol, count_symbol, handle_symbol, reasons_symbol, compute_symbol, graphics_symbol;
};

// A loaded libnvidia-ml and its table. dlclose on destruction.
struct Library {
  void* handle = nullptr;
  std::string path;  // the name that loaded
  Functions functions;
  ~Library();
};

// dlopen("libnvidia-ml.so.1"), then /usr/local/nvidia/lib64/libnvidia-ml.so.1; binds every symbol,
// newest version first. Throws DeviceError when the library or a required symbol is missing.
std::unique_ptr<Library> load_library();

}  // namespace diescope::collect::nvml_abi
