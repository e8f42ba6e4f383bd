// Test doubles shared by the bench tests: nothing here touches a GPU or the PMU.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "diescope/harness/backend.hpp"
#include "diescope/harness/clock.hpp"
#include "diescope/harness/flush.hpp"

namespace diescope::harness::testing {

// Counts flushes instead of writing memory.
class CountingFlusher final : public CacheFlusher {
 public:
  explicit CountingFlusher(std::shared_ptr<int> count) : count_(std::move(count)) {}
  void flush() override { ++*count_; }
  std::string describe() const override { return "counting flusher"; }

 private:
  std::shared_ptr<int> count_;
};

// Reads a scripted sequence of SM clocks, one per call (the last one repeats).
class ScriptedClock final : public ClockMonitor {
 public:
  ScriptedClock(std::vector<double> clocks, std::optional<double> reference)
      : clocks_(std::move(clocks)), reference_(reference) {}
  std::optional<double> sm_clock_mhz() override {
    const double c = clocks_[std::min(next_, clocks_.size() - 1)];
    ++next_;
    return c;
  }
  std::optional<double> reference_sm_clock_mhz() override { return reference_; }
  std::string describe() const override { return "scripted clock"; }

 private:
  std::vector<double> clocks_;
  std::optional<double> reference_;
  std::size_t next_ = 0;
};

// A host-timed backend that adds fixed metrics to every sample and says whether it wants host-PMU
// diagnostics: stands in for a perf backend reporting chosen counter values.
class FixedMetricsBackend final : public MeasurementBackend {
 public:
  FixedMetricsBackend(std::vector<MetricValue> metrics, bool emits_cpu_diagnostics)
      : metrics_(std::move(metrics)), emits_(emits_cpu_diagnostics) {}
  void begin() override {}
  void end() override {}
  void collect(const SampleWindow&, SampleMeasurement& out) override { out.metrics = metrics_; }
  std::string_view label() const override { return "fixed-metrics"; }
  bool emits_cpu_diagnostics() const override { return emits_; }

 private:
  std::vector<MetricValue> metrics_;
  bool emits_;
};

// Device time from a list indexed by timed sample (warm-up and calibration get the first entry).
inline SimulatedGpuBackend::DeviceTime device_times(std::vector<double> seconds) {
  return [seconds = std::move(seconds)](const SampleWindow& w) {
    return w.phase == SamplePhase::timed ? seconds.at(w.sample_index) : seconds.front();
  };
}

}  // namespace diescope::harness::testing
