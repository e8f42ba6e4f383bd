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

#include "cupti_call.hpp"
#include "diescope/harness/cupti.hpp"
#include "diescope/harness/cuda.hpp"

namespace diescope::harness {

namespace {

constexpr const char* kRangeName = "diescope";

// A failed CUPTI call as the harness's own error (which a replay pass turns into metrics): of `kind`,
// unless CUPTI's result says permission or an unknown metric. The message keeps the call, its
// file:line, CUPTI's name for the result and what to do about it. The collector's public functions
// translate at their boundary, so its callers see CounterError only.
CounterError counter_error(const collect::cupti::CuptiError& e, CounterErrorKind kind) {
  if (e.result() == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES ||
      e.result() == CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES) {
    kind = CounterErrorKind::permission;
  } else if (e.result() == CUPTI_ERROR_INVALID_METRIC_NAME) {
    kind = CounterErrorKind::metric;
  }
  return CounterError(kind, fmt::format("{}; {}", e.cause(), e.fix()), e.result());
}

void check_cuda(cudaError_t e, const char* call) {
  if (e == cudaSuccess) return;
  throw CounterError(CounterErrorKind::setup,
                     fmt::format("{}: {} ({}); counters need a CUDA GPU and driver", call,
                                 cudaGetErrorName(e), cudaGetErrorString(e)),
                     e);
}

// The CUPTI host object: metric names to config images and raw counters to values. Works without a
// GPU for any chip CUPTI knows.
class HostObject {
 public:
  HostObject(const std::string& chip, const std::uint8_t* availability) {
    auto p = DIESCOPE_CUPTI_PARAMS(CUpti_Profiler_Host_Initialize_Params);
    p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    p.pChipName = chip.c_str();
    p.pCounterAvailabilityImage = availability;
    DIESCOPE_CUPTI_CHECK(cuptiProfilerHostInitialize(&p));
    object_ = p.pHostObject;
  }
  ~HostObject() {
    auto p = DIESCOPE_CUPTI_PARAMS(CUpti_Profiler_Host_Deinitialize_Params);
    p.pHostObject = object_;
    cuptiProfilerHostDeinitialize(&p);
  }
  HostObject(const HostObject&) = delete;
  HostObject& operator=(const HostObject&) = delete;

  std::vector<std::uint8_t> config_image(std::vector<const char*>& names) {
    auto add = DIESCOPE_CUPTI_PARAMS(CUpti_Profiler_Host_ConfigAddMetrics_Params);
    add.pHostObject = object_;
    add.ppMetricNames = names.data();
    add.numMetrics = names.size();
    try {
      DIESCOPE_CUPTI_CHECK(cuptiProfilerHostConfigAddMetrics(&add));
    } catch (const collect::cupti::CuptiError& e) {
      throw counter_error(e, CounterErrorKind::metric);  // most likely a name this chip lacks
    }
    return collect::cupti::config_image(object_);
  }

  CUpti_Profiler_Host_Object* get() const { return object_; }

 private:
  CUpti_Profiler_Host_Object* object_ = nullptr;
};

std::vector<const char*> profiler_names(const std::vector<CounterMetric>& metrics) {
  std::vector<const char*> names;
  names.reserve(metrics.size());
  for (const CounterMetric& m : metrics) names.push_back(m.profiler_name.c_str());
  return names;
}

CUcontext current_context() {
  // Through the runtime's entry-point query, so the library needs no link to libcuda.
  using GetCurrent = CUresult (*)(CUcontext*);
  void* function = nullptr;
  cudaDriverEntryPointQueryResult status{};
  check_cuda(
      cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &function, 12000, cudaEnableDefault, &status),
      "looking up cuCtxGetCurrent");
  if (!function || status != cudaDriverEntryPointSuccess) {
    throw CounterError(CounterErrorKind::setup, "the driver does not provide cuCtxGetCurrent");
  }
  CUcontext context = nullptr;
  if (reinterpret_cast<GetCurrent>(function)(&context) != CUDA_SUCCESS || !context) {
    throw CounterError(CounterErrorKind::setup, "no current CUDA context");
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

CuptiRangeCollector::CuptiRangeCollector(std::vector<CounterMetric> metrics, int device) try
    : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.metrics = std::move(metrics);
  s.names = profiler_names(s.metrics);
  if (s.names.empty()) throw CounterError(CounterErrorKind::metric, "no counter metric was asked for");

  check_cuda(cudaSetDevice(device), "cudaSetDevice");
  check_cuda(cudaFree(nullptr), "creating the CUDA context");
  const CUcontext context = current_context();

  auto init = DIESCOPE_CUPTI_PARAMS(CUpti_Profiler_Initialize_Params);
  DIESCOPE_CUPTI_CHECK(cuptiProfilerInitialize(&init));
  s.profiler_initialized = true;

  auto chip = DIESCOPE_CUPTI_PARAMS(CUpti_Device_GetChipName_Params);
  chip.deviceIndex = static_cast<std::size_t>(device);
  DIESCOPE_CUPTI_CHECK(cuptiDeviceGetChipName(&chip));
  s.chip = chip.pChipName;

  auto avail = DIESCOPE_CUPTI_PARAMS(CUpti_Profiler_GetCounterAvailability_Params);
  avail.ctx = context;
  DIESCOPE_CUPTI_CHECK(cuptiProfilerGetCounterAvailability(&avail));
  s.availability.resize(avail.counterAvailabilityImageSize);
  avail.pCounterAvailabilityImage = s.availability.data();
  DIESCOPE_CUPTI_CHECK(cuptiProfilerGetCounterAvailability(&avail));

  s.host = std::make_unique<HostObject>(s.chip, s.availability.data());
  s.config = s.host->config_image(s.names);
  s.passes = collect::cupti::pass_count(s.config);

  auto enable = DIESCOPE_CUPTI_PARAMS(CUpti_RangeProfiler_Enable_Params);
  enable.ctx = context;
  DIESCOPE_CUPTI_CHECK(cuptiRangeProfilerEnable(&enable));
  s.range_profiler = enable.pRangeProfilerObject;

  auto size = DIESCOPE_CUPTI_PARAMS(CUpti_RangeProfiler_GetCounterDataSize_Params);
  size.pRangeProfilerObject = s.range_profiler;
  size.pMetricNames = s.names.data();
  size.numMetrics = s.names.size();
  size.maxNumOfRanges = 1;
  size.maxNumRangeTreeNodes = 1;
  DIESCOPE_CUPTI_CHECK(cuptiRangeProfilerGetCounterDataSize(&size));
  s.counter_data.resize(size.counterDataSize);
  auto data = DIESCOPE_CUPTI_PARAMS(CUpti_RangeProfiler_CounterDataImage_Initialize_Params);
  data.pRangeProfilerObject = s.range_profiler;
  data.counterDataSize = s.counter_data.size();
  data.pCounterData = s.counter_data.data();
  DIESCOPE_CUPTI_CHECK(cuptiRangeProfilerCounterDataImageInitialize(&data));

  // One user range, replayed by us once per pass.
  auto config = DIESCOPE_CUPTI_PARAMS(CUpti_RangeProfiler_SetConfig_Params);
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
  DIESCOPE_CUPTI_CHECK(cuptiRangeProfilerSetConfig(&config));
} catch (const collect::cupti::CuptiError& e) {
  throw counter_error(e, CounterErrorKind::setup);
}

CuptiRangeCollector::~CuptiRangeCollector() {
  if (impl_->range_profiler) {
    auto p = DIESCOPE_CUPTI_PARAMS(CUpti_RangeProfiler_Disable_Params);
    p.pRangeProfilerObject = impl_->range_profiler;
    cuptiRangeProfilerDisable(&p);
  }
  impl_->host.reset();
  if (impl_->profiler_initialized) {
    auto p = DIESCOPE_CUPTI_PARAMS(CUpti_Profiler_DeInitialize_Params);
    cuptiProfilerDeInitialize(&p);
  }
}

const std::string& CuptiRangeCollector::chip() const {
  return impl_->chip;
}
std::size_t CuptiRangeCollector::passes() const {
  return impl_->passes;
}

void CuptiRangeCollector::begin() try {
  auto start = DIESCOPE_CUPTI_PARAMS(CUpti_RangeProfiler_Start_Params);
  start.pRangeProfilerObject = impl_->range_profiler;
  DIESCOPE_CUPTI_CHECK(cuptiRangeProfilerStart(&start));
  auto push = DIESCOPE_CUPTI_PARAMS(CUpti_RangeProfiler_PushRange_Params);
  push.pRangeProfilerObject = impl_->range_profiler;
  push.pRangeName = kRangeName;
  DIESCOPE_CUPTI_CHECK(cuptiRangeProfilerPushRange(&push));
} catch (const collect::cupti::CuptiError& e) {
  throw counter_error(e, CounterErrorKind::collection);
}

bool CuptiRangeCollector::end() try {
  if (cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess) {
    throw CounterError(CounterErrorKind::collection,
                       fmt::format("the workload failed on the device: {}", cudaGetErrorName(e)), e);
  }
  auto pop = DIESCOPE_CUPTI_PARAMS(CUpti_RangeProfiler_PopRange_Params);
  pop.pRangeProfilerObject = impl_->range_profiler;
  DIESCOPE_CUPTI_CHECK(cuptiRangeProfilerPopRange(&pop));
  auto stop = DIESCOPE_CUPTI_PARAMS(CUpti_RangeProfiler_Stop_Params);
  stop.pRangeProfilerObject = impl_->range_profiler;
  DIESCOPE_CUPTI_CHECK(cuptiRangeProfilerStop(&stop));
  return stop.isAllPassSubmitted != 0;
} catch (const collect::cupti::CuptiError& e) {
  throw counter_error(e, CounterErrorKind::collection);
}

std::vector<MetricValue> CuptiRangeCollector::decode() try {
  Impl& s = *impl_;
  auto decode = DIESCOPE_CUPTI_PARAMS(CUpti_RangeProfiler_DecodeData_Params);
  decode.pRangeProfilerObject = s.range_profiler;
  DIESCOPE_CUPTI_CHECK(cuptiRangeProfilerDecodeData(&decode));
  auto info = DIESCOPE_CUPTI_PARAMS(CUpti_RangeProfiler_GetCounterDataInfo_Params);
  info.pCounterDataImage = s.counter_data.data();
  info.counterDataImageSize = s.counter_data.size();
  DIESCOPE_CUPTI_CHECK(cuptiRangeProfilerGetCounterDataInfo(&info));
  if (info.numTotalRanges < 1) {
    throw CounterError(CounterErrorKind::collection,
                       "no range was recorded; the workload launched no GPU work between begin() and end()");
  }
  std::vector<double> values(s.names.size());
  auto evaluate = DIESCOPE_CUPTI_PARAMS(CUpti_Profiler_Host_EvaluateToGpuValues_Params);
  evaluate.pHostObject = s.host->get();
  evaluate.pCounterDataImage = s.counter_data.data();
  evaluate.counterDataImageSize = s.counter_data.size();
  evaluate.rangeIndex = 0;
  evaluate.ppMetricNames = s.names.data();
  evaluate.numMetrics = s.names.size();
  evaluate.pMetricValues = values.data();
  DIESCOPE_CUPTI_CHECK(cuptiProfilerHostEvaluateToGpuValues(&evaluate));

  std::vector<MetricValue> out;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const CounterMetric& m = s.metrics[i];
    out.push_back(MetricValue(m.stable_name, values[i], m.unit)
                      .with_section("gpu_counters")
                      .with_display_name(m.display_name));
  }
  return out;
} catch (const collect::cupti::CuptiError& e) {
  throw counter_error(e, CounterErrorKind::collection);
}

std::size_t counter_pass_count(const std::string& chip, const std::vector<CounterMetric>& metrics) try {
  std::vector<const char*> names = profiler_names(metrics);
  HostObject host(chip, nullptr);
  std::vector<std::uint8_t> config = host.config_image(names);
  return collect::cupti::pass_count(config);
} catch (const collect::cupti::CuptiError& e) {
  throw counter_error(e, CounterErrorKind::setup);
}

DiagnosticPass counter_replay_pass(std::function<void(State&)> workload, std::vector<CounterMetric> metrics,
                                   int device) {
  return [workload = std::move(workload), metrics = std::move(metrics), device](State& state) {
    CuptiRangeCollector collector(metrics, device);
    return collect_counters(
        collector, [&] { workload(state); }, collector.passes() + 1);
  };
}

}  // namespace diescope::harness
