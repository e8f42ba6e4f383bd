// What running one benchmark at one parameter point produced: the timing statistics over the kept
// samples, the custom metric summaries, how and why sampling stopped, and the diagnostics.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "diescope/harness/axes.hpp"
#include "diescope/harness/benchmark.hpp"
#include "diescope/harness/domain.hpp"
#include "diescope/harness/metric.hpp"
#include "diescope/harness/statistics.hpp"
#include "diescope/harness/stopping.hpp"

namespace diescope::harness {

struct RunResult {
  std::string name;    // family name plus the axis suffix
  std::string family;  // the benchmark's own name
  AxisPoint point;
  std::size_t family_index = 0;
  std::size_t instance_index = 0;  // position of the point within its family

  MeasurementDomain domain = MeasurementDomain::cpu;
  std::string backend;
  TimingMode timing = TimingMode::batch;
  std::string cache_flush;  // the cold-mode flusher's description; empty in batch mode
  TimeUnit time_unit = TimeUnit::nanosecond;
  StoppingCriteria criteria;

  std::uint64_t iterations_per_sample = 0;
  // Per kept sample: seconds per iteration (the backend's duration / iterations), host CPU seconds
  // of the calling thread per iteration, and the sample's metrics.
  std::vector<double> sample_seconds;
  std::vector<double> sample_cpu_seconds;
  std::vector<std::vector<MetricValue>> sample_metrics;

  Summary time;                        // over sample_seconds
  Summary cpu_time;                    // over sample_cpu_seconds
  std::vector<MetricSummary> metrics;  // timed-sample metrics, then diagnostic-pass metrics

  std::size_t warmup_samples = 0;
  std::size_t throttled_samples = 0;
  std::size_t failed_samples = 0;
  std::size_t outlier_samples = 0;  // outside Tukey's fences (1.5 IQR beyond the quartiles)
  std::size_t diagnostic_pass_runs = 0;
  StopReason stop_reason = StopReason::converged;
  double wall_seconds = 0;

  HostDiagnostics host_policy = HostDiagnostics::show;
  std::vector<Diagnostic> diagnostics;  // every finding, before the domain's policy

  std::optional<std::string> error;        // nothing could be measured; the reason
  std::optional<std::string> skip_reason;  // the benchmark skipped this point

  bool ok() const { return !error && !skip_reason && time.count > 0; }
  std::vector<std::string> visible_diagnostics() const;
  const MetricSummary* find_metric(std::string_view section, std::string_view metric) const;
};

}  // namespace diescope::harness
