#include "diescope/harness/backend.hpp"

#include <algorithm>

namespace diescope::harness {

void DeviceEventBackend::begin() {
  error_ = 0;
  failed_call_.clear();
  if (int code = record_start(); code != 0) {
    error_ = code;
    failed_call_ = "recording the start event";
  }
}

void DeviceEventBackend::end() {
  if (error_ != 0) return;
  if (int code = record_stop_and_wait(); code != 0) {
    error_ = code;
    failed_call_ = "recording or waiting for the stop event";
  }
}

void DeviceEventBackend::collect(const SampleWindow& window, SampleMeasurement& out) {
  double device_s = 0;
  if (error_ == 0) {
    if (int code = elapsed_seconds(window, device_s); code != 0) {
      error_ = code;
      failed_call_ = "reading the elapsed time";
    }
  }
  if (error_ != 0) {
    out.metrics.push_back(MetricValue::integer("cuda_error_code", error_, "code").with_section("backend"));
    out.failure =
        "device error " + std::to_string(error_) + " (" + error_name(error_) + ") while " + failed_call_;
    return;
  }
  out.duration_s = device_s;
  const double overhead_s = std::max(0.0, window.host_elapsed.count() - device_s);
  out.metrics.push_back(MetricValue::duration_ms("cuda_event_ms", std::chrono::duration<double>(device_s))
                            .with_section("backend")
                            .with_display_name("device time (events)"));
  out.metrics.push_back(
      MetricValue::duration_ms("host_overhead_ms", std::chrono::duration<double>(overhead_s))
          .with_section("backend")
          .with_display_name("host time beyond device"));
}

SimulatedGpuBackend& SimulatedGpuBackend::fail_timed_sample(std::size_t sample_index, int code) {
  failures_[sample_index] = code;
  return *this;
}

SimulatedGpuBackend& SimulatedGpuBackend::fail_always(int code) {
  sticky_error_ = code;
  return *this;
}

int SimulatedGpuBackend::elapsed_seconds(const SampleWindow& window, double& seconds) {
  if (window.phase == SamplePhase::timed) {
    if (auto it = failures_.find(window.sample_index); it != failures_.end()) return it->second;
  }
  seconds = device_seconds_(window);
  return 0;
}

std::string SimulatedGpuBackend::error_name(int code) const {
  return "simulated error " + std::to_string(code);
}

}  // namespace diescope::harness
