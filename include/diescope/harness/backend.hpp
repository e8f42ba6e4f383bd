// Measurement backends own the window around each sample: the runner calls begin() just before the
// benchmark function, end() just after, then collect() to turn the window into a measurement.
//
// The duration contract: a backend decides what a sample's duration is. Host-timed backends (wall
// clock, perf) leave it unset and the runner uses the host time around begin()..end(). A device-timed
// backend sets it to the device's own elapsed time and reports the host's extra time separately, so
// latency and throughput describe the kernel, not the orchestration. A backend that could not
// measure a sample marks it failed; failed samples never enter the timing statistics.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "diescope/harness/domain.hpp"
#include "diescope/harness/metric.hpp"

namespace diescope::harness {

enum class SamplePhase { warmup, calibration, timed };

struct SampleWindow {
  std::chrono::duration<double> host_elapsed{0};  // host wall time from begin() to end(), inclusive
  std::uint64_t iterations = 1;                   // how many times the benchmark ran its work
  std::size_t sample_index = 0;                   // index within its phase
  SamplePhase phase = SamplePhase::timed;
};

struct SampleMeasurement {
  std::optional<double> duration_s;    // unset (or not positive): the runner uses host_elapsed
  std::vector<MetricValue> metrics;    // backend-specific per-sample metrics
  std::optional<std::string> failure;  // set: the sample is left out of timing and named
};

class MeasurementBackend {
 public:
  virtual ~MeasurementBackend() = default;
  virtual void begin() = 0;
  virtual void end() = 0;
  virtual void collect(const SampleWindow& window, SampleMeasurement& out) = 0;
  // Short name for reports ("wall-clock", "linux-perf", "cuda-events").
  virtual std::string_view label() const = 0;
  // False: host-PMU diagnostics are suppressed whatever the domain (see domain.hpp).
  virtual bool emits_cpu_diagnostics() const { return true; }
  // Findings a reader should see once per benchmark (counters unavailable, fallbacks taken,
  // multiplexing); asked after the samples.
  virtual std::vector<Diagnostic> diagnostics() const { return {}; }
  // With concurrent workers the backend's window is the coordinated one: begin() before any worker
  // starts, end() after the last ends (docs/harness.md#concurrent-workers). What the window still
  // leaves out of the measurement, or empty when it covers every worker's work.
  virtual std::string concurrent_gap() const { return {}; }
  // True when the gap is in the duration itself (a device timer on one stream), so a concurrent
  // benchmark must say its workers join that stream before it may run; false when it only concerns
  // the backend's own metrics.
  virtual bool concurrent_gap_in_duration() const { return false; }
};

using BackendFactory = std::function<std::unique_ptr<MeasurementBackend>()>;

// Timing only: the host's wall clock around the window.
class WallClockBackend final : public MeasurementBackend {
 public:
  void begin() override {}
  void end() override {}
  void collect(const SampleWindow&, SampleMeasurement&) override {}
  std::string_view label() const override { return "wall-clock"; }
};

// Shared logic of every backend timed by device events (CUDA events, or the simulated device in
// tests): device elapsed time becomes the duration, the host's extra time becomes host_overhead_ms,
// and a device error becomes the integer metric cuda_error_code plus a failed sample, never a crash.
class DeviceEventBackend : public MeasurementBackend {
 public:
  void begin() final;
  void end() final;
  void collect(const SampleWindow& window, SampleMeasurement& out) final;
  bool emits_cpu_diagnostics() const override { return false; }
  // Device events are recorded on one stream: a concurrent worker's work on its own stream is in the
  // device time only when joined to that stream (docs/harness-sharp-edges.md#one-stream-event-timers).
  std::string concurrent_gap() const override {
    return "device events time one stream: work the workers issue on other streams counts only when joined "
           "to it before the window ends";
  }
  bool concurrent_gap_in_duration() const override { return true; }

 protected:
  // Each returns 0 on success or the device's error code.
  virtual int record_start() = 0;
  virtual int record_stop_and_wait() = 0;  // returns once the stop event has completed
  virtual int elapsed_seconds(const SampleWindow& window, double& seconds) = 0;
  virtual std::string error_name(int code) const = 0;

 private:
  int error_ = 0;
  std::string failed_call_;
};

// A device that needs no CUDA: its "elapsed time" for each window comes from a function, and chosen
// samples can be made to fail with a chosen error code. Lets CPU-only tests check everything the
// runner does with device-timed samples.
class SimulatedGpuBackend final : public DeviceEventBackend {
 public:
  using DeviceTime = std::function<double(const SampleWindow&)>;  // seconds
  explicit SimulatedGpuBackend(DeviceTime device_seconds) : device_seconds_(std::move(device_seconds)) {}

  // Timed sample `sample_index` fails in elapsed_seconds() with `code`.
  SimulatedGpuBackend& fail_timed_sample(std::size_t sample_index, int code);
  // Every window from now on fails at record_start() with `code` (a sticky device error).
  SimulatedGpuBackend& fail_always(int code);

  std::string_view label() const override { return "simulated-gpu"; }

 protected:
  int record_start() override { return sticky_error_; }
  int record_stop_and_wait() override { return 0; }
  int elapsed_seconds(const SampleWindow& window, double& seconds) override;
  std::string error_name(int code) const override;

 private:
  DeviceTime device_seconds_;
  std::map<std::size_t, int> failures_;
  int sticky_error_ = 0;
};

}  // namespace diescope::harness
