// Hardware counters for the diagnostic replay pass through CUPTI's range profiler (library
// diescope_harness_cuda). One user range is pushed around the workload and the workload is replayed
// once per hardware pass until CUPTI has every counter; values are evaluated by CUPTI's host API.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "diescope/harness/benchmark.hpp"
#include "diescope/harness/diagnostic_pass.hpp"

namespace diescope::harness {

class CuptiRangeCollector final : public CounterCollector {
 public:
  // Sets up CUPTI on `device` (the current CUDA context, created if needed). Throws CounterError:
  // Setup (no device, CUPTI failure), Permission (counters restricted to admin users), Metric (a
  // name this chip does not have).
  explicit CuptiRangeCollector(std::vector<CounterMetric> metrics = default_gpu_counters(), int device = 0);
  ~CuptiRangeCollector() override;
  CuptiRangeCollector(const CuptiRangeCollector&) = delete;
  CuptiRangeCollector& operator=(const CuptiRangeCollector&) = delete;

  void begin() override;
  bool end() override;
  std::vector<MetricValue> decode() override;  // once per collector: make a new one to collect again

  const std::string& chip() const;
  std::size_t passes() const;  // replays the metric set needs on this chip

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// CUPTI's host API only, no GPU needed: how many replays `metrics` need on `chip` (e.g. "GH100").
// Throws CounterError (Metric) for a name the chip does not have.
std::size_t counter_pass_count(const std::string& chip, const std::vector<CounterMetric>& metrics);

// A diagnostic pass that collects `metrics` while replaying `workload` (which must finish its work on
// the device, or leave it queued on the current context, before returning).
DiagnosticPass counter_replay_pass(std::function<void(State&)> workload,
                                   std::vector<CounterMetric> metrics = default_gpu_counters(),
                                   int device = 0);

}  // namespace diescope::harness
