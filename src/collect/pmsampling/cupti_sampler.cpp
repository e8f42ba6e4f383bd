// The CUPTI sampler child: PM sampling on one device, device-wide, streamed to the parent.
//
// Call sequence (as the first H200 probe showed working, docs/method.md#the-first-h200-probe):
//   cuInit -> cuptiProfilerInitialize -> cuptiDeviceGetChipName -> counter availability ->
//   host object + config image (must be ONE pass) -> cuptiPmSamplingEnable -> SetConfig (GPU-time
//   trigger) -> counter-data images sized for one drain -> Start -> {DecodeData, per sample
//   GetSampleInfo} every drain on this thread, EvaluateToGpuValues and the protocol lines on an
//   evaluating thread, the images in rotation between the two -> Stop -> last drain ->
//   cuptiPmSamplingDisable.
//
// Two threads (docs/footprint.md#the-decode-pipeline): the decoding thread alone calls the PM
// sampling object (decode, sample times, image initialisation); the evaluating thread alone calls
// the profiler host object (evaluation) and writes to the parent. An image passes from one to the
// other through an ImageRing, whose lock orders every write to it before the other side's reads.
//
// The driver is loaded with dlopen so that a machine without one gets a clear message rather than
// a loader error, and so that this file links on the CPU-only build machine.
//
// Clock: CUPTI stamps each sample with GPU nanoseconds. At start the child reads cuptiGetTimestamp
// between two clock_gettime(CLOCK_REALTIME) calls (tightest of several tries) and takes
// offset = midpoint(realtime) - cupti_ts, uncertainty = half the bracket. Every sample is sent as
// gpu + offset. The first sample ends just after Start returns (it spans the setup); if its end,
// converted, lies more than kClockTrustNs away from Start's return, the GPU stamps are not on
// cuptiGetTimestamp's timeline and the child re-anchors: offset = Start's return - first end,
// uncertainty = one interval. Either way it says which on the protocol ("clock" and a note).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <memory>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include <cuda.h>
#include <cupti_activity.h>
#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_result.h>
#include <cupti_target.h>

#include "child_io.hpp"
#include "cupti_call.hpp"
#include "diescope/collect/sampler.hpp"
#include "diescope/core/clock.hpp"
#include "diescope/core/error.hpp"

namespace diescope::collect {

namespace m = sampler_msg;

namespace {

constexpr std::int64_t kClockTrustNs = 200'000'000;  // 0.2 s

struct Failure {
  m::ErrorKind kind;
  long code;
  std::string text;
};

m::ErrorKind classify(CUptiResult rc) {
  switch (rc) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
      return m::ErrorKind::permission;
    case CUPTI_ERROR_HARDWARE_BUSY:
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
    case CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED:
      return m::ErrorKind::busy;
    case CUPTI_ERROR_NOT_SUPPORTED:
    case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
    case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED:
      return m::ErrorKind::unsupported;
    case CUPTI_ERROR_INVALID_DEVICE:
      return m::ErrorKind::no_device;
    case CUPTI_ERROR_NOT_INITIALIZED:
      return m::ErrorKind::no_driver;
    case CUPTI_ERROR_INVALID_METRIC_NAME:
      return m::ErrorKind::metrics;
    default:
      return m::ErrorKind::cupti;
  }
}

// Taking the counters (availability, enable, configure, start): there these results mean that another
// profiler, e.g. Nsight Compute, holds them.
void check_acquire(CUptiResult rc, const char* call, const char* file, int line) {
  try {
    cupti::check(rc, call, file, line);
  } catch (const cupti::CuptiError& e) {
    if (rc == CUPTI_ERROR_NOT_COMPATIBLE || rc == CUPTI_ERROR_INVALID_OPERATION ||
        rc == CUPTI_ERROR_HARDWARE || rc == CUPTI_ERROR_MAX_LIMIT_REACHED) {
      throw Failure{m::ErrorKind::busy, long(rc),
                    e.cause() + " (another profiler, e.g. Nsight Compute, may hold the counters)"};
    }
    throw;
  }
}
#define CHECK_ACQUIRE(call) check_acquire((call), #call, __FILE__, __LINE__)

// The few driver calls the child needs, loaded at run time.
struct Driver {
  void* lib = nullptr;
  CUresult (*init)(unsigned) = nullptr;
  CUresult (*device_count)(int*) = nullptr;
  CUresult (*device_get)(CUdevice*, int) = nullptr;
  CUresult (*attribute)(int*, CUdevice_attribute, CUdevice) = nullptr;
  CUresult (*name)(char*, int, CUdevice) = nullptr;
  CUresult (*uuid)(CUuuid*, CUdevice) = nullptr;
  CUresult (*error_name)(CUresult, const char**) = nullptr;
  CUresult (*primary_retain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*ctx_set_current)(CUcontext) = nullptr;

  void load() {
    lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
      throw Failure{m::ErrorKind::no_driver, 0, std::string("cannot load libcuda.so.1: ") + dlerror()};
    auto sym = [&](const char* n) { return dlsym(lib, n); };
    init = reinterpret_cast<decltype(init)>(sym("cuInit"));
    device_count = reinterpret_cast<decltype(device_count)>(sym("cuDeviceGetCount"));
    device_get = reinterpret_cast<decltype(device_get)>(sym("cuDeviceGet"));
    attribute = reinterpret_cast<decltype(attribute)>(sym("cuDeviceGetAttribute"));
    name = reinterpret_cast<decltype(name)>(sym("cuDeviceGetName"));
    uuid = reinterpret_cast<decltype(uuid)>(sym("cuDeviceGetUuid_v2"));
    if (!uuid) uuid = reinterpret_cast<decltype(uuid)>(sym("cuDeviceGetUuid"));
    error_name = reinterpret_cast<decltype(error_name)>(sym("cuGetErrorName"));
    primary_retain = reinterpret_cast<decltype(primary_retain)>(sym("cuDevicePrimaryCtxRetain"));
    ctx_set_current = reinterpret_cast<decltype(ctx_set_current)>(sym("cuCtxSetCurrent"));
    if (!init || !device_count || !device_get || !attribute || !name)
      throw Failure{m::ErrorKind::no_driver, 0,
                    "libcuda.so.1 lacks basic driver calls; the driver is too old"};
  }
  std::string describe(CUresult rc) const {
    const char* n = nullptr;
    if (error_name && error_name(rc, &n) == CUDA_SUCCESS && n) return n;
    return "CUDA error " + std::to_string(int(rc));
  }
};

std::string format_uuid(const CUuuid& id) {
  static const char* hex = "0123456789abcdef";
  std::string out = "GPU-";
  for (int i = 0; i < 16; ++i) {
    auto byte = static_cast<unsigned char>(id.bytes[i]);
    out += hex[byte >> 4];
    out += hex[byte & 15];
    if (i == 3 || i == 5 || i == 7 || i == 9) out += '-';
  }
  return out;
}

// What the decoding thread found in one decode pass, for the evaluating thread: the image, each
// completed sample's GPU times, and the messages met on the way, in order.
struct Pass {
  std::vector<std::uint8_t> image;
  struct Times {
    std::int64_t start = 0, end = 0;
  };
  std::vector<Times> samples;
  bool used = false;                   // decoded into since it was last initialised
  bool blank_first = false;            // its first sample was split by the previous pass's hand-over
  std::vector<SamplerMessage> before;  // overflow and notes, sent before its samples
  // Set on the last pass of a drain: the drain's own figures from the decoding side.
  bool ends_drain = false;
  std::int64_t drain_began_ns = 0;  // CLOCK_MONOTONIC
  std::int64_t decode_ns = 0, info_ns = 0, init_ns = 0, wait_ns = 0, decode_cpu_ns = 0;
  std::int64_t late_ns = 0;  // the drain began this long after its due time
  std::int64_t gap_ns = 0;   // its first decode began this long after the previous drain's first
  int passes = 0;
  long incomplete_seen = 0;
};

class Sampler {
 public:
  Sampler(const child::Args& args, child::Emitter& out) : args_(args), out_(out), retimer_(interval_ns()) {
    for (const auto& name : args_.metrics) metric_ptrs_.push_back(name.c_str());
  }
  ~Sampler() {
    halt();
    release();
  }

  void setup();
  // Starts the counters and the evaluating thread; until halt() only that thread writes to `out`.
  void start();
  // Decodes everything the hardware buffer holds and hands it to the evaluating thread, then
  // initialises the next image ahead of the next drain. `due_ns` (CLOCK_MONOTONIC, 0: none) is when
  // the drain was due, for its lateness. Returns false if the session broke or the evaluating thread
  // stopped.
  bool drain(std::int64_t due_ns = 0);
  // Samples CUPTI gave no time and that could not be placed are dropped (with a note) at the end.
  void finish();
  void stop_and_disable(const std::string& reason);
  // Ends the evaluating thread after it has sent every pass handed to it; `out` is this thread's again.
  void halt();
  bool parent_gone() const { return parent_gone_.load(); }

 private:
  std::int64_t interval_ns() const {
    return static_cast<std::int64_t>(std::llround(args_.interval_ms * 1e6));
  }
  void init_image(std::vector<std::uint8_t>& image);
  void sync_clock();
  void release();
  void evaluate_loop();
  void evaluate_pass(Pass& pass);
  // With --timing, a `timing-pass` note for a decode pass that filled its image or whose call took
  // longer than the decode period, and for the pass after it (docs/footprint.md#the-samplers-stages).
  void note_pass(Pass& pass, int number, std::int64_t call_began_real, std::int64_t call_ns, int stop,
                 std::size_t completed, std::size_t populated);

  const child::Args& args_;
  child::Emitter& out_;
  child::Retimer retimer_;
  Driver driver_;
  CUdevice device_ = 0;
  int cc_ = 0;
  std::string chip_;
  std::vector<const char*> metric_ptrs_;
  std::vector<std::uint8_t> availability_;
  std::vector<std::uint8_t> config_;
  std::size_t image_bytes_ = 0;  // each decode image
  std::vector<Pass> passes_;     // one per image in rotation (docs/footprint.md#the-decode-pipeline)
  std::unique_ptr<child::ImageRing> ring_;
  std::thread evaluator_;
  std::atomic<bool> parent_gone_{false};
  std::atomic<bool> evaluator_failed_{false};
  std::string evaluator_error_;  // read after the join
  CUpti_Profiler_Host_Object* host_ = nullptr;
  CUpti_PmSampling_Object* sampling_ = nullptr;
  bool started_ = false;
  bool context_retained_ = false;
  std::int64_t offset_ns_ = 0;
  std::int64_t on_ns_ = 0;
  // The evaluating thread's own.
  bool first_sample_ = true;
  std::vector<double> values_;
  long blanked_total_ = 0;
  long drain_emitted_ = 0, drain_blanked_ = 0;
  std::int64_t drain_eval_ns_ = 0, drain_emit_ns_ = 0, drain_eval_cpu_ns_ = 0;
  // The decoding thread's own.
  long incomplete_ = 0;           // decodes that left a started sample in the image
  bool split_pending_ = false;    // the next pass's first sample was half decoded into the last image
  long waits_ = 0;                // times every image was waiting for the evaluation
  std::size_t sample_bytes_ = 0;  // one sample in the decode image
  double decode_period_ms_ = 0;   // --drain-ms, or shorter at short intervals
  double decode_slack_ms_ = 0;    // how late a decode may begin and lose nothing
  // An image given back and initialised after the last drain, for the next drain's first decode
  // (docs/footprint.md#the-decode-image), and what initialising it cost.
  std::optional<std::size_t> prepared_;
  std::int64_t ahead_init_ns_ = 0, ahead_cpu_ns_ = 0;
  std::int64_t last_decode_began_ns_ = 0;  // the previous drain's first decode call (CLOCK_MONOTONIC)
  bool note_next_pass_ = false;            // the last pass was noted: note the one after it too
  std::int64_t decode_offset_ns_ = 0;      // the clock offset at Start, for the decoding thread's notes
  // Where the child's time went, summed over the run (--timing): ns per stage. The decoding thread
  // adds decode, info, init, wait and decode_cpu; the evaluating thread the rest.
  struct Stages {
    std::int64_t decode = 0, info = 0, evaluate = 0, emit = 0, init = 0, write = 0, wait = 0;
    std::int64_t decode_cpu = 0, evaluate_cpu = 0;
    long samples = 0, drains = 0, passes = 0;
    // Why decodes were late (docs/footprint.md#the-decode-image): the largest lateness of a drain's
    // start, gap between two drains' first decodes, single decode call and drain (its decodes, sample
    // times and initialisations), and the drains whose gap exceeded what the image holds.
    std::int64_t late_max = 0, gap_max = 0, decode_max = 0, drain_max = 0;
    long gaps_over_image = 0, gaps_over_period = 0;
  } total_;
  void emit_totals();
};

void Sampler::setup() {
  driver_.load();
  if (CUresult rc = driver_.init(0); rc != CUDA_SUCCESS) {
    throw Failure{rc == CUDA_ERROR_NO_DEVICE ? m::ErrorKind::no_device : m::ErrorKind::no_driver, long(rc),
                  "cuInit failed: " + driver_.describe(rc)};
  }
  int count = 0;
  driver_.device_count(&count);
  if (args_.device >= count) {
    throw Failure{m::ErrorKind::no_device, 0,
                  "the driver lists " + std::to_string(count) + " GPU" + (count == 1 ? "" : "s") +
                      (count > 0 ? ", indexes 0 to " + std::to_string(count - 1) : std::string{})};
  }
  driver_.device_get(&device_, args_.device);
  int major = 0, minor = 0, sms = 0;
  driver_.attribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device_);
  driver_.attribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device_);
  driver_.attribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device_);
  cc_ = major * 10 + minor;
  char name[256] = {};
  driver_.name(name, sizeof name, device_);
  std::string uuid;
  if (CUuuid id{}; driver_.uuid && driver_.uuid(&id, device_) == CUDA_SUCCESS) uuid = format_uuid(id);

  auto init = DIESCOPE_CUPTI_PARAMS(CUpti_Profiler_Initialize_Params);
  DIESCOPE_CUPTI_CHECK(cuptiProfilerInitialize(&init));

  auto support = DIESCOPE_CUPTI_PARAMS(CUpti_Profiler_DeviceSupported_Params);
  support.cuDevice = device_;
  support.api = CUPTI_PROFILER_PM_SAMPLING;
  if (cuptiProfilerDeviceSupported(&support) == CUPTI_SUCCESS &&
      support.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) {
    std::string why;
    auto add = [&](CUpti_Profiler_Support_Level level, const char* what) {
      if (level == CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED || level == CUPTI_PROFILER_CONFIGURATION_DISABLED)
        why += (why.empty() ? "" : ", ") + std::string(what);
    };
    add(support.architecture, "architecture older than Turing");
    add(support.sli, "SLI");
    add(support.vGpu, "vGPU without profiling enabled");
    add(support.confidentialCompute, "confidential computing");
    add(support.cmp, "mining processor");
    add(support.wsl, "WSL");
    throw Failure{m::ErrorKind::unsupported, 0,
                  why.empty() ? "the driver says PM sampling is unsupported here" : why};
  }

  auto chip = DIESCOPE_CUPTI_PARAMS(CUpti_Device_GetChipName_Params);
  chip.deviceIndex = static_cast<std::size_t>(args_.device);
  DIESCOPE_CUPTI_CHECK(cuptiDeviceGetChipName(&chip));
  chip_ = chip.pChipName ? chip.pChipName : "";
  out_.emit(m::Device{args_.device, cc_, sms, uuid, chip_, name});
  out_.emit(m::Metrics{args_.metrics});
  out_.flush();

  auto avail = DIESCOPE_CUPTI_PARAMS(CUpti_PmSampling_GetCounterAvailability_Params);
  avail.deviceIndex = static_cast<std::size_t>(args_.device);
  CUptiResult rc = cuptiPmSamplingGetCounterAvailability(&avail);
  if (rc == CUPTI_ERROR_INVALID_CONTEXT || rc == CUPTI_ERROR_NOT_INITIALIZED) {
    // Some drivers want a context before they answer; the primary one is the cheapest to hold.
    CUcontext ctx = nullptr;
    if (driver_.primary_retain && driver_.primary_retain(&ctx, device_) == CUDA_SUCCESS) {
      driver_.ctx_set_current(ctx);
      context_retained_ = true;
      out_.emit(m::Note{"sampler", "the driver wanted a CUDA context: the sampler holds GPU " +
                                       std::to_string(args_.device) + "'s primary context (pid " +
                                       std::to_string(getpid()) + ")"});
    }
    rc = cuptiPmSamplingGetCounterAvailability(&avail);
  }
  check_acquire(rc, "cuptiPmSamplingGetCounterAvailability(&avail)", __FILE__, __LINE__);
  availability_.resize(avail.counterAvailabilityImageSize);
  avail.pCounterAvailabilityImage = availability_.data();
  CHECK_ACQUIRE(cuptiPmSamplingGetCounterAvailability(&avail));

  auto host = DIESCOPE_CUPTI_PARAMS(CUpti_Profiler_Host_Initialize_Params);
  host.profilerType = CUPTI_PROFILER_TYPE_PM_SAMPLING;
  host.pChipName = chip_.c_str();
  host.pCounterAvailabilityImage = availability_.data();
  DIESCOPE_CUPTI_CHECK(cuptiProfilerHostInitialize(&host));
  host_ = host.pHostObject;

  auto add = DIESCOPE_CUPTI_PARAMS(CUpti_Profiler_Host_ConfigAddMetrics_Params);
  add.pHostObject = host_;
  add.ppMetricNames = metric_ptrs_.data();
  add.numMetrics = metric_ptrs_.size();
  if (rc = cuptiProfilerHostConfigAddMetrics(&add); rc != CUPTI_SUCCESS) {
    // Find the names the chip does not know, one at a time on a scratch host object.
    std::string bad;
    for (const char* metric : metric_ptrs_) {
      auto scratch = host;
      scratch.pHostObject = nullptr;
      if (cuptiProfilerHostInitialize(&scratch) != CUPTI_SUCCESS) break;
      auto one = DIESCOPE_CUPTI_PARAMS(CUpti_Profiler_Host_ConfigAddMetrics_Params);
      one.pHostObject = scratch.pHostObject;
      one.ppMetricNames = &metric;
      one.numMetrics = 1;
      if (cuptiProfilerHostConfigAddMetrics(&one) != CUPTI_SUCCESS)
        bad += (bad.empty() ? "" : ", ") + std::string(metric);
      auto deinit = DIESCOPE_CUPTI_PARAMS(CUpti_Profiler_Host_Deinitialize_Params);
      deinit.pHostObject = scratch.pHostObject;
      cuptiProfilerHostDeinitialize(&deinit);
    }
    throw Failure{m::ErrorKind::metrics, long(rc),
                  chip_ + " does not accept the metric set (" + cupti::result_name(rc) + ")" +
                      (bad.empty() ? std::string{} : "; unknown here: " + bad)};
  }
  config_ = cupti::config_image(host_);
  if (const std::size_t passes = cupti::pass_count(config_); passes != 1) {
    throw Failure{m::ErrorKind::metrics, 0,
                  "the metric set needs " + std::to_string(passes) + " counter passes on " + chip_ +
                      "; PM sampling reads one"};
  }

  auto enable = DIESCOPE_CUPTI_PARAMS(CUpti_PmSampling_Enable_Params);
  enable.deviceIndex = static_cast<std::size_t>(args_.device);
  CHECK_ACQUIRE(cuptiPmSamplingEnable(&enable));
  sampling_ = enable.pPmSamplingObject;

  // What one sample takes in the decode image, from CUPTI itself: the image for 65 samples less the
  // image for 1, over 64. It sizes both the decode image and the hardware buffer
  // (docs/footprint.md#the-hardware-buffer).
  auto image_bytes = [&](std::uint32_t samples) -> std::size_t {
    auto size = DIESCOPE_CUPTI_PARAMS(CUpti_PmSampling_GetCounterDataSize_Params);
    size.pPmSamplingObject = sampling_;
    size.pMetricNames = metric_ptrs_.data();
    size.numMetrics = metric_ptrs_.size();
    size.maxSamples = samples;
    return cuptiPmSamplingGetCounterDataSize(&size) == CUPTI_SUCCESS ? size.counterDataSize : 0;
  };
  const std::size_t one = image_bytes(1), many = image_bytes(65);
  sample_bytes_ = many > one ? (many - one) / 64 : 0;
  decode_period_ms_ = child::decode_period_ms(args_.interval_ms, args_.drain_ms);
  decode_slack_ms_ = child::decode_slack_ms(args_.interval_ms, args_.drain_ms);
  std::size_t hw_bytes = args_.hw_buffer_mb << 20;
  if (hw_bytes == 0) {
    hw_bytes = sample_bytes_ > 0
                   ? child::hardware_buffer_bytes(args_.interval_ms, args_.drain_ms, sample_bytes_)
                   : child::kHardwareBufferMaxBytes;
    if (sample_bytes_ == 0)
      out_.emit(m::Note{"sampler",
                        "CUPTI gave no counter-data size before the configuration: the hardware "
                        "buffer takes its largest size"});
  }

  // The GPU-time trigger needs GA10x or newer; Turing (7.5) and GA100 (8.0) count SYS clocks.
  const bool time_trigger = !(cc_ < 80 || chip_ == "GA100");
  auto config = DIESCOPE_CUPTI_PARAMS(CUpti_PmSampling_SetConfig_Params);
  config.pPmSamplingObject = sampling_;
  config.configSize = config_.size();
  config.pConfig = config_.data();
  config.hardwareBufferSize = hw_bytes;
  if (time_trigger) {
    config.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
    config.samplingInterval = static_cast<std::uint64_t>(interval_ns());
  } else {
    // Without the SYS clock's rate, take the GPU clock as its stand-in: sample lengths are then
    // approximate, but every sample still carries its own start and end.
    int khz = 0;
    driver_.attribute(&khz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, device_);
    config.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_SYSCLK_INTERVAL;
    config.samplingInterval = static_cast<std::uint64_t>(args_.interval_ms * std::max(khz, 1000));
    out_.emit(m::Note{"sampler", chip_ +
                                     " has no GPU-time trigger: samples are triggered by the SYS clock and "
                                     "last about --interval-ms"});
  }
  config.hwBufferAppendMode = args_.keep_latest ? CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_LATEST
                                                : CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_OLDEST;
  CHECK_ACQUIRE(cuptiPmSamplingSetConfig(&config));

  // Every sample that arrives between two decodes: CUPTI drops what does not fit
  // (docs/footprint.md#the-decode-image).
  const auto max_samples =
      static_cast<std::uint32_t>(child::decode_image_samples(args_.interval_ms, args_.drain_ms));
  const std::size_t bytes = image_bytes(max_samples);
  if (bytes == 0)
    throw Failure{m::ErrorKind::cupti, 0,
                  "cuptiPmSamplingGetCounterDataSize gave no size for a decode image of " +
                      std::to_string(max_samples) + " samples"};
  // Images in rotation between the decoding and the evaluating thread, the first two made now
  // (docs/footprint.md#the-decode-pipeline).
  image_bytes_ = bytes;
  const std::size_t images = child::decode_images(bytes);
  passes_.resize(images);
  ring_ = std::make_unique<child::ImageRing>(images);
  for (std::size_t i = 0; i < ring_->made(); ++i) {
    passes_[i].image.resize(bytes);
    init_image(passes_[i].image);
  }
  values_.resize(metric_ptrs_.size());
  out_.emit(m::Note{"sampler", "decode image holds " + std::to_string(max_samples) + " samples (" +
                                   std::to_string(bytes / 1024) + " KiB, " + std::to_string(sample_bytes_) +
                                   " bytes a sample); hardware buffer " + std::to_string(hw_bytes >> 20) +
                                   " MiB, " + (args_.keep_latest ? "keep-latest" : "keep-oldest") +
                                   " mode; decoded every " + std::to_string(decode_period_ms_) +
                                   " ms, a decode up to " + std::to_string(decode_slack_ms_) +
                                   " ms late losing nothing; " + std::to_string(ring_->made()) +
                                   " decode images in rotation, up to " + std::to_string(images)});
}

void Sampler::init_image(std::vector<std::uint8_t>& image) {
  auto p = DIESCOPE_CUPTI_PARAMS(CUpti_PmSampling_CounterDataImage_Initialize_Params);
  p.pPmSamplingObject = sampling_;
  p.counterDataSize = image.size();
  p.pCounterData = image.data();
  DIESCOPE_CUPTI_CHECK(cuptiPmSamplingCounterDataImageInitialize(&p));
}

void Sampler::sync_clock() {
  std::int64_t best_width = INT64_MAX;
  for (int attempt = 0; attempt < 7; ++attempt) {
    std::uint64_t gpu = 0;
    const std::int64_t before = core::realtime_ns();
    DIESCOPE_CUPTI_CHECK(cuptiGetTimestamp(&gpu));
    const std::int64_t after = core::realtime_ns();
    if (after - before < best_width) {
      best_width = after - before;
      offset_ns_ = before + (after - before) / 2 - static_cast<std::int64_t>(gpu);
    }
  }
  out_.emit(m::Clock{offset_ns_, best_width / 2, "cuptiGetTimestamp bracketed by CLOCK_REALTIME"});
  // The raw readings, so the mapping can be checked against other clocks afterwards.
  std::uint64_t gpu = 0;
  cuptiGetTimestamp(&gpu);
  out_.emit(m::Note{"clock", "cuptiGetTimestamp " + std::to_string(gpu) + ", CLOCK_REALTIME " +
                                 std::to_string(core::realtime_ns()) + ", CLOCK_MONOTONIC " +
                                 std::to_string(core::monotonic_ns()) + ", CLOCK_MONOTONIC_RAW " +
                                 std::to_string(core::monotonic_raw_ns())});
}

void Sampler::start() {
  sync_clock();
  auto start = DIESCOPE_CUPTI_PARAMS(CUpti_PmSampling_Start_Params);
  start.pPmSamplingObject = sampling_;
  CHECK_ACQUIRE(cuptiPmSamplingStart(&start));
  started_ = true;
  on_ns_ = core::realtime_ns();
  decode_offset_ns_ =
      offset_ns_;  // the evaluating thread may re-anchor offset_ns_; this copy is the decoder's
  out_.emit(m::On{on_ns_});
  out_.flush();
  evaluator_ = std::thread([this] { evaluate_loop(); });
}

bool Sampler::drain(std::int64_t due_ns) {
  // Each stage is timed with the child's own clocks (the GPU machine has no perf):
  // docs/footprint.md#the-samplers-stages. Only the decode and the samples' times are read here;
  // the evaluation, the protocol lines and the write are the evaluating thread's
  // (docs/footprint.md#the-decode-pipeline).
  const std::int64_t began = core::monotonic_ns();
  const std::int64_t cpu_began = core::thread_cpu_ns();
  const std::int64_t late_ns = due_ns > 0 ? std::max<std::int64_t>(0, began - due_ns) : 0;
  // The image made ready after the last drain counts as this drain's initialisation.
  std::int64_t decode_ns = 0, info_ns = 0, init_ns = ahead_init_ns_, wait_ns = 0, gap_ns = 0;
  const std::int64_t ahead_cpu_ns = ahead_cpu_ns_;
  ahead_init_ns_ = ahead_cpu_ns_ = 0;
  bool ok = true;
  for (int passes = 0; passes < 10'000;) {
    std::optional<child::ImageRing::Taken> taken;
    if (prepared_) {
      taken = child::ImageRing::Taken{*prepared_, false, 0};
      prepared_.reset();
    } else {
      taken = ring_->take_free();
    }
    if (!taken) return false;  // the evaluating thread stopped
    Pass& pass = passes_[taken->image];
    pass.samples.clear();
    pass.before.clear();
    pass.ends_drain = false;
    pass.blank_first = false;
    if (taken->waited_ns > 0) {
      wait_ns += taken->waited_ns;
      if (waits_++ == 0)
        pass.before.emplace_back(m::Note{
            "sampler",
            "every decode image was waiting for the evaluation: the decode waited " +
                std::to_string(taken->waited_ns / 1000) +
                " us (the hardware buffer holds what arrives meanwhile; the total is said at the end)"});
    }
    if (taken->fresh) {
      pass.image.resize(image_bytes_);
      pass.before.emplace_back(m::Note{"sampler", "the evaluation fell behind: decode image " +
                                                      std::to_string(taken->image + 1) + " of up to " +
                                                      std::to_string(ring_->limit()) + " made"});
    }
    std::int64_t t = core::monotonic_ns();
    if (taken->fresh || pass.used) init_image(pass.image);  // each decode starts on an initialised image
    init_ns += core::monotonic_ns() - t;
    ++passes;

    auto decode = DIESCOPE_CUPTI_PARAMS(CUpti_PmSampling_DecodeData_Params);
    decode.pPmSamplingObject = sampling_;
    decode.pCounterDataImage = pass.image.data();
    decode.counterDataImageSize = pass.image.size();
    t = core::monotonic_ns();
    if (passes == 1) {
      if (last_decode_began_ns_ > 0) gap_ns = t - last_decode_began_ns_;
      last_decode_began_ns_ = t;
    }
    const std::int64_t call_began_real = args_.timing ? core::realtime_ns() : 0;  // only timing notes read it
    CUptiResult rc = cuptiPmSamplingDecodeData(&decode);
    const std::int64_t one_decode_ns = core::monotonic_ns() - t;
    decode_ns += one_decode_ns;
    total_.decode_max = std::max(total_.decode_max, one_decode_ns);
    pass.used = true;
    if (rc == CUPTI_ERROR_OUT_OF_MEMORY || (rc == CUPTI_SUCCESS && decode.overflow)) {
      pass.before.emplace_back(m::Overflow{
          core::realtime_ns(),
          "the counters' hardware buffer overflowed: samples were lost (" +
              std::string(rc == CUPTI_SUCCESS ? "decode flagged overflow" : cupti::result_name(rc)) +
              "); drain more often (--drain-ms) or sample less often (--interval-ms)"});
    }
    bool last = decode.decodeStopReason != CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL;
    if (rc != CUPTI_SUCCESS) {
      pass.before.emplace_back(
          m::Note{"sampler", "cuptiPmSamplingDecodeData failed: " + cupti::result_text(rc)});
      ok = false;
      last = true;
    } else {
      t = core::monotonic_ns();
      auto info = DIESCOPE_CUPTI_PARAMS(CUpti_PmSampling_GetCounterDataInfo_Params);
      info.pCounterDataImage = pass.image.data();
      info.counterDataImageSize = pass.image.size();
      DIESCOPE_CUPTI_CHECK(cuptiPmSamplingGetCounterDataInfo(&info));
      pass.samples.reserve(info.numCompletedSamples);
      for (std::size_t i = 0; i < info.numCompletedSamples; ++i) {
        auto sample = DIESCOPE_CUPTI_PARAMS(CUpti_PmSampling_CounterData_GetSampleInfo_Params);
        sample.pPmSamplingObject = sampling_;
        sample.pCounterDataImage = pass.image.data();
        sample.counterDataImageSize = pass.image.size();
        sample.sampleIndex = i;
        DIESCOPE_CUPTI_CHECK(cuptiPmSamplingCounterDataGetSampleInfo(&sample));
        pass.samples.push_back({static_cast<std::int64_t>(sample.startTimestamp),
                                static_cast<std::int64_t>(sample.endTimestamp)});
      }
      info_ns += core::monotonic_ns() - t;
      note_pass(pass, passes, call_began_real, one_decode_ns, decode.decodeStopReason,
                info.numCompletedSamples, info.numPopulatedSamples);
      // The sample in progress when the last image was handed on lost the part that image holds.
      pass.blank_first = split_pending_ && info.numCompletedSamples > 0;
      if (info.numCompletedSamples > 0) split_pending_ = false;
      if (info.numPopulatedSamples > info.numCompletedSamples) {
        ++incomplete_;
        split_pending_ = true;
      }
    }
    if (last) {
      pass.ends_drain = true;
      pass.drain_began_ns = began;
      pass.decode_ns = decode_ns;
      pass.info_ns = info_ns;
      pass.init_ns = init_ns;
      pass.wait_ns = wait_ns;
      pass.late_ns = late_ns;
      pass.gap_ns = gap_ns;
      pass.passes = passes;
      pass.incomplete_seen = incomplete_;
      pass.decode_cpu_ns = core::thread_cpu_ns() - cpu_began + ahead_cpu_ns;
      total_.late_max = std::max(total_.late_max, late_ns);
      total_.gap_max = std::max(total_.gap_max, gap_ns);
      total_.drain_max = std::max(total_.drain_max, core::monotonic_ns() - began);
      if (static_cast<double>(gap_ns) > decode_period_ms_ * 1e6 * 1.1) ++total_.gaps_over_period;
      if (static_cast<double>(gap_ns) > (decode_period_ms_ + decode_slack_ms_) * 1e6)
        ++total_.gaps_over_image;
      total_.decode += decode_ns;
      total_.info += info_ns;
      total_.init += init_ns;
      total_.wait += wait_ns;
      total_.decode_cpu += pass.decode_cpu_ns;
      total_.passes += passes;
      ++total_.drains;
    }
    ring_->put_decoded(taken->image);
    if (last) break;
  }
  // The next drain's first image is initialised now, ahead of it, so that a drain's first decode
  // follows its wake at once (docs/footprint.md#the-decode-image). Only an image already given back
  // is taken: none is made and the decode never waits for one here.
  if (ok && started_ && !prepared_) {
    if (const auto image = ring_->try_take_free()) {
      const std::int64_t t = core::monotonic_ns();
      const std::int64_t cpu = core::thread_cpu_ns();
      Pass& next = passes_[*image];
      if (next.used) init_image(next.image);
      next.used = false;
      prepared_ = *image;
      ahead_init_ns_ = core::monotonic_ns() - t;
      ahead_cpu_ns_ = core::thread_cpu_ns() - cpu;
    }
  }
  return ok;
}

void Sampler::note_pass(Pass& pass, int number, std::int64_t call_began_real, std::int64_t call_ns, int stop,
                        std::size_t completed, std::size_t populated) {
  const bool full = stop == CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL;
  const bool slow = static_cast<double>(call_ns) > decode_period_ms_ * 1e6;
  const bool noted = args_.timing && (full || slow || note_next_pass_);
  note_next_pass_ = args_.timing && (full || slow);
  if (!noted) return;
  // Sample times on the realtime clock as the decoding thread maps them (the offset at Start), so
  // that a hole can be set beside the decode calls around it.
  const std::int64_t first = pass.samples.empty() ? 0 : pass.samples.front().start + decode_offset_ns_;
  const std::int64_t last = pass.samples.empty() ? 0 : pass.samples.back().end + decode_offset_ns_;
  pass.before.emplace_back(m::Note{
      "timing-pass",
      "drain " + std::to_string(total_.drains + 1) + " pass " + std::to_string(number) + " call_began_ns " +
          std::to_string(call_began_real) + " call_us " + std::to_string(call_ns / 1000) + " stop " +
          (full                                                          ? "full"
           : stop == CUPTI_PM_SAMPLING_DECODE_STOP_REASON_END_OF_RECORDS ? "end"
                                                                         : "other") +
          " completed " + std::to_string(completed) + " populated " + std::to_string(populated) +
          " first_start_ns " + std::to_string(first) + " last_end_ns " + std::to_string(last)});
}

void Sampler::evaluate_loop() {
  try {
    while (const auto image = ring_->take_decoded()) {
      evaluate_pass(passes_[*image]);
      ring_->put_free(*image);
    }
  } catch (const std::exception& e) {
    evaluator_error_ = e.what();
    evaluator_failed_ = true;
    ring_->close();
  } catch (...) {
    evaluator_error_ = "an unknown exception";
    evaluator_failed_ = true;
    ring_->close();
  }
}

void Sampler::evaluate_pass(Pass& pass) {
  const std::int64_t cpu_began = core::thread_cpu_ns();
  for (auto& message : pass.before) out_.emit(message);
  std::vector<SamplerMessage> ready;
  for (std::size_t i = 0; i < pass.samples.size(); ++i) {
    const std::int64_t t_eval = core::monotonic_ns();
    auto eval = DIESCOPE_CUPTI_PARAMS(CUpti_Profiler_Host_EvaluateToGpuValues_Params);
    eval.pHostObject = host_;
    eval.pCounterDataImage = pass.image.data();
    eval.counterDataImageSize = pass.image.size();
    eval.rangeIndex = i;
    eval.ppMetricNames = metric_ptrs_.data();
    eval.numMetrics = metric_ptrs_.size();
    eval.pMetricValues = values_.data();
    if (cuptiProfilerHostEvaluateToGpuValues(&eval) != CUPTI_SUCCESS)
      std::fill(values_.begin(), values_.end(), std::nan(""));
    const std::int64_t t = core::monotonic_ns();
    drain_eval_ns_ += t - t_eval;
    const std::int64_t gpu_start = pass.samples[i].start;
    const std::int64_t gpu_end = pass.samples[i].end;
    if (first_sample_) {
      first_sample_ = false;
      const std::int64_t miss = gpu_end + offset_ns_ - on_ns_;
      std::string text = "first sample: gpu start " + std::to_string(gpu_start) + ", end " +
                         std::to_string(gpu_end) + "; its end is " + std::to_string(miss) +
                         " ns after Start returned on the cuptiGetTimestamp mapping";
      if (miss > kClockTrustNs || miss < -kClockTrustNs) {
        offset_ns_ = on_ns_ - gpu_end;
        out_.emit(m::Clock{offset_ns_, interval_ns(), "anchored: the first sample ends when Start returns"});
        text += "; re-anchored";
      }
      out_.emit(m::Note{"clock", text});
    }
    // The sample that was in progress when the image was last handed on lost the part the previous
    // decode had put in that image: its values are incomplete (on the H200 FP32 read up to 123,355%
    // there; bench/results/run/2026-11-29-h200-end-to-end/). It goes out without values, so the
    // analysis drops it.
    m::Sample out_sample{gpu_start + offset_ns_, gpu_end + offset_ns_, values_};
    if (i == 0 && pass.blank_first) {
      std::fill(out_sample.values.begin(), out_sample.values.end(), std::nan(""));
      ++drain_blanked_;
      if (blanked_total_++ == 0) {
        out_.emit(m::Note{"sampler",
                          "the sample in progress at each drain is split between two decodes and its "
                          "counter values are incomplete: it is sent without values (one per drain at "
                          "most; each drain message counts them)"});
      }
    }
    // A sample CUPTI gave no time keeps end <= start here, so the retimer can recognise it.
    retimer_.feed(std::move(out_sample), ready);
    ++drain_emitted_;
    for (auto& message : ready) out_.emit(message);
    ready.clear();
    drain_emit_ns_ += core::monotonic_ns() - t;
  }
  drain_eval_cpu_ns_ += core::thread_cpu_ns() - cpu_began;
  if (!pass.ends_drain) return;
  out_.emit(m::Drain{core::realtime_ns(), drain_emitted_, (core::monotonic_ns() - pass.drain_began_ns) / 1000,
                     drain_blanked_});
  if (args_.timing) {
    out_.emit(m::Note{
        "timing",
        "decode_us " + std::to_string(pass.decode_ns / 1000) + " info_us " +
            std::to_string(pass.info_ns / 1000) + " evaluate_us " + std::to_string(drain_eval_ns_ / 1000) +
            " emit_us " + std::to_string(drain_emit_ns_ / 1000) + " init_us " +
            std::to_string(pass.init_ns / 1000) + " wait_us " + std::to_string(pass.wait_ns / 1000) +
            " late_us " + std::to_string(pass.late_ns / 1000) + " gap_us " +
            std::to_string(pass.gap_ns / 1000) + " bytes " + std::to_string(out_.pending_bytes()) +
            " cpu_us " + std::to_string((pass.decode_cpu_ns + drain_eval_cpu_ns_) / 1000) +
            " decode_cpu_us " + std::to_string(pass.decode_cpu_ns / 1000) + " evaluate_cpu_us " +
            std::to_string(drain_eval_cpu_ns_ / 1000) + " passes " + std::to_string(pass.passes) +
            " samples " + std::to_string(drain_emitted_) + " incomplete_seen " +
            std::to_string(pass.incomplete_seen)});
  }
  const std::int64_t cpu_write = core::thread_cpu_ns();
  const std::int64_t t = core::monotonic_ns();
  if (!out_.flush()) parent_gone_ = true;
  total_.write += core::monotonic_ns() - t;
  drain_eval_cpu_ns_ += core::thread_cpu_ns() - cpu_write;
  total_.evaluate += drain_eval_ns_;
  total_.emit += drain_emit_ns_;
  total_.evaluate_cpu += drain_eval_cpu_ns_;
  total_.samples += drain_emitted_;
  drain_emitted_ = drain_blanked_ = 0;
  drain_eval_ns_ = drain_emit_ns_ = drain_eval_cpu_ns_ = 0;
}

void Sampler::halt() {
  if (!evaluator_.joinable()) return;
  ring_->close();
  evaluator_.join();
}

// The run's stage totals in one note (--timing), so a benchmark reads one line.
void Sampler::emit_totals() {
  if (waits_ > 0)
    out_.emit(m::Note{"sampler", "every decode image was waiting for the evaluation " +
                                     std::to_string(waits_) + " times: the decode waited " +
                                     std::to_string(total_.wait / 1'000'000) + " ms in all"});
  if (!args_.timing) return;
  auto us = [](std::int64_t ns) { return std::to_string(ns / 1000); };
  out_.emit(m::Note{
      "timing-total",
      "drains " + std::to_string(total_.drains) + " passes " + std::to_string(total_.passes) + " samples " +
          std::to_string(total_.samples) + " decode_us " + us(total_.decode) + " info_us " + us(total_.info) +
          " evaluate_us " + us(total_.evaluate) + " emit_us " + us(total_.emit) + " init_us " +
          us(total_.init) + " write_us " + us(total_.write) + " wait_us " + us(total_.wait) +
          " drain_cpu_us " + us(total_.decode_cpu + total_.evaluate_cpu) + " decode_cpu_us " +
          us(total_.decode_cpu) + " evaluate_cpu_us " + us(total_.evaluate_cpu) + " image_bytes " +
          std::to_string(image_bytes_) + " images " + std::to_string(ring_ ? ring_->made() : 0) +
          " sample_bytes " + std::to_string(sample_bytes_) + " late_max_us " + us(total_.late_max) +
          " gap_max_us " + us(total_.gap_max) + " decode_max_us " + us(total_.decode_max) + " drain_max_us " +
          us(total_.drain_max) + " gaps_over_period " + std::to_string(total_.gaps_over_period) +
          " gaps_over_image " + std::to_string(total_.gaps_over_image)});
}

void Sampler::finish() {
  std::vector<SamplerMessage> ready;
  retimer_.finish(ready);
  for (auto& message : ready) out_.emit(message);
}

void Sampler::stop_and_disable(const std::string& reason) {
  if (started_) {
    auto stop = DIESCOPE_CUPTI_PARAMS(CUpti_PmSampling_Stop_Params);
    stop.pPmSamplingObject = sampling_;
    CUptiResult rc = cuptiPmSamplingStop(&stop);
    started_ = false;
    const bool stopped = rc == CUPTI_SUCCESS;
    if (stopped) drain();
    halt();
    if (!stopped) out_.emit(m::Note{"sampler", "cuptiPmSamplingStop failed: " + cupti::result_text(rc)});
  }
  halt();
  if (evaluator_failed_) out_.emit(m::Note{"sampler", "the evaluating thread stopped: " + evaluator_error_});
  finish();
  emit_totals();
  release();
  out_.emit(m::Off{core::realtime_ns(), reason});
  out_.flush();
}

void Sampler::release() {
  if (started_) {
    auto stop = DIESCOPE_CUPTI_PARAMS(CUpti_PmSampling_Stop_Params);
    stop.pPmSamplingObject = sampling_;
    cuptiPmSamplingStop(&stop);
    started_ = false;
  }
  if (sampling_) {
    auto disable = DIESCOPE_CUPTI_PARAMS(CUpti_PmSampling_Disable_Params);
    disable.pPmSamplingObject = sampling_;
    CUptiResult rc = cuptiPmSamplingDisable(&disable);
    if (rc != CUPTI_SUCCESS)
      out_.emit(m::Note{"sampler", "cuptiPmSamplingDisable failed: " + cupti::result_text(rc)});
    sampling_ = nullptr;
  }
  if (host_) {
    auto deinit = DIESCOPE_CUPTI_PARAMS(CUpti_Profiler_Host_Deinitialize_Params);
    deinit.pHostObject = host_;
    cuptiProfilerHostDeinitialize(&deinit);
    host_ = nullptr;
  }
}

}  // namespace

int sampler_main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--fake") == 0) return fake_sampler_main(argc, argv);
  }
  child::Emitter out;
  out.emit(m::Hello{kSamplerProtocolVersion, static_cast<long>(getpid()), "cupti"});
  std::string why;
  auto args = child::parse_args(argc, argv, why);
  if (!args) {
    out.emit(m::Error{m::ErrorKind::usage, 0, why});
    out.flush();
    return core::kExitUsage;
  }
  // A child started by diescope run or the agent times its stages too when asked through the
  // environment (docs/footprint.md#the-samplers-stages).
  if (const char* timing = std::getenv("DIESCOPE_SAMPLER_TIMING"); timing && std::strcmp(timing, "1") == 0)
    args->timing = true;
  child::StopWatcher stop;
  Sampler sampler(*args, out);
  try {
    sampler.setup();
    if (stop.stop_requested()) {
      sampler.stop_and_disable(stop.reason());
      out.emit(m::Bye{out.samples()});
      out.flush();
      return 0;
    }
    sampler.start();
    std::string reason;
    // Drains keep a fixed period: the time a drain takes is not added to the wait after it. The
    // period is the decode period (docs/footprint.md#the-decode-period).
    const auto period_ns = std::max<std::int64_t>(
        1'000'000, std::llround(child::decode_period_ms(args->interval_ms, args->drain_ms) * 1e6));
    std::int64_t next_drain = core::monotonic_ns() + period_ns;
    while (!stop.wait((next_drain - core::monotonic_ns()) / 1'000'000)) {
      const std::int64_t due = next_drain;  // a drain's lateness is timed from here (--timing)
      next_drain += period_ns;
      if (next_drain < core::monotonic_ns()) next_drain = core::monotonic_ns() + period_ns;  // fell behind
      if (!sampler.drain(due)) {
        reason = "the counter session broke (see the notes before this)";
        break;
      }
      if (sampler.parent_gone()) {
        reason = "the parent stopped reading";
        break;
      }
    }
    sampler.stop_and_disable(reason);
  } catch (const Failure& failure) {
    sampler.halt();  // `out` is this thread's again
    out.emit(m::Error{failure.kind, failure.code, failure.text});
    out.flush();
    // The destructor stops and disables whatever was enabled.
    return core::kExitDevice;
  } catch (const cupti::CuptiError& e) {
    sampler.halt();
    out.emit(m::Error{classify(e.result()), long(e.result()), e.cause()});
    out.flush();
    return core::kExitDevice;
  }
  out.emit(m::Bye{out.samples()});
  out.flush();
  return 0;
}

}  // namespace diescope::collect
