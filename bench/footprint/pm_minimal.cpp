// A minimal CUPTI PM-sampling program, apart from diescope: how short an interval CUPTI and the
// hardware sustain on this GPU, and what the hardware buffer takes per sample. It enables PM
// sampling device-wide, decodes every --drain-ms, reads each sample's times (and its values with
// --evaluate), and prints one summary line of key=value pairs:
//   samples, untimed (end <= start), holes (a timed sample starting more than half an interval after
//   the previous one ended) and the time they cover, overflow, and the wall and CPU time of each stage.
//
//   pm_minimal --metrics a,b,... [--device 0] [--interval-ms 0.1] [--drain-ms 100] [--seconds 10]
//              [--hw-buffer-mb 512] [--evaluate] [--keep-latest] [--slack-ms 0] [--pass-log]
//
// The decode image holds one drain's samples and a quarter more, or with --slack-ms S one drain's
// and max(a quarter drain, S) ms more: the child's rule (docs/footprint.md#the-decode-image), so that
// CUPTI alone can be run with the child's image. It also times how late each drain began
// (late_max_ms) and the longest gap between two drains' first decodes (gap_max_ms).
//
// With --pass-log it also prints, to stderr, a `pass` line for each decode pass that filled the
// image or whose call took longer than --drain-ms, and for the pass after it (when the call
// began and how long it took, on CLOCK_REALTIME, its stop reason, and its first and last sample's
// times mapped onto CLOCK_REALTIME), and a `hole` line for each of the first 100 holes, so that a
// hole can be set beside the decode calls and the GPU programs around it
// (docs/footprint.md#the-decode-image). full_passes counts the passes that filled the image.
//
// With a small --hw-buffer-mb and a --drain-ms longer than the run, the buffer fills before the
// one decode: the samples decoded then are what the buffer holds, so its size over their count is
// the raw bytes one sample takes (printed as raw_bytes_per_sample_if_full). On the H200 this did not
// work in keep-oldest mode: a decode after an overflow returned no sample
// (bench/results/footprint/2026-12-02-h200-footprint/). --keep-latest asks the hardware buffer to
// keep the newest samples instead, so that the one decode finds it full.
#include <cuda.h>
#include <cupti_activity.h>
#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <sys/resource.h>
#include <unistd.h>
#include <vector>

namespace {

std::int64_t now_ns(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

void check(CUptiResult rc, const char* what) {
  if (rc == CUPTI_SUCCESS) return;
  const char* text = nullptr;
  cuptiGetResultString(rc, &text);
  std::fprintf(stderr, "pm_minimal: %s failed: %s\n", what, text ? text : "?");
  std::exit(1);
}
#define CHECK(call) check((call), #call)

template <typename T>
T params(std::size_t size) {
  T p;
  std::memset(&p, 0, sizeof p);
  p.structSize = size;
  return p;
}
#define PARAMS(T) params<T>(T##_STRUCT_SIZE)

}  // namespace

int main(int argc, char** argv) {
  int device = 0;
  double interval_ms = 0.1, drain_ms = 100, seconds = 10, slack_ms = 0;
  std::size_t hw_mb = 512;
  bool evaluate = false, keep_latest = false, pass_log = false;
  std::vector<std::string> names;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "pm_minimal: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--device")
      device = std::atoi(value());
    else if (a == "--interval-ms")
      interval_ms = std::atof(value());
    else if (a == "--drain-ms")
      drain_ms = std::atof(value());
    else if (a == "--seconds")
      seconds = std::atof(value());
    else if (a == "--hw-buffer-mb")
      hw_mb = std::strtoul(value(), nullptr, 10);
    else if (a == "--slack-ms")
      slack_ms = std::atof(value());
    else if (a == "--evaluate")
      evaluate = true;
    else if (a == "--keep-latest")
      keep_latest = true;
    else if (a == "--pass-log")
      pass_log = true;
    else if (a == "--metrics") {
      std::string list = value();
      for (std::size_t b = 0, c; b <= list.size(); b = c + 1) {
        c = list.find(',', b);
        if (c == std::string::npos) c = list.size();
        if (c > b) names.push_back(list.substr(b, c - b));
      }
    } else {
      std::fprintf(stderr, "pm_minimal: unknown argument %s (see the header of pm_minimal.cpp)\n", a.c_str());
      return 2;
    }
  }
  if (names.empty() || !(interval_ms > 0) || !(drain_ms > 0)) {
    std::fprintf(stderr, "pm_minimal: give --metrics a,b,... and positive --interval-ms and --drain-ms\n");
    return 2;
  }
  std::vector<const char*> metrics;
  for (auto& n : names) metrics.push_back(n.c_str());

  if (cuInit(0) != CUDA_SUCCESS) {
    std::fprintf(stderr, "pm_minimal: cuInit failed: no usable NVIDIA driver\n");
    return 1;
  }
  auto init = PARAMS(CUpti_Profiler_Initialize_Params);
  CHECK(cuptiProfilerInitialize(&init));
  auto chip = PARAMS(CUpti_Device_GetChipName_Params);
  chip.deviceIndex = static_cast<std::size_t>(device);
  CHECK(cuptiDeviceGetChipName(&chip));
  auto avail = PARAMS(CUpti_PmSampling_GetCounterAvailability_Params);
  avail.deviceIndex = static_cast<std::size_t>(device);
  CHECK(cuptiPmSamplingGetCounterAvailability(&avail));
  std::vector<std::uint8_t> availability(avail.counterAvailabilityImageSize);
  avail.pCounterAvailabilityImage = availability.data();
  CHECK(cuptiPmSamplingGetCounterAvailability(&avail));

  auto host = PARAMS(CUpti_Profiler_Host_Initialize_Params);
  host.profilerType = CUPTI_PROFILER_TYPE_PM_SAMPLING;
  host.pChipName = chip.pChipName;
  host.pCounterAvailabilityImage = availability.data();
  CHECK(cuptiProfilerHostInitialize(&host));
  auto add = PARAMS(CUpti_Profiler_Host_ConfigAddMetrics_Params);
  add.pHostObject = host.pHostObject;
  add.ppMetricNames = metrics.data();
  add.numMetrics = metrics.size();
  CHECK(cuptiProfilerHostConfigAddMetrics(&add));
  auto cfg_size = PARAMS(CUpti_Profiler_Host_GetConfigImageSize_Params);
  cfg_size.pHostObject = host.pHostObject;
  CHECK(cuptiProfilerHostGetConfigImageSize(&cfg_size));
  std::vector<std::uint8_t> config_image(cfg_size.configImageSize);
  auto cfg = PARAMS(CUpti_Profiler_Host_GetConfigImage_Params);
  cfg.pHostObject = host.pHostObject;
  cfg.configImageSize = config_image.size();
  cfg.pConfigImage = config_image.data();
  CHECK(cuptiProfilerHostGetConfigImage(&cfg));

  auto enable = PARAMS(CUpti_PmSampling_Enable_Params);
  enable.deviceIndex = static_cast<std::size_t>(device);
  CHECK(cuptiPmSamplingEnable(&enable));
  auto* sampling = enable.pPmSamplingObject;
  auto set = PARAMS(CUpti_PmSampling_SetConfig_Params);
  set.pPmSamplingObject = sampling;
  set.configSize = config_image.size();
  set.pConfig = config_image.data();
  set.hardwareBufferSize = hw_mb << 20;
  set.samplingInterval = static_cast<std::uint64_t>(std::llround(interval_ms * 1e6));
  set.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
  set.hwBufferAppendMode = keep_latest ? CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_LATEST
                                       : CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_OLDEST;
  CHECK(cuptiPmSamplingSetConfig(&set));

  // The image holds one drain's samples and a quarter more, within 64 MiB.
  auto size = PARAMS(CUpti_PmSampling_GetCounterDataSize_Params);
  size.pPmSamplingObject = sampling;
  size.pMetricNames = metrics.data();
  size.numMetrics = metrics.size();
  const double image_ms = drain_ms + std::max(0.25 * drain_ms, slack_ms);
  auto max_samples = static_cast<std::uint32_t>(std::max(8.0, std::ceil(image_ms / interval_ms - 1e-9) + 4));
  for (;;) {
    size.maxSamples = max_samples;
    CHECK(cuptiPmSamplingGetCounterDataSize(&size));
    if (size.counterDataSize <= (std::size_t{64} << 20) || max_samples <= 8) break;
    max_samples /= 2;
  }
  std::vector<std::uint8_t> image(size.counterDataSize);
  auto init_image = [&] {
    auto p = PARAMS(CUpti_PmSampling_CounterDataImage_Initialize_Params);
    p.pPmSamplingObject = sampling;
    p.counterDataSize = image.size();
    p.pCounterData = image.data();
    CHECK(cuptiPmSamplingCounterDataImageInitialize(&p));
  };
  init_image();
  std::vector<double> values(metrics.size());

  // GPU time onto CLOCK_REALTIME: cuptiGetTimestamp between two clock readings, the tightest of 7.
  std::int64_t offset_ns = 0;
  for (std::int64_t attempt = 0, best = INT64_MAX; attempt < 7; ++attempt) {
    std::uint64_t gpu = 0;
    const std::int64_t before = now_ns(CLOCK_REALTIME);
    CHECK(cuptiGetTimestamp(&gpu));
    const std::int64_t after = now_ns(CLOCK_REALTIME);
    if (after - before < best) {
      best = after - before;
      offset_ns = before + (after - before) / 2 - static_cast<std::int64_t>(gpu);
    }
  }
  const std::int64_t interval_ns = std::llround(interval_ms * 1e6);
  long samples = 0, untimed = 0, holes = 0, overflow = 0, drains = 0, passes = 0, full_passes = 0;
  bool log_next = false;
  std::int64_t hole_ns = 0, first_start = -1, last_end = -1, decode_ns = 0, read_ns = 0, eval_ns = 0;
  std::int64_t last_decode = -1, gap_max = 0, late_max = 0;
  auto drain = [&] {
    ++drains;
    const std::int64_t first_decode = now_ns(CLOCK_MONOTONIC);
    if (last_decode >= 0) gap_max = std::max(gap_max, first_decode - last_decode);
    last_decode = first_decode;
    for (;;) {
      ++passes;
      auto d = PARAMS(CUpti_PmSampling_DecodeData_Params);
      d.pPmSamplingObject = sampling;
      d.pCounterDataImage = image.data();
      d.counterDataImageSize = image.size();
      std::int64_t t = now_ns(CLOCK_MONOTONIC);
      const std::int64_t call_began = now_ns(CLOCK_REALTIME);
      CUptiResult rc = cuptiPmSamplingDecodeData(&d);
      const std::int64_t call_ns = now_ns(CLOCK_MONOTONIC) - t;
      decode_ns += call_ns;
      const bool full =
          rc == CUPTI_SUCCESS && d.decodeStopReason == CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL;
      full_passes += full ? 1 : 0;
      const bool slow = static_cast<double>(call_ns) > drain_ms * 1e6;
      const bool log_this = pass_log && (full || slow || log_next);
      log_next = full || slow;
      std::int64_t first_start_ns = 0, last_end_ns = 0;
      if (rc == CUPTI_ERROR_OUT_OF_MEMORY || (rc == CUPTI_SUCCESS && d.overflow)) ++overflow;
      if (rc != CUPTI_SUCCESS && rc != CUPTI_ERROR_OUT_OF_MEMORY) check(rc, "cuptiPmSamplingDecodeData");
      auto info = PARAMS(CUpti_PmSampling_GetCounterDataInfo_Params);
      info.pCounterDataImage = image.data();
      info.counterDataImageSize = image.size();
      CHECK(cuptiPmSamplingGetCounterDataInfo(&info));
      for (std::size_t i = 0; i < info.numCompletedSamples; ++i) {
        t = now_ns(CLOCK_MONOTONIC);
        auto s = PARAMS(CUpti_PmSampling_CounterData_GetSampleInfo_Params);
        s.pPmSamplingObject = sampling;
        s.pCounterDataImage = image.data();
        s.counterDataImageSize = image.size();
        s.sampleIndex = i;
        CHECK(cuptiPmSamplingCounterDataGetSampleInfo(&s));
        const std::int64_t t2 = now_ns(CLOCK_MONOTONIC);
        read_ns += t2 - t;
        if (evaluate) {
          auto e = PARAMS(CUpti_Profiler_Host_EvaluateToGpuValues_Params);
          e.pHostObject = host.pHostObject;
          e.pCounterDataImage = image.data();
          e.counterDataImageSize = image.size();
          e.rangeIndex = i;
          e.ppMetricNames = metrics.data();
          e.numMetrics = metrics.size();
          e.pMetricValues = values.data();
          cuptiProfilerHostEvaluateToGpuValues(&e);
          eval_ns += now_ns(CLOCK_MONOTONIC) - t2;
        }
        ++samples;
        const auto start = static_cast<std::int64_t>(s.startTimestamp);
        const auto end = static_cast<std::int64_t>(s.endTimestamp);
        if (i == 0) first_start_ns = start + offset_ns;
        last_end_ns = end + offset_ns;
        if (end <= start) {
          ++untimed;
          continue;
        }
        if (first_start < 0) first_start = end;  // the first sample spans the setup: counted from its end
        if (last_end >= 0 && start - last_end > interval_ns / 2) {
          if (pass_log && holes < 100)
            std::fprintf(stderr, "hole from_ns %lld to_ns %lld ms %.3f drain %ld pass %ld\n",
                         static_cast<long long>(last_end + offset_ns),
                         static_cast<long long>(start + offset_ns),
                         static_cast<double>(start - last_end) / 1e6, drains, passes);
          ++holes;
          hole_ns += start - last_end;
        }
        last_end = std::max(last_end, end);
      }
      if (log_this)
        std::fprintf(
            stderr,
            "pass drain %ld pass %ld call_began_ns %lld call_us %lld stop %s completed %zu populated %zu "
            "first_start_ns %lld last_end_ns %lld\n",
            drains, passes, static_cast<long long>(call_began), static_cast<long long>(call_ns / 1000),
            full                                                                        ? "full"
            : d.decodeStopReason == CUPTI_PM_SAMPLING_DECODE_STOP_REASON_END_OF_RECORDS ? "end"
                                                                                        : "other",
            info.numCompletedSamples, info.numPopulatedSamples, static_cast<long long>(first_start_ns),
            static_cast<long long>(last_end_ns));
      init_image();
      if (d.decodeStopReason != CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL) break;
    }
  };

  auto start = PARAMS(CUpti_PmSampling_Start_Params);
  start.pPmSamplingObject = sampling;
  CHECK(cuptiPmSamplingStart(&start));
  const std::int64_t began = now_ns(CLOCK_MONOTONIC), cpu_began = now_ns(CLOCK_PROCESS_CPUTIME_ID);
  const auto period = static_cast<std::int64_t>(drain_ms * 1e6);
  const std::int64_t until = began + static_cast<std::int64_t>(seconds * 1e9);
  for (std::int64_t next = began + period; next < until; next += period) {
    const std::int64_t wait = next - now_ns(CLOCK_MONOTONIC);
    if (wait > 0) usleep(static_cast<useconds_t>(wait / 1000));
    late_max = std::max(late_max, now_ns(CLOCK_MONOTONIC) - next);
    drain();
  }
  if (const std::int64_t wait = until - now_ns(CLOCK_MONOTONIC); wait > 0)
    usleep(static_cast<useconds_t>(wait / 1000));
  auto stop = PARAMS(CUpti_PmSampling_Stop_Params);
  stop.pPmSamplingObject = sampling;
  CHECK(cuptiPmSamplingStop(&stop));
  drain();
  const double wall_s = static_cast<double>(now_ns(CLOCK_MONOTONIC) - began) / 1e9;
  const double cpu_s = static_cast<double>(now_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu_began) / 1e9;
  const double span_ms = last_end > first_start ? static_cast<double>(last_end - first_start) / 1e6 : 0;
  // Untimed samples fill holes one interval each (diescope's retimer places them there): what they
  // do not fill is lost.
  const double unplaced_ms =
      std::max(0.0, static_cast<double>(hole_ns) / 1e6 - static_cast<double>(untimed) * interval_ms);
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  std::printf(
      "interval_ms=%g drain_ms=%g hw_buffer_mb=%zu evaluate=%d seconds=%.2f samples=%ld untimed=%ld "
      "holes=%ld "
      "hole_ms=%.3f unplaced_ms=%.3f span_ms=%.1f lost_pct=%.3f overflow=%ld drains=%ld passes=%ld "
      "image_kib=%zu decode_ms=%.1f "
      "sampleinfo_ms=%.1f evaluate_ms=%.1f cpu_pct=%.2f maxrss_mb=%.1f keep_latest=%d "
      "raw_bytes_per_sample_if_full=%.0f image_samples=%u slack_ms=%g late_max_ms=%.3f gap_max_ms=%.3f "
      "full_passes=%ld\n",
      interval_ms, drain_ms, hw_mb, evaluate ? 1 : 0, wall_s, samples, untimed, holes,
      static_cast<double>(hole_ns) / 1e6, unplaced_ms, span_ms,
      span_ms > 0 ? 100.0 * unplaced_ms / span_ms : 0.0, overflow, drains, passes, image.size() / 1024,
      static_cast<double>(decode_ns) / 1e6, static_cast<double>(read_ns) / 1e6,
      static_cast<double>(eval_ns) / 1e6, 100 * cpu_s / wall_s, static_cast<double>(ru.ru_maxrss) / 1024,
      keep_latest ? 1 : 0,
      samples > 0 ? static_cast<double>(hw_mb << 20) / static_cast<double>(samples) : 0.0, max_samples,
      slack_ms, static_cast<double>(late_max) / 1e6, static_cast<double>(gap_max) / 1e6, full_passes);
  auto disable = PARAMS(CUpti_PmSampling_Disable_Params);
  disable.pPmSamplingObject = sampling;
  cuptiPmSamplingDisable(&disable);
  auto deinit = PARAMS(CUpti_Profiler_Host_Deinitialize_Params);
  deinit.pHostObject = host.pHostObject;
  cuptiProfilerHostDeinitialize(&deinit);
  return 0;
}
