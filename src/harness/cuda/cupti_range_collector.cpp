#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>

#include <cstdint>
#include <vector>

#include <fmt/format.h>

#include "diescope/harness/cupti.hpp"
#include "diescope/harness/cuda.hpp"

namespace diescope::harness {

namespace {

constexpr const char* kRangeName = "diescope";

// CUPTI's parameter structs: zeroed, with their size set (CUPTI checks it for ABI compatibility).
template <typename Params>
Params make_params(std::size_t struct_size) {
  Params p{};
  p.structSize = struct_size;
  return p;
}

std::string cupti_error_text(CUptiResult r) {
  const char* text = nullptr;
  cuptiGetResultString(r, &text);
  return text ? text : "unknown CUPTI error";
}

void check(CUptiResult r, const char* call, CounterErrorKind kind) {
  if (r == CUPTI_SUCCESS) return;
  if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES) {
    throw CounterError(CounterErrorKind::Permission,
                       fmt::format("{}: {}; GPU counters are restricted to administrators here (run as root, or load "
                                   "the driver with NVreg_RestrictProfilingToAdminUsers=0)",
                                   call, cupti_error_text(r)),
                       r);
  }
  if (r == CUPTI_ERROR_INVALID_METRIC_NAME) kind = CounterErrorKind::Metric;
  throw CounterError(kind, fmt::format("{}: {}", call, cupti_error_text(r)), r);
}

void check_cuda(cudaError_t e, const char* call) {
  if (e == cudaSuccess) return;
  throw CounterError(CounterErrorKind::Setup,
                     fmt::format("{}: {} ({}); counters need a CUDA GPU and driver", call, cudaGetErrorName(e),
                                 cudaGetErrorString(e)),
                     e);
}

// The CUPTI host object: metric names to config images and raw counters to values. Works without a
// GPU for any chip CUPTI knows.
class HostObject {
 public:
  HostObject(const std::string& chip, const std::uint8_t* availability) {
    auto p = make_params<CUpti_Profiler_Host_Initialize_Params>(CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
    p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    p.pChipName = chip.c_str();
    p.pCounterAvailabilityImage = availability;
    check(cuptiProfilerHostInitialize(&p), "cuptiProfilerHostInitialize", CounterErrorKind::Setup);
    object_ = p.pHostObject;
  }
  ~HostObject() {
    auto p = make_params<CUpti_Profiler_Host_Deinitialize_Params>(CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
    p.pHostObject = object_;
    cuptiProfilerHostDeinitialize(&p);
  }
  HostObject(const HostObject&) = delete;
  HostObject& operator=(const HostObject&) = delete;

  std::vector<std::uint8_t> config_image(std::vector<const char*>& names) {
    auto add = make_params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
    add.pHostObject = object_;
    add.ppMetricNames = names.data();
    add.numMetrics = names.size();
    check(cuptiProfilerHostConfigAddMetrics(&add), "adding the metrics (a name this chip lacks?)",
          CounterErrorKind::Metric);
    auto size = make_params<CUpti_Profiler_Host_GetConfigImageSize_Params>(CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
    size.pHostObject = object_;
    check(cuptiProfilerHostGetConfigImageSize(&size), "cuptiProfilerHostGetConfigImageSize", CounterErrorKind::Setup);
    std::vector<std::uint8_t> image(size.configImageSize);
    auto get = make_params<CUpti_Profiler_Host_GetConfigImage_Params>(CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
    get.pHostObject = object_;
    get.configImageSize = image.size();
    get.pConfigImage = image.data();
    check(cuptiProfilerHostGetConfigImage(&get), "cuptiProfilerHostGetConfigImage", CounterErrorKind::Setup);
    return image;
  }

  CUpti_Profiler_Host_Object* get() const { return object_; }

 private:
  CUpti_Profiler_Host_Object* object_ = nullptr;
};

std::size_t passes_of(std::vector<std::uint8_t>& config) {
  auto p = make_params<CUpti_Profiler_Host_GetNumOfPasses_Params>(CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
  p.configImageSize = config.size();
  p.pConfigImage = config.data();
  check(cuptiProfilerHostGetNumOfPasses(&p), "cuptiProfilerHostGetNumOfPasses", CounterErrorKind::Setup);
  return p.numOfPasses;
}

std::vector<const char*> profiler_names(const std::vector<CounterMetric>& metrics) {
  std::vector<const char*> names;
  for (const CounterMetric& m : metrics) names.push_back(m.profiler_name.c_str());
  return names;
}

CUcontext current_context() {
  // Through the runtime's entry-point query, so the library needs no link to libcuda.
  using GetCurrent = CUresult (*)(CUcontext*);
  void* function = nullptr;
  cudaDriverEntryPointQueryResult status{};
  check_cuda(cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &function, 12000, cudaEnableDefault, &status),
             "looking up cuCtxGetCurrent");
  if (!function || status != cudaDriverEntryPointSuccess) {
    throw CounterError(CounterErrorKind::Setup, "the driver does not provide cuCtxGetCurrent");
  }
  CUcontext context = nullptr;
  if (reinterpret_cast<GetCurrent>(function)(&context) != CUDA_SUCCESS || !context) {
    throw CounterError(CounterErrorKind::Setup, "no current CUDA context");
  }
  return context;
}

}  // namespace

struct CuptiRangeCollector::Impl {
  std::vector<CounterMetric> metrics;
  std::vector<const char*> names;
  std::string chip;
  std::vector<std::uint8_t> availability;
  std::unique_ptr<HostObject> host;
  std::vector<std::uint8_t> config;
  std::vector<std::uint8_t> counter_data;
  std::size_t passes = 0;
  bool profiler_initialized = false;
  CUpti_RangeProfiler_Object* range_profiler = nullptr;
};

CuptiRangeCollector::CuptiRangeCollector(std::vector<CounterMetric> metrics, int device)
    : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.metrics = std::move(metrics);
  s.names = profiler_names(s.metrics);
  if (s.names.empty()) throw CounterError(CounterErrorKind::Metric, "no counter metric was asked for");

  check_cuda(cudaSetDevice(device), "cudaSetDevice");
  check_cuda(cudaFree(nullptr), "creating the CUDA context");
  const CUcontext context = current_context();

  auto init = make_params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
  check(cuptiProfilerInitialize(&init), "cuptiProfilerInitialize", CounterErrorKind::Setup);
  s.profiler_initialized = true;

  auto chip = make_params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
  chip.deviceIndex = static_cast<std::size_t>(device);
  check(cuptiDeviceGetChipName(&chip), "cuptiDeviceGetChipName", CounterErrorKind::Setup);
  s.chip = chip.pChipName;

  auto avail = make_params<CUpti_Profiler_GetCounterAvailability_Params>(CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
  avail.ctx = context;
  check(cuptiProfilerGetCounterAvailability(&avail), "cuptiProfilerGetCounterAvailability", CounterErrorKind::Setup);
  s.availability.resize(avail.counterAvailabilityImageSize);
  avail.pCounterAvailabilityImage = s.availability.data();
  check(cuptiProfilerGetCounterAvailability(&avail), "cuptiProfilerGetCounterAvailability", CounterErrorKind::Setup);

  s.host = std::make_unique<HostObject>(s.chip, s.availability.data());
  s.config = s.host->config_image(s.names);
  s.passes = passes_of(s.config);

  auto enable = make_params<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
  enable.ctx = context;
  check(cuptiRangeProfilerEnable(&enable), "cuptiRangeProfilerEnable", CounterErrorKind::Setup);
  s.range_profiler = enable.pRangeProfilerObject;

  auto size = make_params<CUpti_RangeProfiler_GetCounterDataSize_Params>(CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
  size.pRangeProfilerObject = s.range_profiler;
  size.pMetricNames = s.names.data();
  size.numMetrics = s.names.size();
  size.maxNumOfRanges = 1;
  size.maxNumRangeTreeNodes = 1;
  check(cuptiRangeProfilerGetCounterDataSize(&size), "cuptiRangeProfilerGetCounterDataSize", CounterErrorKind::Setup);
  s.counter_data.resize(size.counterDataSize);
  auto data = make_params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
  data.pRangeProfilerObject = s.range_profiler;
  data.counterDataSize = s.counter_data.size();
  data.pCounterData = s.counter_data.data();
  check(cuptiRangeProfilerCounterDataImageInitialize(&data), "cuptiRangeProfilerCounterDataImageInitialize",
        CounterErrorKind::Setup);

  // One user range, replayed by us once per pass.
  auto config = make_params<CUpti_RangeProfiler_SetConfig_Params>(CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
  config.pRangeProfilerObject = s.range_profiler;
  config.configSize = s.config.size();
  config.pConfig = s.config.data();
  config.counterDataImageSize = s.counter_data.size();
  config.pCounterDataImage = s.counter_data.data();
  config.range = CUPTI_UserRange;
  config.replayMode = CUPTI_UserReplay;
  config.maxRangesPerPass = 1;
  config.numNestingLevels = 1;
  config.minNestingLevel = 1;
  config.passIndex = 0;
  config.targetNestingLevel = 1;
  check(cuptiRangeProfilerSetConfig(&config), "cuptiRangeProfilerSetConfig", CounterErrorKind::Setup);
}

CuptiRangeCollector::~CuptiRangeCollector() {
  if (impl_->range_profiler) {
    auto p = make_params<CUpti_RangeProfiler_Disable_Params>(CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
    p.pRangeProfilerObject = impl_->range_profiler;
    cuptiRangeProfilerDisable(&p);
  }
  impl_->host.reset();
  if (impl_->profiler_initialized) {
    auto p = make_params<CUpti_Profiler_DeInitialize_Params>(CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE);
    cuptiProfilerDeInitialize(&p);
  }
}

const std::string& CuptiRangeCollector::chip() const { return impl_->chip; }
std::size_t CuptiRangeCollector::passes() const { return impl_->passes; }

void CuptiRangeCollector::begin() {
  auto start = make_params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
  start.pRangeProfilerObject = impl_->range_profiler;
  check(cuptiRangeProfilerStart(&start), "cuptiRangeProfilerStart", CounterErrorKind::Collection);
  auto push = make_params<CUpti_RangeProfiler_PushRange_Params>(CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE);
  push.pRangeProfilerObject = impl_->range_profiler;
  push.pRangeName = kRangeName;
  check(cuptiRangeProfilerPushRange(&push), "cuptiRangeProfilerPushRange", CounterErrorKind::Collection);
}

bool CuptiRangeCollector::end() {
  if (cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess) {
    throw CounterError(CounterErrorKind::Collection,
                       fmt::format("the workload failed on the device: {}", cudaGetErrorName(e)), e);
  }
  auto pop = make_params<CUpti_RangeProfiler_PopRange_Params>(CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE);
  pop.pRangeProfilerObject = impl_->range_profiler;
  check(cuptiRangeProfilerPopRange(&pop), "cuptiRangeProfilerPopRange", CounterErrorKind::Collection);
  auto stop = make_params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
  stop.pRangeProfilerObject = impl_->range_profiler;
  check(cuptiRangeProfilerStop(&stop), "cuptiRangeProfilerStop", CounterErrorKind::Collection);
  return stop.isAllPassSubmitted != 0;
}

std::vector<MetricValue> CuptiRangeCollector::decode() {
  Impl& s = *impl_;
  auto decode = make_params<CUpti_RangeProfiler_DecodeData_Params>(CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
  decode.pRangeProfilerObject = s.range_profiler;
  check(cuptiRangeProfilerDecodeData(&decode), "cuptiRangeProfilerDecodeData", CounterErrorKind::Collection);
  auto info = make_params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
  info.pCounterDataImage = s.counter_data.data();
  info.counterDataImageSize = s.counter_data.size();
  check(cuptiRangeProfilerGetCounterDataInfo(&info), "cuptiRangeProfilerGetCounterDataInfo",
        CounterErrorKind::Collection);
  if (info.numTotalRanges < 1) {
    throw CounterError(CounterErrorKind::Collection,
                       "no range was recorded; the workload launched no GPU work between begin() and end()");
  }
  std::vector<double> values(s.names.size());
  auto evaluate = make_params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
  evaluate.pHostObject = s.host->get();
  evaluate.pCounterDataImage = s.counter_data.data();
  evaluate.counterDataImageSize = s.counter_data.size();
  evaluate.rangeIndex = 0;
  evaluate.ppMetricNames = s.names.data();
  evaluate.numMetrics = s.names.size();
  evaluate.pMetricValues = values.data();
  check(cuptiProfilerHostEvaluateToGpuValues(&evaluate), "cuptiProfilerHostEvaluateToGpuValues",
        CounterErrorKind::Collection);

  std::vector<MetricValue> out;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const CounterMetric& m = s.metrics[i];
    out.push_back(MetricValue(m.stable_name, values[i], m.unit).with_section("gpu_counters").with_display_name(m.display_name));
  }
  return out;
}

std::size_t counter_pass_count(const std::string& chip, const std::vector<CounterMetric>& metrics) {
  std::vector<const char*> names = profiler_names(metrics);
  HostObject host(chip, nullptr);
  std::vector<std::uint8_t> config = host.config_image(names);
  return passes_of(config);
}

DiagnosticPass counter_replay_pass(std::function<void(State&)> workload, std::vector<CounterMetric> metrics,
                                   int device) {
  return [workload = std::move(workload), metrics = std::move(metrics), device](State& state) {
    CuptiRangeCollector collector(metrics, device);
    return collect_counters(collector, [&] { workload(state); }, collector.passes() + 1);
  };
}

}  // namespace diescope::harness
