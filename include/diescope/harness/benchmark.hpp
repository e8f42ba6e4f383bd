// A benchmark definition: a function that runs its work `state.iterations()` times, plus how to
// measure it (domain, backend, cold or batch timing, stopping rule, axes, throughput, clock
// monitoring, diagnostic replay pass).
//
//   Benchmark("copy", [&](State& state) {
//     for (std::uint64_t i = 0; i < state.iterations(); ++i) copy(dst, src, state.get_int("bytes"));
//   }).int_axis("bytes", {1 << 20, 1 << 26})
//     .bytes_per_iteration([](const AxisPoint& p) { return 2.0 * double(p.get_int("bytes")); });
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "diescope/harness/axes.hpp"
#include "diescope/harness/backend.hpp"
#include "diescope/harness/clock.hpp"
#include "diescope/harness/diagnostic_pass.hpp"
#include "diescope/harness/domain.hpp"
#include "diescope/harness/flush.hpp"
#include "diescope/harness/metric.hpp"
#include "diescope/harness/stopping.hpp"

namespace diescope::harness {

// Batch: each sample runs the work back to back `iterations` times (calibrated so a sample lasts at
// least batch_sample_time) and reports the time per iteration; caches stay warm.
// Cold: each sample runs the work once, after the cache flusher has evicted what the previous
// sample left behind (outside the measured window).
enum class TimingMode { batch, cold };
std::string_view to_string(TimingMode mode);

enum class TimeUnit { nanosecond, microsecond, millisecond, second };
std::string_view to_string(TimeUnit unit);  // "ns", "us", "ms", "s" as Google Benchmark writes them
double seconds_per(TimeUnit unit);

class State {
 public:
  State(std::uint64_t iterations, std::size_t sample_index, const AxisPoint& axes,
        bool diagnostic_pass = false, std::size_t worker = 0)
      : iterations_(iterations),
        sample_index_(sample_index),
        axes_(&axes),
        diagnostic_pass_(diagnostic_pass),
        worker_(worker) {}

  std::uint64_t iterations() const { return iterations_; }
  std::size_t sample_index() const { return sample_index_; }
  bool in_diagnostic_pass() const { return diagnostic_pass_; }
  // Which concurrent worker this is (0 .. workers - 1); 0 without workers.
  std::size_t worker() const { return worker_; }

  const AxisPoint& axes() const { return *axes_; }
  std::int64_t get_int(std::string_view axis) const { return axes_->get_int(axis); }
  double get_double(std::string_view axis) const { return axes_->get_double(axis); }
  const std::string& get_string(std::string_view axis) const { return axes_->get_string(axis); }

  // A custom metric for this sample (kept only for timed samples).
  void push_metric(MetricValue metric) { metrics_.push_back(std::move(metric)); }
  // This parameter point cannot run (too large for memory, unsupported type): reported as skipped.
  void skip(std::string reason) { skip_reason_ = std::move(reason); }

  std::vector<MetricValue>& metrics() { return metrics_; }
  const std::optional<std::string>& skip_reason() const { return skip_reason_; }

 private:
  std::uint64_t iterations_;
  std::size_t sample_index_;
  const AxisPoint* axes_;
  bool diagnostic_pass_;
  std::size_t worker_;
  std::vector<MetricValue> metrics_;
  std::optional<std::string> skip_reason_;
};

// What a benchmark function may return for its sample (docs/harness.md#per-sample-results): the
// operations it did, which the sample's time is divided by in place of state.iterations() (0 keeps
// the iteration count), and named metrics, which join the sample's other metrics and are aggregated
// by section, name and unit in the custom metrics table.
struct SampleResult {
  std::uint64_t operations = 0;
  std::vector<MetricValue> metrics;

  static SampleResult of_operations(std::uint64_t operations) { return SampleResult{operations, {}}; }
  SampleResult& push_metric(MetricValue metric) & {
    metrics.push_back(std::move(metric));
    return *this;
  }
  SampleResult&& push_metric(MetricValue metric) && {
    metrics.push_back(std::move(metric));
    return std::move(*this);
  }
};

class Benchmark {
 public:
  using Function = std::function<void(State&)>;
  using SampleFunction = std::function<SampleResult(State&)>;
  using PerPoint = std::function<double(const AxisPoint&)>;

  struct Config {
    std::string name;
    Function function;
    SampleFunction sample_function;  // set by Benchmark::sampled; called instead of `function`
    MeasurementDomain domain = MeasurementDomain::cpu;
    BackendFactory backend;  // empty: LinuxPerfBackend
    TimingMode timing = TimingMode::batch;
    StoppingCriteria stopping;
    std::chrono::duration<double> batch_sample_time = std::chrono::milliseconds(10);
    std::vector<Axis> axes;
    PerPoint bytes_per_iteration;  // empty: no bandwidth metric
    PerPoint flops_per_iteration;  // empty: no TFLOP/s metric
    CacheFlusherFactory flusher;   // empty in cold mode: HostCacheFlusher
    ClockMonitorFactory clock_monitor;
    ThrottlePolicy throttle;
    DiagnosticPass diagnostic_pass;
    std::size_t diagnostic_samples = 1;
    TimeUnit time_unit = TimeUnit::nanosecond;
    // Concurrent workers (docs/harness.md#concurrent-workers): each sample runs the function on this
    // many threads at once, inside one backend window.
    std::size_t workers = 1;
    bool worker_streams_joined = false;  // the benchmark joins every worker's stream to the timed one
  };

  Benchmark(std::string name, Function function);
  // A benchmark whose function returns its sample's operations and metrics (SampleResult).
  static Benchmark sampled(std::string name, SampleFunction function);

  Benchmark& domain(MeasurementDomain domain);
  Benchmark& backend(BackendFactory factory);
  Benchmark& timing(TimingMode mode);
  Benchmark& stopping(StoppingCriteria criteria);
  Benchmark& batch_sample_time(std::chrono::duration<double> target);
  Benchmark& int_axis(std::string name, std::vector<std::int64_t> values);
  Benchmark& float_axis(std::string name, std::vector<double> values);
  Benchmark& string_axis(std::string name, std::vector<std::string> values);
  Benchmark& bytes_per_iteration(double bytes);
  Benchmark& bytes_per_iteration(PerPoint bytes);
  Benchmark& flops_per_iteration(double flops);
  Benchmark& flops_per_iteration(PerPoint flops);
  Benchmark& cache_flusher(CacheFlusherFactory factory);
  Benchmark& clock_monitor(ClockMonitorFactory factory, ThrottlePolicy policy = {});
  Benchmark& diagnostic_pass(DiagnosticPass pass, std::size_t samples = 1);
  Benchmark& time_unit(TimeUnit unit);
  // Runs the function on `count` threads at once per sample; the backend's window covers them all.
  // With a backend that times one device stream, pass `streams_joined` = true to say each worker's
  // work is joined to that stream before it returns; otherwise the point is refused.
  Benchmark& workers(std::size_t count, bool streams_joined = false);

  const Config& config() const { return config_; }

 private:
  Config config_;
};

}  // namespace diescope::harness
