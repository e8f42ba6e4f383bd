// The diagnostic replay pass: some measurements disturb timing (hardware counter collection replays
// the work and changes launch latency), so they run in a separate pass after the timed samples, with
// the calibrated iteration count, repeated `diagnostic_samples` times. Its metrics join the custom
// metric table marked as diagnostic; it never contributes to latency, throughput, noise or outlier
// statistics. It may fail: a failure becomes a diagnostic metric and a message, not a failed run.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "diescope/harness/metric.hpp"

namespace diescope::harness {

class State;

struct DiagnosticResult {
  std::string section;  // applied to metrics that do not set their own
  std::vector<MetricValue> metrics;

  explicit DiagnosticResult(std::string default_section = "diagnostic")
      : section(std::move(default_section)) {}
  DiagnosticResult& push_metric(MetricValue metric);
};

// Thrown by a diagnostic pass: reported as the integer metric `metric_name` = `code` in `section`,
// plus the message.
class DiagnosticError : public std::runtime_error {
 public:
  DiagnosticError(std::string message, std::string section, std::string metric_name, std::int64_t code)
      : std::runtime_error(std::move(message)),
        section_(std::move(section)),
        metric_name_(std::move(metric_name)),
        code_(code) {}
  // The metrics that stand for this failure in reports (section already applied).
  virtual std::vector<MetricValue> metrics() const;
  const std::string& section() const { return section_; }
  const std::string& metric_name() const { return metric_name_; }
  std::int64_t code() const { return code_; }

 private:
  std::string section_;
  std::string metric_name_;
  std::int64_t code_;
};

using DiagnosticPass = std::function<DiagnosticResult(State&)>;

// ---- Hardware counters in a replay pass ----

// One counter the collector reads: the profiler's metric name and the stable name reports use.
struct CounterMetric {
  std::string profiler_name;
  std::string stable_name;
  std::string display_name;
  std::string unit = "%";
};

// SM, L2, DRAM and tensor-pipe percent of peak: enough to tell compute-bound, cache-bound and
// memory-bound kernels apart.
std::vector<CounterMetric> default_gpu_counters();

// Why counter collection failed; the numeric value is what the gpu_counter_error metric carries.
enum class CounterErrorKind : std::int64_t { setup = 1, permission = 2, metric = 3, collection = 4 };
std::string_view to_string(CounterErrorKind kind);

class CounterError : public DiagnosticError {
 public:
  // `vendor_code`: the profiler's own result code (CUPTI's CUptiResult), 0 when there is none.
  CounterError(CounterErrorKind kind, const std::string& message, std::int64_t vendor_code = 0);
  CounterErrorKind kind() const { return kind_; }
  std::int64_t vendor_code() const { return vendor_code_; }
  // gpu_counter_error (the kind) and, when known, gpu_counter_error_code (the vendor code), as
  // integer metrics in section "gpu_counters": a locked-down machine still runs the timing.
  std::vector<MetricValue> metrics() const override;
  DiagnosticResult to_diagnostic_result() const;

 private:
  CounterErrorKind kind_;
  std::int64_t vendor_code_;
};

// A counter collector that may need several replays of the same work (one per hardware pass).
class CounterCollector {
 public:
  virtual ~CounterCollector() = default;
  virtual void begin() = 0;  // throws CounterError
  virtual bool end() = 0;    // true once every pass has been collected; throws CounterError
  virtual std::vector<MetricValue> decode() = 0;  // throws CounterError
};

// Runs `workload` between begin() and end() until the collector has every pass (at most
// `max_passes` times), then decodes. Throws CounterError (Collection) if the passes never complete.
DiagnosticResult collect_counters(CounterCollector& collector, const std::function<void()>& workload,
                                  std::size_t max_passes = 64);

}  // namespace diescope::harness
