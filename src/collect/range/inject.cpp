// libdiescope-range.so: the injection library of `diescope roofline profile --profiler range`
// (docs/roofline.md#the-range-profiler). Loaded into any CUDA program through
// CUDA_INJECTION64_PATH (InitializeInjection) and NVTX_INJECTION64_PATH (InitializeInjectionNvtx2,
// handed on to CUPTI), it follows the NVTX regions and measures each with CUPTI's range profiler:
// a counter range opens at the first kernel launch after the current region changed and closes
// (after the context synchronised) when it changes again; the segments of one region occurrence add
// up to its row.
//
// It runs inside someone else's process, so it never throws into it and never exits it: every
// failure is one `error` line in its output file, which `diescope roofline` turns into a message
// with a fix. It links none of diescope's static libraries (they are not position independent);
// the file format is read by src/roofline/range.cpp.
//
// Environment (set by diescope roofline):
//   DIESCOPE_RANGE_OUTPUT   the file to write (required)
//   DIESCOPE_RANGE_MODE     counters (default) | timestamps (regions and launches only, no counters)
//   DIESCOPE_RANGE_METRICS  the metrics, separated by commas
//   DIESCOPE_RANGE_GROUP    which pass group this run collects (0-based)
#include <cuda.h>
#include <cupti_callbacks.h>
#include <cupti_driver_cbid.h>
#include <cupti_nvtx_cbid.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>
#include <cxxabi.h>
#include <dlfcn.h>
#include <generated_nvtx_meta.h>
#include <pthread.h>
#include <ctime>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cupti_call.hpp"  // DIESCOPE_CUPTI_PARAMS only: CuptiError must not reach the program
#include "region_tracker.hpp"

namespace {

namespace range = diescope::collect::range;

constexpr int kFormat = 1;
constexpr std::size_t kMaxRanges = 64;  // counter data image capacity; re-initialised when full

// ---- output ------------------------------------------------------------------------------------

std::FILE* g_out = nullptr;

// Tabs and newlines would break the line format; a region name keeps everything else.
std::string clean(std::string s) {
  for (char& c : s)
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  return s;
}

// printf-style by design: this library links no fmt and writes from inside CUPTI callbacks.
void line(const std::string& text) {
  if (!g_out) return;
  std::fputs(text.c_str(), g_out);
  std::fputc('\n', g_out);
  std::fflush(g_out);  // streamed: a crash keeps every line written so far
}

std::string num(double v) {
  if (std::isnan(v)) return "nan";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);  // NOLINT(cppcoreguidelines-pro-type-vararg): see line()
  return buf;
}

std::uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<std::uint64_t>(ts.tv_nsec);
}

std::string result_text(CUptiResult r) {
  const char* s = nullptr;
  cuptiGetResultString(r, &s);
  return s ? s : "CUPTI result " + std::to_string(static_cast<int>(r));
}

// A failed CUPTI call: one error line; the caller stops measuring.
bool ok(CUptiResult r, const char* call) {
  if (r == CUPTI_SUCCESS) return true;
  line(std::string("error\t") + call + "\t" + clean(result_text(r)));
  return false;
}

// ---- the driver, through the process's own libcuda ----------------------------------------------

struct Driver {
  CUresult (*ctx_get_current)(CUcontext*) = nullptr;
  CUresult (*ctx_set_current)(CUcontext) = nullptr;
  CUresult (*ctx_synchronize)() = nullptr;
  CUresult (*ctx_get_device)(CUdevice*) = nullptr;
  CUresult (*device_get_name)(char*, int, CUdevice) = nullptr;
  bool load() {
    void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!h) h = dlopen("libcuda.so.1", RTLD_NOW);
    if (!h) return false;
    ctx_get_current = reinterpret_cast<decltype(ctx_get_current)>(dlsym(h, "cuCtxGetCurrent"));
    ctx_set_current = reinterpret_cast<decltype(ctx_set_current)>(dlsym(h, "cuCtxSetCurrent"));
    ctx_synchronize = reinterpret_cast<decltype(ctx_synchronize)>(dlsym(h, "cuCtxSynchronize"));
    ctx_get_device = reinterpret_cast<decltype(ctx_get_device)>(dlsym(h, "cuCtxGetDevice"));
    device_get_name = reinterpret_cast<decltype(device_get_name)>(dlsym(h, "cuDeviceGetName"));
    return ctx_get_current && ctx_set_current && ctx_synchronize && ctx_get_device && device_get_name;
  }
};

// ---- state ---------------------------------------------------------------------------------------

enum class Mode { counters, timestamps };

// What one occurrence has gathered over its segments.
struct Accumulated {
  long launches = 0;
  std::map<std::string, long> kernels;  // name -> launches
  std::uint64_t opened_ns = 0, closed_ns = 0;
  std::vector<double> sums;  // per metric of this group, combined by its kind
  double weight = 0;         // summed duration, for the clocks' time-weighted mean
  bool measured = false;
};

struct State {
  std::mutex mutex;
  Mode mode = Mode::counters;
  Driver driver;
  bool disabled = false;  // after an error: regions still tracked, nothing measured
  std::vector<std::string> all_metrics;
  std::size_t group = 0;
  std::vector<std::string> metrics;  // this run's group
  std::vector<const char*> names;
  range::RegionTracker tracker;
  std::map<std::size_t, Accumulated> acc;  // occurrence -> figures
  Accumulated outside;                     // work outside every region
  // The segment open now: which occurrence (nullopt: outside) and its launches.
  bool segment_open = false;
  std::optional<std::size_t> segment_of;
  long segment_launches = 0;
  std::map<std::string, long> segment_kernels;
  std::uint64_t segment_opened_ns = 0;
  // CUPTI
  CUcontext context = nullptr;
  bool profiler_initialized = false;
  CUpti_RangeProfiler_Object* profiler = nullptr;
  CUpti_Profiler_Host_Object* host = nullptr;
  std::vector<std::uint8_t> config, counter_data;
  std::size_t ranges_in_image = 0;
  std::string range_name;            // of the CUPTI range open now
  std::uint64_t ranges_started = 0;  // numbers the ranges' names, each unique (cupti_range_name)
  bool finished = false;
  CUpti_SubscriberHandle subscriber = nullptr;
};

State& state() {
  static State* s = new State;  // never destroyed: callbacks may come during exit
  return *s;
}

// ---- the host object: configs and evaluation -----------------------------------------------------

CUpti_Profiler_Host_Object* make_host(const std::string& chip, const std::uint8_t* availability) {
  auto p = DIESCOPE_CUPTI_PARAMS(CUpti_Profiler_Host_Initialize_Params);
  p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  p.pChipName = chip.c_str();
  p.pCounterAvailabilityImage = availability;
  if (cuptiProfilerHostInitialize(&p) != CUPTI_SUCCESS) return nullptr;
  return p.pHostObject;
}
void free_host(CUpti_Profiler_Host_Object* h) {
  if (!h) return;
  auto p = DIESCOPE_CUPTI_PARAMS(CUpti_Profiler_Host_Deinitialize_Params);
  p.pHostObject = h;
  cuptiProfilerHostDeinitialize(&p);
}

// The config image of `metrics` on a fresh host object; empty when CUPTI refuses them.
std::vector<std::uint8_t> config_for(const std::string& chip, const std::uint8_t* availability,
                                     const std::vector<std::string>& metrics, std::size_t* passes) {
  std::vector<std::uint8_t> image;
  CUpti_Profiler_Host_Object* h = make_host(chip, availability);
  if (!h) return image;
  std::vector<const char*> names;
  names.reserve(metrics.size());
  for (const auto& m : metrics) names.push_back(m.c_str());
  auto add = DIESCOPE_CUPTI_PARAMS(CUpti_Profiler_Host_ConfigAddMetrics_Params);
  add.pHostObject = h;
  add.ppMetricNames = names.data();
  add.numMetrics = names.size();
  if (cuptiProfilerHostConfigAddMetrics(&add) == CUPTI_SUCCESS) {
    auto size = DIESCOPE_CUPTI_PARAMS(CUpti_Profiler_Host_GetConfigImageSize_Params);
    size.pHostObject = h;
    if (cuptiProfilerHostGetConfigImageSize(&size) == CUPTI_SUCCESS) {
      image.resize(size.configImageSize);
      auto get = DIESCOPE_CUPTI_PARAMS(CUpti_Profiler_Host_GetConfigImage_Params);
      get.pHostObject = h;
      get.configImageSize = image.size();
      get.pConfigImage = image.data();
      if (cuptiProfilerHostGetConfigImage(&get) != CUPTI_SUCCESS) image.clear();
    }
    if (!image.empty() && passes) {
      auto np = DIESCOPE_CUPTI_PARAMS(CUpti_Profiler_Host_GetNumOfPasses_Params);
      np.configImageSize = image.size();
      np.pConfigImage = image.data();
      *passes = cuptiProfilerHostGetNumOfPasses(&np) == CUPTI_SUCCESS ? np.numOfPasses : 0;
    }
  }
  free_host(h);
  return image;
}

}  // namespace

// The pass groups (docs/roofline.md#the-range-profiler): each metric goes into the first group it
// fits without needing a second pass; a new group starts with the duration when the two fit one pass
// together (CUPTI's SASS instruction counts do not: their group has no duration), else with the metric
// alone. A metric that needs more than one pass on its own goes to `refused`. Exported for a check
// on the host (no GPU needed).
extern "C" __attribute__((visibility("default"))) int diescope_range_groups(
    const char* chip, const std::uint8_t* availability, const char* metric_list,
    void (*emit)(void*, int, const char*), void* user) {
  std::vector<std::string> metrics;
  std::string item;
  for (const char* p = metric_list;; ++p) {
    if (*p == ',' || *p == '\0') {
      if (!item.empty()) metrics.push_back(item);
      item.clear();
      if (*p == '\0') break;
    } else {
      item += *p;
    }
  }
  const std::string duration = "gpu__time_duration.sum";
  auto one_pass = [&](const std::vector<std::string>& set) {
    std::size_t passes = 0;
    return !config_for(chip, availability, set, &passes).empty() && passes == 1;
  };
  std::vector<std::vector<std::string>> groups;
  for (const auto& m : metrics) {
    if (m == duration) continue;
    if (!one_pass({m})) {
      emit(user, -1, m.c_str());
      continue;
    }
    bool placed = false;
    for (auto& g : groups) {
      auto trial = g;
      trial.push_back(m);
      if (one_pass(trial)) {
        g = std::move(trial);
        placed = true;
        break;
      }
    }
    if (placed) continue;
    if (one_pass({duration, m}))
      groups.push_back({duration, m});
    else
      groups.push_back({m});
  }
  if (groups.empty()) groups.push_back({duration});
  for (std::size_t g = 0; g < groups.size(); ++g)
    for (const auto& m : groups[g]) emit(user, static_cast<int>(g), m.c_str());
  return static_cast<int>(groups.size());
}

namespace {

// ---- the range profiler ------------------------------------------------------------------------

// Makes the profiler ready on `ctx`: chip, availability, this run's group, config, counter data.
bool enable(State& s, CUcontext ctx) {
  s.context = ctx;
  CUdevice device = 0;
  s.driver.ctx_get_device(&device);
  char gpu[256] = {};
  s.driver.device_get_name(gpu, sizeof gpu, device);
  if (s.mode == Mode::timestamps) {  // no profiler at all: its set-up would cost the program time
    line("device\t" + clean(gpu) + "\t");
    return true;
  }
  auto init = DIESCOPE_CUPTI_PARAMS(CUpti_Profiler_Initialize_Params);
  if (!ok(cuptiProfilerInitialize(&init), "cuptiProfilerInitialize")) return false;
  s.profiler_initialized = true;
  auto chip = DIESCOPE_CUPTI_PARAMS(CUpti_Device_GetChipName_Params);
  chip.deviceIndex = static_cast<std::size_t>(device);
  if (!ok(cuptiDeviceGetChipName(&chip), "cuptiDeviceGetChipName")) return false;
  const std::string chip_name = chip.pChipName;
  line("device\t" + clean(gpu) + "\t" + chip_name);

  auto avail = DIESCOPE_CUPTI_PARAMS(CUpti_Profiler_GetCounterAvailability_Params);
  avail.ctx = ctx;
  if (!ok(cuptiProfilerGetCounterAvailability(&avail), "cuptiProfilerGetCounterAvailability")) return false;
  std::vector<std::uint8_t> availability(avail.counterAvailabilityImageSize);
  avail.pCounterAvailabilityImage = availability.data();
  if (!ok(cuptiProfilerGetCounterAvailability(&avail), "cuptiProfilerGetCounterAvailability")) return false;

  std::string list;
  for (const auto& m : s.all_metrics) list += (list.empty() ? "" : ",") + m;
  struct Plan {
    std::vector<std::vector<std::string>> groups;
    std::vector<std::string> refused;
  } plan;
  const int n = diescope_range_groups(
      chip_name.c_str(), availability.data(), list.c_str(),
      [](void* user, int g, const char* m) {
        auto* p = static_cast<Plan*>(user);
        if (g < 0) {
          p->refused.emplace_back(m);
          return;
        }
        if (p->groups.size() <= static_cast<std::size_t>(g))
          p->groups.resize(static_cast<std::size_t>(g) + 1);
        p->groups[static_cast<std::size_t>(g)].emplace_back(m);
      },
      &plan);
  line("groups\t" + std::to_string(n) + "\t" + std::to_string(s.group));
  if (!plan.refused.empty()) {
    std::string r = "refused";
    for (const auto& m : plan.refused) r += "\t" + m;
    line(r);
  }
  if (s.group >= plan.groups.size()) {
    line("error\tDIESCOPE_RANGE_GROUP\tgroup " + std::to_string(s.group) + " of " + std::to_string(n));
    return false;
  }
  s.metrics = plan.groups[s.group];
  std::string header = "metrics";
  for (const auto& m : s.metrics) header += "\t" + m;
  line(header);
  s.names.clear();
  for (const auto& m : s.metrics) s.names.push_back(m.c_str());
  std::size_t passes = 0;
  s.config = config_for(chip_name, availability.data(), s.metrics, &passes);
  if (s.config.empty()) {
    line("error\tcuptiProfilerHostConfigAddMetrics\tthe group's metrics were refused");
    return false;
  }
  s.host = make_host(chip_name, availability.data());
  if (!s.host) {
    line("error\tcuptiProfilerHostInitialize\tthe chip " + chip_name + " is not supported");
    return false;
  }
  auto add = DIESCOPE_CUPTI_PARAMS(CUpti_Profiler_Host_ConfigAddMetrics_Params);
  add.pHostObject = s.host;
  add.ppMetricNames = s.names.data();
  add.numMetrics = s.names.size();
  if (!ok(cuptiProfilerHostConfigAddMetrics(&add), "cuptiProfilerHostConfigAddMetrics")) return false;

  auto en = DIESCOPE_CUPTI_PARAMS(CUpti_RangeProfiler_Enable_Params);
  en.ctx = ctx;
  if (!ok(cuptiRangeProfilerEnable(&en), "cuptiRangeProfilerEnable")) return false;
  s.profiler = en.pRangeProfilerObject;
  auto size = DIESCOPE_CUPTI_PARAMS(CUpti_RangeProfiler_GetCounterDataSize_Params);
  size.pRangeProfilerObject = s.profiler;
  size.pMetricNames = s.names.data();
  size.numMetrics = s.names.size();
  size.maxNumOfRanges = kMaxRanges;
  size.maxNumRangeTreeNodes = kMaxRanges;
  if (!ok(cuptiRangeProfilerGetCounterDataSize(&size), "cuptiRangeProfilerGetCounterDataSize")) return false;
  s.counter_data.assign(size.counterDataSize, 0);
  return true;
}

// A fresh counter data image and the config pointing at it.
bool prepare_image(State& s) {
  auto data = DIESCOPE_CUPTI_PARAMS(CUpti_RangeProfiler_CounterDataImage_Initialize_Params);
  data.pRangeProfilerObject = s.profiler;
  data.counterDataSize = s.counter_data.size();
  data.pCounterData = s.counter_data.data();
  if (!ok(cuptiRangeProfilerCounterDataImageInitialize(&data),
          "cuptiRangeProfilerCounterDataImageInitialize"))
    return false;
  auto config = DIESCOPE_CUPTI_PARAMS(CUpti_RangeProfiler_SetConfig_Params);
  config.pRangeProfilerObject = s.profiler;
  config.configSize = s.config.size();
  config.pConfig = s.config.data();
  config.counterDataImageSize = s.counter_data.size();
  config.pCounterDataImage = s.counter_data.data();
  config.range = CUPTI_UserRange;
  config.replayMode = CUPTI_UserReplay;  // one pass per group: nothing is replayed
  config.maxRangesPerPass = kMaxRanges;
  config.numNestingLevels = 1;
  config.minNestingLevel = 1;
  config.passIndex = 0;
  config.targetNestingLevel = 1;
  if (!ok(cuptiRangeProfilerSetConfig(&config), "cuptiRangeProfilerSetConfig")) return false;
  s.ranges_in_image = 0;
  return true;
}

// Runs `f` with the profiled context current on this thread (a callback may come from a thread that
// has none, e.g. one that only marks regions).
template <class F>
bool with_context(State& s, F&& f) {
  CUcontext mine = nullptr;
  s.driver.ctx_get_current(&mine);
  if (mine != s.context) s.driver.ctx_set_current(s.context);
  const bool r = f();
  if (mine != s.context) s.driver.ctx_set_current(mine);
  return r;
}

bool start_range(State& s, const std::string& name) {
  if (s.ranges_in_image == 0 || s.ranges_in_image >= kMaxRanges) {
    if (!prepare_image(s)) return false;
  }
  auto start = DIESCOPE_CUPTI_PARAMS(CUpti_RangeProfiler_Start_Params);
  start.pRangeProfilerObject = s.profiler;
  if (!ok(cuptiRangeProfilerStart(&start), "cuptiRangeProfilerStart")) return false;
  auto push = DIESCOPE_CUPTI_PARAMS(CUpti_RangeProfiler_PushRange_Params);
  push.pRangeProfilerObject = s.profiler;
  s.range_name = range::cupti_range_name(name, ++s.ranges_started);
  push.pRangeName = s.range_name.c_str();
  return ok(cuptiRangeProfilerPushRange(&push), "cuptiRangeProfilerPushRange");
}

// Closes the CUPTI range and evaluates it: the values of this run's metrics, NaN-filled on failure.
bool stop_range(State& s, const std::string& expected, std::vector<double>& values) {
  if (s.driver.ctx_synchronize() != CUDA_SUCCESS) {
    line("error\tcuCtxSynchronize\tthe program's GPU work failed inside the range");
    return false;
  }
  auto pop = DIESCOPE_CUPTI_PARAMS(CUpti_RangeProfiler_PopRange_Params);
  pop.pRangeProfilerObject = s.profiler;
  if (!ok(cuptiRangeProfilerPopRange(&pop), "cuptiRangeProfilerPopRange")) return false;
  auto stop = DIESCOPE_CUPTI_PARAMS(CUpti_RangeProfiler_Stop_Params);
  stop.pRangeProfilerObject = s.profiler;
  if (!ok(cuptiRangeProfilerStop(&stop), "cuptiRangeProfilerStop")) return false;
  auto decode = DIESCOPE_CUPTI_PARAMS(CUpti_RangeProfiler_DecodeData_Params);
  decode.pRangeProfilerObject = s.profiler;
  if (!ok(cuptiRangeProfilerDecodeData(&decode), "cuptiRangeProfilerDecodeData")) return false;
  auto info = DIESCOPE_CUPTI_PARAMS(CUpti_RangeProfiler_GetCounterDataInfo_Params);
  info.pCounterDataImage = s.counter_data.data();
  info.counterDataImageSize = s.counter_data.size();
  if (!ok(cuptiRangeProfilerGetCounterDataInfo(&info), "cuptiRangeProfilerGetCounterDataInfo")) return false;
  if (info.numTotalRanges < 1) {
    line("error\tcuptiRangeProfilerGetCounterDataInfo\tno range was recorded");
    return false;
  }
  s.ranges_in_image = info.numTotalRanges;  // the image fills up; re-initialised when full
  // The range evaluated must be the one just closed: a range CUPTI did not record would otherwise
  // hand over the previous range's figures (seen on ResNet-50's later steps). Its name says.
  auto range_info = DIESCOPE_CUPTI_PARAMS(CUpti_RangeProfiler_CounterData_GetRangeInfo_Params);
  range_info.pCounterDataImage = s.counter_data.data();
  range_info.counterDataImageSize = s.counter_data.size();
  range_info.rangeIndex = info.numTotalRanges - 1;
  range_info.rangeDelimiter = "/";
  if (!ok(cuptiRangeProfilerCounterDataGetRangeInfo(&range_info),
          "cuptiRangeProfilerCounterDataGetRangeInfo"))
    return false;
  const std::string recorded = range_info.rangeName ? range_info.rangeName : "";
  if (recorded != expected || decode.numOfRangeDropped > 0) {
    line("stale\t" + clean(expected) + "\t" + clean(recorded) + "\t" +
         std::to_string(decode.numOfRangeDropped));
    values.assign(s.names.size(), std::nan(""));
    return true;  // this segment's figures are unknown; the next ranges may be fine
  }
  values.assign(s.names.size(), std::nan(""));
  auto evaluate = DIESCOPE_CUPTI_PARAMS(CUpti_Profiler_Host_EvaluateToGpuValues_Params);
  evaluate.pHostObject = s.host;
  evaluate.pCounterDataImage = s.counter_data.data();
  evaluate.counterDataImageSize = s.counter_data.size();
  evaluate.rangeIndex = info.numTotalRanges - 1;
  evaluate.ppMetricNames = s.names.data();
  evaluate.numMetrics = s.names.size();
  evaluate.pMetricValues = values.data();
  return ok(cuptiProfilerHostEvaluateToGpuValues(&evaluate), "cuptiProfilerHostEvaluateToGpuValues");
}

bool ends_with(const std::string& s, const char* tail) {
  const std::size_t n = std::strlen(tail);
  return s.size() >= n && s.compare(s.size() - n, n, tail) == 0;
}

// Adds a segment's values to an occurrence (docs/roofline.md#the-range-profiler): counts add up,
// clocks (.per_second) are weighted by the segment's duration, peaks (.peak_sustained) are kept.
void accumulate(State& s, Accumulated& a, const std::vector<double>& values) {
  if (a.sums.empty()) a.sums.assign(s.metrics.size(), 0.0);
  // A segment whose range was not recorded (NaN) leaves the whole occurrence unknown, never short.
  // The duration leads a group that has one; a group without (SASS counts) weighs segments alike.
  const bool timed = !s.metrics.empty() && s.metrics[0] == "gpu__time_duration.sum";
  const double duration = timed && !values.empty() ? values[0] : 1.0;
  for (std::size_t i = 0; i < values.size() && i < s.metrics.size(); ++i) {
    const std::string& m = s.metrics[i];
    if (ends_with(m, ".per_second"))
      a.sums[i] += values[i] * duration;
    else if (ends_with(m, ".peak_sustained"))
      a.sums[i] = values[i];
    else
      a.sums[i] += values[i];
  }
  a.weight += duration;
  a.measured = true;
}

Accumulated& acc_of(State& s, std::optional<std::size_t> occ) {
  return occ ? s.acc[*occ] : s.outside;
}

void close_segment(State& s) {
  if (!s.segment_open) return;
  s.segment_open = false;
  Accumulated& a = acc_of(s, s.segment_of);
  a.launches += s.segment_launches;
  for (const auto& [k, n] : s.segment_kernels) a.kernels[k] += n;
  if (!s.segment_of) {  // the work outside every region: from its first to its last segment
    if (a.opened_ns == 0) a.opened_ns = s.segment_opened_ns;
    a.closed_ns = now_ns();
  }
  s.segment_launches = 0;
  s.segment_kernels.clear();
  if (s.mode != Mode::counters || s.disabled || !s.profiler) return;
  std::vector<double> values;
  if (with_context(s, [&] { return stop_range(s, s.range_name, values); }))
    accumulate(s, a, values);
  else
    s.disabled = true;
}

// docs/roofline.md#the-range-profiler: the row of one occurrence.
void write_row(State& s, const std::string& name, long number, bool closed, const Accumulated& a) {
  std::string kernel;
  long most = -1;
  for (const auto& [k, n] : a.kernels)
    if (n > most) {
      most = n;
      kernel = k;
    }
  if (a.kernels.size() > 1) kernel = std::to_string(a.kernels.size()) + " kernels; most launched: " + kernel;
  std::string text = "row\t" + clean(name) + "\t" + std::to_string(number) + "\t" + (closed ? "1" : "0") +
                     "\t" + std::to_string(a.launches) + "\t" + clean(kernel) + "\t" +
                     std::to_string(a.opened_ns) + "\t" + std::to_string(a.closed_ns);
  for (std::size_t i = 0; i < s.metrics.size(); ++i) {
    double v = std::nan("");
    if (a.measured && i < a.sums.size()) {
      v = a.sums[i];
      if (ends_with(s.metrics[i], ".per_second")) v = a.weight > 0 ? v / a.weight : std::nan("");
    }
    text += "\t" + num(v);
  }
  line(text);
}

std::string demangle(const char* name) {
  if (!name) return "";
  int status = 0;
  char* d = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string out = status == 0 && d ? d : name;
  std::free(d);  // NOLINT(cppcoreguidelines-no-malloc): __cxa_demangle allocates with malloc
  return out;
}

// A kernel launch: the segment of the current region opens here if it is not open.
void on_launch(State& s, const char* symbol) {
  if (!s.segment_open) {
    if (s.mode == Mode::counters && !s.disabled && !s.profiler) {
      CUcontext ctx = nullptr;
      s.driver.ctx_get_current(&ctx);
      if (!ctx || !enable(s, ctx)) s.disabled = true;
    } else if (s.mode == Mode::timestamps && !s.context) {
      CUcontext ctx = nullptr;
      s.driver.ctx_get_current(&ctx);
      if (ctx) enable(s, ctx);
    }
    s.segment_open = true;
    s.segment_of = s.tracker.current();
    s.segment_opened_ns = now_ns();
    if (s.mode == Mode::counters && !s.disabled && s.profiler) {
      const auto occ = s.segment_of;
      const std::string name = occ ? s.tracker.occurrence(*occ).name : "";
      if (!start_range(s, name)) s.disabled = true;
    }
  }
  ++s.segment_launches;
  ++s.segment_kernels[demangle(symbol)];
}

// After one NVTX event: the segment closes when the current region changed; a new occurrence gets its
// open line; each occurrence the event closed gets its row.
void apply_change(State& s, const range::Change& c, std::size_t size_before) {
  const std::uint64_t t = now_ns();
  if (c.unmatched) line("unmatched\t" + std::to_string(t));
  if (s.segment_open && s.segment_of != c.after) close_segment(s);
  for (std::size_t i = size_before; i < s.tracker.size(); ++i) {
    const auto& o = s.tracker.occurrence(i);
    s.acc[i].opened_ns = t;
    line("open\t" + clean(o.name) + "\t" + std::to_string(o.number) + "\t" + std::to_string(t));
  }
  for (std::size_t e : c.ended) {
    const auto& o = s.tracker.occurrence(e);
    Accumulated& a = s.acc[e];
    a.closed_ns = t;
    write_row(s, o.name, o.number, true, a);
    s.acc.erase(e);
  }
}

std::string ascii_message(const nvtxEventAttributes_t* a) {
  if (!a) return "";
  if (a->messageType == NVTX_MESSAGE_TYPE_ASCII && a->message.ascii) return a->message.ascii;
  if (a->messageType == NVTX_MESSAGE_TYPE_UNICODE && a->message.unicode) {
    std::string out;
    for (const wchar_t* w = a->message.unicode; *w; ++w) out += static_cast<char>(*w < 128 ? *w : '?');
    return out;
  }
  return "(unnamed)";
}
std::string wide(const wchar_t* w) {
  std::string out;
  for (; w && *w; ++w) out += static_cast<char>(*w < 128 ? *w : '?');
  return out;
}

std::uint64_t thread_id() {
  return static_cast<std::uint64_t>(pthread_self());
}

std::uint64_t g_next_id = 1u << 30;  // ids for start ranges when CUPTI returns none

void on_nvtx(State& s, CUpti_CallbackId cbid, const CUpti_NvtxData* d) {
  const std::uint64_t t = thread_id();
  const std::size_t size_before = s.tracker.size();
  auto on_change = [&](State& st, const range::Change& c) { apply_change(st, c, size_before); };
  auto started_id = [&]() -> std::uint64_t {
    if (d->functionReturnValue) return *static_cast<const nvtxRangeId_t*>(d->functionReturnValue);
    return g_next_id++;
  };
  switch (cbid) {
    case CUPTI_CBID_NVTX_nvtxRangePushA:
      on_change(s, s.tracker.push(t, static_cast<const nvtxRangePushA_params*>(d->functionParams)->message));
      break;
    case CUPTI_CBID_NVTX_nvtxRangePushW:
      on_change(
          s, s.tracker.push(t, wide(static_cast<const nvtxRangePushW_params*>(d->functionParams)->message)));
      break;
    case CUPTI_CBID_NVTX_nvtxRangePushEx:
      on_change(
          s,
          s.tracker.push(
              t, ascii_message(static_cast<const nvtxRangePushEx_params*>(d->functionParams)->eventAttrib)));
      break;
    case CUPTI_CBID_NVTX_nvtxDomainRangePushEx:
      on_change(
          s,
          s.tracker.push(
              t, ascii_message(
                     static_cast<const nvtxDomainRangePushEx_params*>(d->functionParams)->core.eventAttrib)));
      break;
    case CUPTI_CBID_NVTX_nvtxRangePop:
    case CUPTI_CBID_NVTX_nvtxDomainRangePop:
      on_change(s, s.tracker.pop(t));
      break;
    case CUPTI_CBID_NVTX_nvtxRangeStartA:
      on_change(s, s.tracker.start(t, started_id(),
                                   static_cast<const nvtxRangeStartA_params*>(d->functionParams)->message));
      break;
    case CUPTI_CBID_NVTX_nvtxRangeStartW:
      on_change(
          s, s.tracker.start(t, started_id(),
                             wide(static_cast<const nvtxRangeStartW_params*>(d->functionParams)->message)));
      break;
    case CUPTI_CBID_NVTX_nvtxRangeStartEx:
      on_change(
          s, s.tracker.start(
                 t, started_id(),
                 ascii_message(static_cast<const nvtxRangeStartEx_params*>(d->functionParams)->eventAttrib)));
      break;
    case CUPTI_CBID_NVTX_nvtxDomainRangeStartEx:
      on_change(
          s,
          s.tracker.start(
              t, started_id(),
              ascii_message(
                  static_cast<const nvtxDomainRangeStartEx_params*>(d->functionParams)->core.eventAttrib)));
      break;
    case CUPTI_CBID_NVTX_nvtxRangeEnd:
      on_change(s, s.tracker.end(t, static_cast<const nvtxRangeEnd_params*>(d->functionParams)->id));
      break;
    case CUPTI_CBID_NVTX_nvtxDomainRangeEnd:
      on_change(s,
                s.tracker.end(t, static_cast<const nvtxDomainRangeEnd_params*>(d->functionParams)->core.id));
      break;
    default:
      break;
  }
}

bool is_launch(CUpti_CallbackId cbid) {
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchGrid:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchGridAsync:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunch:
      return true;
    default:
      return false;
  }
}

// Writes what is left: the open segment, the occurrences never closed (closed = 0), the work outside
// every region, and the end line. Once.
void finish(State& s) {
  if (s.finished) return;
  s.finished = true;
  close_segment(s);
  for (std::size_t i : s.tracker.still_open()) {
    const auto& o = s.tracker.occurrence(i);
    write_row(s, o.name, o.number, false, s.acc[i]);
  }
  if (s.outside.launches > 0) write_row(s, "", 1, true, s.outside);
  line("end\t" + std::to_string(s.tracker.still_open().size()));
  if (s.profiler) {
    auto p = DIESCOPE_CUPTI_PARAMS(CUpti_RangeProfiler_Disable_Params);
    p.pRangeProfilerObject = s.profiler;
    cuptiRangeProfilerDisable(&p);
    s.profiler = nullptr;
  }
}

void CUPTIAPI callback(void* /*user*/, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.finished) return;
  if (domain == CUPTI_CB_DOMAIN_NVTX) {
    on_nvtx(s, cbid, static_cast<const CUpti_NvtxData*>(data));
  } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API && is_launch(cbid)) {
    const auto* cb = static_cast<const CUpti_CallbackData*>(data);
    if (cb->callbackSite == CUPTI_API_ENTER) on_launch(s, cb->symbolName);
  } else if (domain == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
    const auto* r = static_cast<const CUpti_ResourceData*>(data);
    if (r->context == s.context) finish(s);  // the counters go with the context
  }
}

void at_exit() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  finish(s);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (g_out) return 1;  // called once per process; a second call changes nothing
  const char* out = std::getenv("DIESCOPE_RANGE_OUTPUT");
  if (!out || !*out) {
    std::fputs(
        "libdiescope-range: DIESCOPE_RANGE_OUTPUT is not set; nothing is measured "
        "(run the program through `diescope roofline profile --profiler range`)\n",
        stderr);
    return 1;
  }
  g_out = std::fopen(out, "w");
  if (!g_out) {
    std::fprintf(
        stderr,
        "libdiescope-range: cannot write %s; nothing is measured\n",  // NOLINT(cppcoreguidelines-pro-type-vararg)
        out);
    return 1;
  }
  line("diescope-range\t" + std::to_string(kFormat));
  {
    // The clock pair (docs/roofline.md#the-sampled-backend): every time this file holds is
    // CLOCK_MONOTONIC, and the PM sampler stamps its samples on CLOCK_REALTIME. One REALTIME reading
    // between two MONOTONIC ones (their midpoint) lets the reader convert explicitly:
    // realtime = monotonic + (clock's realtime - clock's monotonic).
    const std::uint64_t before = now_ns();
    timespec rt{};
    clock_gettime(CLOCK_REALTIME, &rt);
    const std::uint64_t after = now_ns();
    const std::uint64_t real =
        static_cast<std::uint64_t>(rt.tv_sec) * 1000000000ULL + static_cast<std::uint64_t>(rt.tv_nsec);
    line("clock\t" + std::to_string(before + (after - before) / 2) + "\t" + std::to_string(real) + "\t" +
         std::to_string(after - before));
  }
  const char* mode = std::getenv("DIESCOPE_RANGE_MODE");
  s.mode = mode && std::string(mode) == "timestamps" ? Mode::timestamps : Mode::counters;
  line(std::string("mode\t") + (s.mode == Mode::counters ? "counters" : "timestamps"));
  if (const char* m = std::getenv("DIESCOPE_RANGE_METRICS")) {
    std::string item;
    for (const char* p = m;; ++p) {
      if (*p == ',' || *p == '\0') {
        if (!item.empty()) s.all_metrics.push_back(item);
        item.clear();
        if (*p == '\0') break;
      } else {
        item += *p;
      }
    }
  }
  if (const char* g = std::getenv("DIESCOPE_RANGE_GROUP")) s.group = std::strtoul(g, nullptr, 10);
  if (!s.driver.load()) {
    line("error\tdlopen\tlibcuda.so.1 could not be loaded or lacks the context calls");
    return 1;
  }
  if (!ok(cuptiSubscribe(&s.subscriber, callback, nullptr), "cuptiSubscribe")) return 1;
  ok(cuptiEnableDomain(1, s.subscriber, CUPTI_CB_DOMAIN_NVTX), "cuptiEnableDomain(NVTX)");
  ok(cuptiEnableDomain(1, s.subscriber, CUPTI_CB_DOMAIN_RESOURCE), "cuptiEnableDomain(RESOURCE)");
  for (CUpti_CallbackId id = 0; id < CUPTI_DRIVER_TRACE_CBID_SIZE; ++id)
    if (is_launch(id)) cuptiEnableCallback(1, s.subscriber, CUPTI_CB_DOMAIN_DRIVER_API, id);
  std::atexit(at_exit);
  return 1;
}

// NVTX_INJECTION64_PATH may name this library: CUPTI's NVTX callbacks need CUPTI to be NVTX's tool.
extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(const void* get_export_table) {
  using Init = int (*)(const void*);
  auto init = reinterpret_cast<Init>(dlsym(RTLD_DEFAULT, "InitializeInjectionNvtx2"));
  void* cupti = dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);
  if (!cupti) cupti = dlopen("libcupti.so", RTLD_NOW | RTLD_NOLOAD);
  if (cupti) init = reinterpret_cast<Init>(dlsym(cupti, "InitializeInjectionNvtx2"));
  if (!init || reinterpret_cast<void*>(init) == reinterpret_cast<void*>(&InitializeInjectionNvtx2)) return 0;
  return init(get_export_table);
}
