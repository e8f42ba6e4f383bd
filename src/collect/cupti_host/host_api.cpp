#include "host_api.hpp"

#include <dlfcn.h>

#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_result.h>
#include <cupti_target.h>

#include "cupti_call.hpp"

namespace diescope::collect::cupti_host {
namespace {

CUpti_Profiler_Host_Object* host(void* object) {
  return static_cast<CUpti_Profiler_Host_Object*>(object);
}

CUpti_MetricType cupti_metric_type(MetricType type) {
  switch (type) {
    case MetricType::counter:
      return CUPTI_METRIC_TYPE_COUNTER;
    case MetricType::ratio:
      return CUPTI_METRIC_TYPE_RATIO;
    case MetricType::throughput:
      return CUPTI_METRIC_TYPE_THROUGHPUT;
  }
  return CUPTI_METRIC_TYPE_COUNTER;
}

}  // namespace

std::vector<std::string> supported_chips() {
  auto p = DIESCOPE_CUPTI_PARAMS(CUpti_Profiler_Host_GetSupportedChips_Params);
  DIESCOPE_CUPTI_CHECK(cuptiProfilerHostGetSupportedChips(&p));
  std::vector<std::string> chips;
  for (std::size_t i = 0; i < p.numChips; ++i) chips.emplace_back(p.ppChipNames[i]);
  return chips;
}

HostObject::HostObject(std::string chip, const std::vector<std::uint8_t>& availability)
    : chip_(std::move(chip)) {
  auto p = DIESCOPE_CUPTI_PARAMS(CUpti_Profiler_Host_Initialize_Params);
  p.profilerType = CUPTI_PROFILER_TYPE_PM_SAMPLING;
  p.pChipName = chip_.c_str();
  p.pCounterAvailabilityImage = availability.empty() ? nullptr : availability.data();
  const CUptiResult rc = cuptiProfilerHostInitialize(&p);
  if (rc != CUPTI_SUCCESS) {
    throw core::DeviceError(
        "CUPTI's host API does not know chip \"" + chip_ + "\" (" + cupti::result_name(rc) + ")",
        "use a name from `diescope-cupti list-chips`, e.g. GH100");
  }
  object_ = p.pHostObject;
}

HostObject::~HostObject() {
  if (!object_) return;
  auto p = DIESCOPE_CUPTI_PARAMS(CUpti_Profiler_Host_Deinitialize_Params);
  p.pHostObject = host(object_);
  cuptiProfilerHostDeinitialize(&p);  // nothing to do about a failure while releasing
}

std::vector<std::string> HostObject::base_metrics(MetricType type) const {
  auto p = DIESCOPE_CUPTI_PARAMS(CUpti_Profiler_Host_GetBaseMetrics_Params);
  p.pHostObject = host(object_);
  p.metricType = cupti_metric_type(type);
  DIESCOPE_CUPTI_CHECK(cuptiProfilerHostGetBaseMetrics(&p));
  std::vector<std::string> names;
  for (std::size_t i = 0; i < p.numMetrics; ++i) names.emplace_back(p.ppMetricNames[i]);
  return names;
}

bool HostObject::add_metrics(const std::vector<std::string>& metrics) {
  std::vector<const char*> names;
  names.reserve(metrics.size());
  for (const auto& m : metrics) names.push_back(m.c_str());
  auto p = DIESCOPE_CUPTI_PARAMS(CUpti_Profiler_Host_ConfigAddMetrics_Params);
  p.pHostObject = host(object_);
  p.ppMetricNames = names.data();
  p.numMetrics = names.size();
  const CUptiResult rc = cuptiProfilerHostConfigAddMetrics(&p);
  if (rc == CUPTI_ERROR_INVALID_PARAMETER || rc == CUPTI_ERROR_INVALID_METRIC_NAME) return false;
  DIESCOPE_CUPTI_CHECK(rc);
  return true;
}

std::size_t HostObject::passes() const {
  std::vector<std::uint8_t> image = cupti::config_image(host(object_));
  return cupti::pass_count(image);
}

PassCount count_passes(const std::string& chip, const std::vector<std::string>& metrics,
                       const std::vector<std::uint8_t>& availability) {
  PassCount count;
  {
    HostObject object(chip, availability);
    if (object.add_metrics(metrics)) {
      count.passes = object.passes();
      return count;
    }
  }
  // CUPTI refuses the whole set without naming the culprit: try each name on a fresh object.
  for (const auto& metric : metrics) {
    HostObject one(chip, availability);
    if (!one.add_metrics({metric})) count.rejected.push_back(metric);
  }
  if (count.rejected.empty()) {
    throw core::DeviceError(
        "CUPTI refused the metric set on " + chip + " although it accepts each metric alone",
        "report this with the metric list; try fewer metrics");
  }
  return count;
}

DeviceCounters read_device_counters(int device_index) {
  // The driver is loaded at run time so that the host-only commands work where it is absent.
  void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!cuda) {
    throw core::DeviceError(std::string("the CUDA driver could not be loaded (") + dlerror() + ")",
                            "install the NVIDIA driver, or drop --device to count passes on the host only");
  }
  using InitFn = int (*)(unsigned);
  using CountFn = int (*)(int*);
  using GetFn = int (*)(int*, int);
  using RetainFn = int (*)(void**, int);
  using SetFn = int (*)(void*);
  auto init = reinterpret_cast<InitFn>(dlsym(cuda, "cuInit"));
  auto count = reinterpret_cast<CountFn>(dlsym(cuda, "cuDeviceGetCount"));
  auto get = reinterpret_cast<GetFn>(dlsym(cuda, "cuDeviceGet"));
  auto retain = reinterpret_cast<RetainFn>(dlsym(cuda, "cuDevicePrimaryCtxRetain"));
  auto set_current = reinterpret_cast<SetFn>(dlsym(cuda, "cuCtxSetCurrent"));
  if (!init || !count || !get || !retain || !set_current) {
    throw core::DeviceError("libcuda.so.1 lacks basic driver calls", "update the NVIDIA driver");
  }
  if (int rc = init(0); rc != 0) {
    throw core::DeviceError("cuInit failed with CUDA error " + std::to_string(rc) + " (100 means no GPU)",
                            "check that nvidia-smi lists a GPU");
  }
  int devices = 0;
  count(&devices);
  if (device_index < 0 || device_index >= devices) {
    throw core::DeviceError("GPU index " + std::to_string(device_index) +
                                " does not exist: the driver lists " + std::to_string(devices) + " GPU" +
                                (devices == 1 ? "" : "s"),
                            "pick an index from nvidia-smi -L");
  }
  // Counter availability wants a context on some drivers; the primary one is the cheapest to hold.
  int device = 0;
  get(&device, device_index);
  void* context = nullptr;
  if (retain(&context, device) == 0) set_current(context);

  auto init_params = DIESCOPE_CUPTI_PARAMS(CUpti_Profiler_Initialize_Params);
  DIESCOPE_CUPTI_CHECK(cuptiProfilerInitialize(&init_params));
  auto chip = DIESCOPE_CUPTI_PARAMS(CUpti_Device_GetChipName_Params);
  chip.deviceIndex = static_cast<std::size_t>(device_index);
  DIESCOPE_CUPTI_CHECK(cuptiDeviceGetChipName(&chip));
  DeviceCounters out;
  out.chip = chip.pChipName ? chip.pChipName : "";
  auto avail = DIESCOPE_CUPTI_PARAMS(CUpti_PmSampling_GetCounterAvailability_Params);
  avail.deviceIndex = static_cast<std::size_t>(device_index);
  DIESCOPE_CUPTI_CHECK(cuptiPmSamplingGetCounterAvailability(&avail));
  out.availability.resize(avail.counterAvailabilityImageSize);
  avail.pCounterAvailabilityImage = out.availability.data();
  DIESCOPE_CUPTI_CHECK(cuptiPmSamplingGetCounterAvailability(&avail));
  return out;
}

}  // namespace diescope::collect::cupti_host
