#include "diescope/harness/diagnostic_pass.hpp"

namespace diescope::harness {

DiagnosticResult& DiagnosticResult::push_metric(MetricValue metric) {
  metrics.push_back(std::move(metric));
  return *this;
}

std::vector<MetricValue> DiagnosticError::metrics() const {
  return {MetricValue::integer(metric_name_, code_, "code").with_section(section_)};
}

std::vector<CounterMetric> default_gpu_counters() {
  return {
      {"sm__throughput.avg.pct_of_peak_sustained_elapsed", "gpu_sm_peak_pct", "SM throughput", "%"},
      {"lts__throughput.avg.pct_of_peak_sustained_elapsed", "gpu_l2_peak_pct", "L2 throughput", "%"},
      {"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", "gpu_memory_peak_pct",
       "memory throughput", "%"},
      {"dram__throughput.avg.pct_of_peak_sustained_elapsed", "gpu_dram_peak_pct", "DRAM throughput", "%"},
      {"sm__inst_executed_pipe_tensor.avg.pct_of_peak_sustained_active", "gpu_tensor_active_pct",
       "tensor pipe (active)", "%"},
  };
}

std::string_view to_string(CounterErrorKind kind) {
  switch (kind) {
    case CounterErrorKind::setup:
      return "setup";
    case CounterErrorKind::permission:
      return "permission";
    case CounterErrorKind::metric:
      return "metric";
    case CounterErrorKind::collection:
      return "collection";
  }
  return "unknown";
}

CounterError::CounterError(CounterErrorKind kind, const std::string& message, std::int64_t vendor_code)
    : DiagnosticError("GPU counters (" + std::string(to_string(kind)) + "): " + message, "gpu_counters",
                      "gpu_counter_error", static_cast<std::int64_t>(kind)),
      kind_(kind),
      vendor_code_(vendor_code) {}

std::vector<MetricValue> CounterError::metrics() const {
  std::vector<MetricValue> out = DiagnosticError::metrics();
  if (vendor_code_ != 0) {
    out.push_back(
        MetricValue::integer("gpu_counter_error_code", vendor_code_, "code").with_section(section()));
  }
  return out;
}

DiagnosticResult CounterError::to_diagnostic_result() const {
  DiagnosticResult result(section());
  for (MetricValue& m : metrics()) result.push_metric(std::move(m));
  return result;
}

DiagnosticResult collect_counters(CounterCollector& collector, const std::function<void()>& workload,
                                  std::size_t max_passes) {
  for (std::size_t pass = 0; pass < max_passes; ++pass) {
    collector.begin();
    workload();
    if (collector.end()) {
      DiagnosticResult result("gpu_counters");
      for (MetricValue& m : collector.decode()) result.push_metric(std::move(m));
      result.push_metric(
          MetricValue::integer("gpu_counter_passes", static_cast<std::int64_t>(pass + 1), "passes"));
      return result;
    }
  }
  throw CounterError(CounterErrorKind::collection,
                     "the counters needed more than " + std::to_string(max_passes) +
                         " replays of the workload; collect fewer metrics at once");
}

}  // namespace diescope::harness
