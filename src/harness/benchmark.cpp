#include "diescope/harness/benchmark.hpp"

#include "diescope/harness/result.hpp"

namespace diescope::harness {

std::string_view to_string(TimingMode mode) {
  return mode == TimingMode::cold ? "cold" : "batch";
}

std::string_view to_string(TimeUnit unit) {
  switch (unit) {
    case TimeUnit::nanosecond:
      return "ns";
    case TimeUnit::microsecond:
      return "us";
    case TimeUnit::millisecond:
      return "ms";
    case TimeUnit::second:
      return "s";
  }
  return "s";
}

double seconds_per(TimeUnit unit) {
  switch (unit) {
    case TimeUnit::nanosecond:
      return 1e-9;
    case TimeUnit::microsecond:
      return 1e-6;
    case TimeUnit::millisecond:
      return 1e-3;
    case TimeUnit::second:
      return 1.0;
  }
  return 1.0;
}

Benchmark::Benchmark(std::string name, Function function) {
  config_.name = std::move(name);
  config_.function = std::move(function);
}

Benchmark Benchmark::sampled(std::string name, SampleFunction function) {
  Benchmark b(std::move(name), Function{});
  b.config_.sample_function = std::move(function);
  return b;
}

Benchmark& Benchmark::workers(std::size_t count, bool streams_joined) {
  config_.workers = count == 0 ? 1 : count;
  config_.worker_streams_joined = streams_joined;
  return *this;
}

Benchmark& Benchmark::domain(MeasurementDomain domain) {
  config_.domain = domain;
  return *this;
}
Benchmark& Benchmark::backend(BackendFactory factory) {
  config_.backend = std::move(factory);
  return *this;
}
Benchmark& Benchmark::timing(TimingMode mode) {
  config_.timing = mode;
  return *this;
}
Benchmark& Benchmark::stopping(StoppingCriteria criteria) {
  config_.stopping = criteria;
  return *this;
}
Benchmark& Benchmark::batch_sample_time(std::chrono::duration<double> target) {
  config_.batch_sample_time = target;
  return *this;
}
Benchmark& Benchmark::int_axis(std::string name, std::vector<std::int64_t> values) {
  config_.axes.push_back({std::move(name), {values.begin(), values.end()}});
  return *this;
}
Benchmark& Benchmark::float_axis(std::string name, std::vector<double> values) {
  config_.axes.push_back({std::move(name), {values.begin(), values.end()}});
  return *this;
}
Benchmark& Benchmark::string_axis(std::string name, std::vector<std::string> values) {
  config_.axes.push_back({std::move(name), {values.begin(), values.end()}});
  return *this;
}
Benchmark& Benchmark::bytes_per_iteration(double bytes) {
  return bytes_per_iteration([bytes](const AxisPoint&) { return bytes; });
}
Benchmark& Benchmark::bytes_per_iteration(PerPoint bytes) {
  config_.bytes_per_iteration = std::move(bytes);
  return *this;
}
Benchmark& Benchmark::flops_per_iteration(double flops) {
  return flops_per_iteration([flops](const AxisPoint&) { return flops; });
}
Benchmark& Benchmark::flops_per_iteration(PerPoint flops) {
  config_.flops_per_iteration = std::move(flops);
  return *this;
}
Benchmark& Benchmark::cache_flusher(CacheFlusherFactory factory) {
  config_.flusher = std::move(factory);
  return *this;
}
Benchmark& Benchmark::clock_monitor(ClockMonitorFactory factory, ThrottlePolicy policy) {
  config_.clock_monitor = std::move(factory);
  config_.throttle = policy;
  return *this;
}
Benchmark& Benchmark::diagnostic_pass(DiagnosticPass pass, std::size_t samples) {
  config_.diagnostic_pass = std::move(pass);
  config_.diagnostic_samples = samples;
  return *this;
}
Benchmark& Benchmark::time_unit(TimeUnit unit) {
  config_.time_unit = unit;
  return *this;
}

std::vector<std::string> RunResult::visible_diagnostics() const {
  return harness::visible_diagnostics(diagnostics, host_policy);
}

const MetricSummary* RunResult::find_metric(std::string_view section, std::string_view metric) const {
  for (const MetricSummary& m : metrics) {
    if (m.key.section == section && m.key.name == metric) return &m;
  }
  return nullptr;
}

}  // namespace diescope::harness
