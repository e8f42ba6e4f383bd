#include "diescope/harness/runner.hpp"

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "diescope/core/clock.hpp"
#include "diescope/harness/perf_backend.hpp"

namespace diescope::harness {

namespace {

using Clock = std::chrono::steady_clock;

// Host-PMU findings (medians over samples). Rough lines between "fine" and "worth a look" on
// current x86 and Arm server cores.
constexpr double kLowIpc = 1.0;
constexpr double kHighBranchMissPct = 5.0;
constexpr double kHighCacheMissPct = 10.0;
constexpr double kContextSwitchesPerSample = 1.0;
// Stability findings.
constexpr double kOutlierFractionWorthNaming = 0.05;
// Batch calibration grows the iteration count by at most 10x a step so a slow first sample cannot
// send it far past the target, and stops at 2^40 iterations (work the compiler optimised away).
constexpr std::uint64_t kMaxBatchIterations = std::uint64_t{1} << 40;

double thread_cpu_seconds() {
  return static_cast<double>(core::thread_cpu_ns()) * 1e-9;
}

struct Window {
  SampleMeasurement measurement;
  double host_s = 0;
  double cpu_s = 0;
  std::vector<MetricValue> state_metrics;
  std::optional<std::string> skip_reason;
  std::uint64_t operations = 0;  // what a sampled benchmark returned; 0: the iteration count

  // The backend's duration when it gave one, else the host's time around the window.
  double duration_s() const {
    return measurement.duration_s && *measurement.duration_s > 0 ? *measurement.duration_s : host_s;
  }
};

SampleResult call_function(const Benchmark::Config& config, State& state) {
  if (config.sample_function) return config.sample_function(state);
  config.function(state);
  return {};
}

// Concurrent workers (docs/harness.md#concurrent-workers): every worker thread is started and waits
// at a gate; the backend's window opens, the gate releases them all, and it closes once the last
// has returned, so the window is the coordinated one. Worker 0 runs on the calling thread (what a
// thread-bound backend such as perf counts). Worker results are merged: operations add up, metrics
// are kept per worker; the first exception is rethrown after every worker has ended.
SampleResult run_workers(const Benchmark::Config& config, MeasurementBackend& backend,
                         std::uint64_t iterations, std::size_t index, const AxisPoint& point, State& first) {
  const std::size_t n = config.workers;
  std::vector<SampleResult> results(n);
  std::vector<std::exception_ptr> errors(n);
  std::vector<std::unique_ptr<State>> states;
  for (std::size_t k = 1; k < n; ++k)
    states.push_back(std::make_unique<State>(iterations, index, point, false, k));
  std::mutex mutex;
  std::condition_variable cv;
  std::size_t ready = 0;
  bool go = false;
  std::vector<std::thread> threads;
  for (std::size_t k = 1; k < n; ++k) {
    threads.emplace_back([&, k] {
      {
        std::unique_lock<std::mutex> lock(mutex);
        ++ready;
        cv.notify_all();
        cv.wait(lock, [&] { return go; });
      }
      try {
        results[k] = call_function(config, *states[k - 1]);
      } catch (...) {
        errors[k] = std::current_exception();
      }
    });
  }
  {
    std::unique_lock<std::mutex> lock(mutex);
    cv.wait(lock, [&] { return ready == n - 1; });
  }
  backend.begin();
  {
    const std::lock_guard<std::mutex> lock(mutex);
    go = true;
  }
  cv.notify_all();
  try {
    results[0] = call_function(config, first);
  } catch (...) {
    errors[0] = std::current_exception();
  }
  for (std::thread& t : threads) t.join();
  backend.end();
  SampleResult merged;
  for (std::size_t k = 0; k < n; ++k) {
    merged.operations += results[k].operations;
    for (MetricValue& m : results[k].metrics) merged.metrics.push_back(std::move(m));
    if (k > 0)
      for (MetricValue& m : states[k - 1]->metrics()) merged.metrics.push_back(std::move(m));
    if (k > 0 && states[k - 1]->skip_reason() && !first.skip_reason())
      first.skip(*states[k - 1]->skip_reason());
  }
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  return merged;
}

Window run_window(const Benchmark::Config& config, MeasurementBackend& backend, std::uint64_t iterations,
                  std::size_t index, SamplePhase phase, const AxisPoint& point) {
  State state(iterations, index, point);
  SampleResult returned;
  const double cpu_start = thread_cpu_seconds();
  const auto start = Clock::now();
  if (config.workers > 1) {
    returned = run_workers(config, backend, iterations, index, point, state);  // opens and closes the window
  } else {
    backend.begin();
    try {
      returned = call_function(config, state);
    } catch (...) {
      backend.end();  // leave the backend's window closed before the error travels on
      throw;
    }
    backend.end();
  }
  const auto stop = Clock::now();
  const double cpu_stop = thread_cpu_seconds();

  Window w;
  w.host_s = std::chrono::duration<double>(stop - start).count();
  w.cpu_s = cpu_stop - cpu_start;
  backend.collect(SampleWindow{stop - start, iterations, index, phase}, w.measurement);
  w.state_metrics = std::move(state.metrics());
  for (MetricValue& m : returned.metrics) w.state_metrics.push_back(std::move(m));
  w.operations = returned.operations;
  w.skip_reason = state.skip_reason();
  return w;
}

std::string percent(double fraction) {
  return fmt::format("{:.2f}%", 100.0 * fraction);
}

class PointRun {
 public:
  PointRun(const Benchmark::Config& config, const AxisPoint& point, const RunOptions& options)
      : config_(config), point_(point), options_(options), rule_(options.stopping.value_or(config.stopping)) {
    r_.family = config.name;
    r_.name = config.name + point.name_suffix();
    r_.point = point;
    r_.domain = config.domain;
    r_.timing = config.timing;
    r_.time_unit = config.time_unit;
    r_.criteria = rule_.criteria();
  }

  RunResult run() {
    try {
      set_up();
      if (!r_.error) measure();
    } catch (const std::exception& e) {
      r_.error = std::string("the benchmark threw: ") + e.what();
    }
    finish();
    return std::move(r_);
  }

 private:
  double wall() const { return std::chrono::duration<double>(Clock::now() - started_).count(); }

  void set_up() {
    try {
      backend_ = config_.backend ? config_.backend() : std::make_unique<LinuxPerfBackend>();
      if (!backend_) throw std::runtime_error("the backend factory returned nothing");
    } catch (const std::exception& e) {
      r_.error = std::string("could not set up the measurement backend: ") + e.what();
      return;
    }
    r_.backend = backend_->label();
    r_.host_policy = host_diagnostics_policy(config_.domain, backend_->emits_cpu_diagnostics());
    if (config_.workers > 1) {
      // The sharp edge of a one-stream device timer (docs/harness-sharp-edges.md#one-stream-event-timers):
      // refused unless the benchmark says it joins its workers' streams; a gap in the backend's own
      // metrics only is said once.
      const std::string gap = backend_->concurrent_gap();
      if (!gap.empty() && backend_->concurrent_gap_in_duration() && !config_.worker_streams_joined) {
        r_.error = fmt::format(
            "{} concurrent workers on backend {}: {}; join each worker's stream to the timed one and declare "
            "it "
            "with workers({}, true), or time the workers with a backend that covers them",
            config_.workers, r_.backend, gap, config_.workers);
        return;
      }
      if (!gap.empty())
        note(DiagnosticKind::measurement, fmt::format("{} concurrent workers: {}", config_.workers, gap));
    }
    try {
      set_up_flusher_and_clock();
    } catch (const std::exception& e) {
      r_.error = std::string("could not set up the cache flusher or clock monitor: ") + e.what();
      return;
    }
    // The per-point throughput functions read axes; a wrong name throws to run(), which reports it.
    bytes_ = config_.bytes_per_iteration ? config_.bytes_per_iteration(point_) : 0.0;
    flops_ = config_.flops_per_iteration ? config_.flops_per_iteration(point_) : 0.0;
  }

  void set_up_flusher_and_clock() {
    if (config_.timing == TimingMode::cold) {
      flusher_ = config_.flusher ? config_.flusher() : std::make_unique<HostCacheFlusher>();
      r_.cache_flush = flusher_->describe();
      if (!config_.flusher && config_.domain != MeasurementDomain::cpu) {
        note(DiagnosticKind::measurement,
             "cold mode without a device cache flusher: only the host's caches are flushed between samples; "
             "give "
             "the benchmark a GPU flusher (cuda_l2_flusher)");
      }
    }
    if (config_.clock_monitor) {
      clock_ = config_.clock_monitor();
      if (clock_) reference_mhz_ = clock_->reference_sm_clock_mhz();
      if (clock_ && !reference_mhz_) {
        note(DiagnosticKind::throttle, "clock monitor (" + clock_->describe() +
                                           "): reference clock unknown, throttle detection is off");
      }
    }
  }

  Window window(std::uint64_t iterations, std::size_t index, SamplePhase phase) {
    if (flusher_) flusher_->flush();  // outside the measured window
    return run_window(config_, *backend_, iterations, index, phase, point_);
  }

  // Counts a failed window; true when the failures look permanent.
  bool failed(const Window& w) {
    ++r_.failed_samples;
    ++consecutive_failures_;
    if (failure_messages_.size() < 3 && std::find(failure_messages_.begin(), failure_messages_.end(),
                                                  *w.measurement.failure) == failure_messages_.end()) {
      failure_messages_.push_back(*w.measurement.failure);
    }
    for (const MetricValue& m : w.measurement.metrics) timed_.add(m);
    return consecutive_failures_ >= options_.max_consecutive_failures;
  }

  void measure() {
    Window w = window(1, 0, SamplePhase::warmup);
    ++r_.warmup_samples;
    if (w.skip_reason) return skip(*w.skip_reason);

    std::uint64_t iterations = 1;
    if (config_.timing == TimingMode::batch && !calibrate(iterations)) return;
    r_.iterations_per_sample = iterations;

    for (std::size_t index = 0;; ++index) {
      w = window(iterations, index, SamplePhase::timed);
      if (w.skip_reason) return skip(*w.skip_reason);
      // NaN when there is no monitor or it could not read the clock now.
      const double clock = clock_ ? clock_->sm_clock_mhz().value_or(Summary::kNaN) : Summary::kNaN;
      std::optional<StopReason> reason;
      if (w.measurement.failure) {
        reason = failed(w) ? std::optional(StopReason::failed) : rule_.check_timeout(wall());
      } else if (!std::isnan(clock) && reference_mhz_ &&
                 is_throttled(clock, *reference_mhz_, config_.throttle)) {
        consecutive_failures_ = 0;
        ++r_.throttled_samples;
        lowest_throttled_mhz_ = std::min(lowest_throttled_mhz_, clock);
        std::this_thread::sleep_for(config_.throttle.recovery_delay);
        reason = rule_.check_timeout(wall());
      } else {
        consecutive_failures_ = 0;
        reason = keep(w, iterations, clock);
      }
      if (reason) return stop(*reason);
    }
  }

  // Grows the iteration count from 1 until one sample lasts batch_sample_time. The warm-up is not
  // used: it may include one-off costs (allocation, first-touch page faults, module loading). A
  // sample that reaches the target is taken again and the shorter one counts, so one preempted
  // sample cannot end calibration early. False when the point stopped (skipped, or failing).
  bool calibrate(std::uint64_t& iterations) {
    const double target = config_.batch_sample_time.count();
    std::size_t index = 0;
    double last = -1;  // nothing measured yet at `iterations`
    while (last < target && iterations < kMaxBatchIterations && !rule_.check_timeout(wall())) {
      if (last >= 0) {
        const double growth = last > 0 ? std::clamp(std::ceil(target / last), 2.0, 10.0) : 10.0;
        iterations = std::min(kMaxBatchIterations,
                              static_cast<std::uint64_t>(static_cast<double>(iterations) * growth));
      }
      const Calibration first = calibration_sample(iterations, index++);
      if (first.stopped) return false;
      last = first.seconds;
      if (last >= target) {
        const Calibration again = calibration_sample(iterations, index++);
        if (again.stopped) return false;
        last = std::min(last, again.seconds);
      }
    }
    return true;
  }

  struct Calibration {
    double seconds = 0;  // 0 when the sample failed
    bool stopped = false;
  };
  Calibration calibration_sample(std::uint64_t iterations, std::size_t index) {
    const Window w = window(iterations, index, SamplePhase::calibration);
    if (w.skip_reason) {
      skip(*w.skip_reason);
      return {0, true};
    }
    if (w.measurement.failure) {
      if (!failed(w)) return {0, false};
      stop(StopReason::failed);
      return {0, true};
    }
    consecutive_failures_ = 0;
    return {w.duration_s(), false};
  }

  std::optional<StopReason> keep(Window& w, std::uint64_t iterations, double clock_mhz) {
    const double duration = w.duration_s();
    // A sampled benchmark's own operation count divides the sample (docs/harness.md#per-sample-results).
    const double n = static_cast<double>(w.operations > 0 ? w.operations : iterations);
    r_.sample_seconds.push_back(duration / n);
    r_.sample_cpu_seconds.push_back(w.cpu_s / n);

    std::vector<MetricValue> metrics = std::move(w.state_metrics);
    for (MetricValue& m : w.measurement.metrics) metrics.push_back(std::move(m));
    if (bytes_ > 0) {
      metrics.push_back(MetricValue::bandwidth_gib_s("bandwidth", bytes_ * n, duration)
                            .with_section("throughput")
                            .with_display_name("bandwidth"));
    }
    if (flops_ > 0) {
      metrics.push_back(MetricValue::throughput_tflops("tflops", flops_ * n, duration)
                            .with_section("throughput")
                            .with_display_name("TFLOP/s"));
    }
    if (!std::isnan(clock_mhz)) {
      metrics.push_back(
          MetricValue::integer("sm_clock_mhz", std::llround(clock_mhz), "MHz").with_section("clocks"));
    }
    for (const MetricValue& m : metrics) timed_.add(m);
    r_.sample_metrics.push_back(std::move(metrics));
    return rule_.add_sample(duration, wall());
  }

  void run_diagnostic_pass() {
    for (std::size_t rep = 0; rep < config_.diagnostic_samples; ++rep) {
      State state(r_.iterations_per_sample, rep, point_, true);
      try {
        DiagnosticResult result = config_.diagnostic_pass(state);
        ++r_.diagnostic_pass_runs;
        for (MetricValue& m : state.metrics()) result.metrics.push_back(std::move(m));
        for (MetricValue& m : result.metrics) {
          if (m.section.empty()) m.section = result.section;
          diagnostic_.add(m, MetricOrigin::diagnostic_pass);
        }
      } catch (const DiagnosticError& e) {
        for (const MetricValue& m : e.metrics()) diagnostic_.add(m, MetricOrigin::diagnostic_pass);
        note(DiagnosticKind::replay, std::string("diagnostic pass failed: ") + e.what());
        return;  // a permission or set-up failure would only repeat
      } catch (const std::exception& e) {
        diagnostic_.add(MetricValue::integer("diagnostic_pass_failed", 1, "count").with_section("diagnostic"),
                        MetricOrigin::diagnostic_pass);
        note(DiagnosticKind::replay, std::string("diagnostic pass failed: ") + e.what());
        return;
      }
    }
  }

  void skip(const std::string& reason) {
    r_.skip_reason = reason;
    r_.stop_reason = StopReason::skipped;
  }
  void stop(StopReason reason) { r_.stop_reason = reason; }
  void note(DiagnosticKind kind, std::string message) {
    r_.diagnostics.push_back({kind, std::move(message)});
  }

  void finish() {
    if (!r_.error && !r_.skip_reason && config_.diagnostic_pass && !r_.sample_seconds.empty()) {
      run_diagnostic_pass();
    }
    r_.time = summarize(r_.sample_seconds);
    r_.cpu_time = summarize(r_.sample_cpu_seconds);
    r_.metrics = timed_.summaries();
    for (MetricSummary& m : diagnostic_.summaries()) r_.metrics.push_back(std::move(m));
    r_.outlier_samples = count_outliers(r_.sample_seconds);
    r_.wall_seconds = wall();

    std::vector<Diagnostic> findings;
    if (backend_) findings = backend_->diagnostics();
    if (r_.failed_samples > 0) {
      std::string messages;
      for (const std::string& m : failure_messages_) messages += (messages.empty() ? "" : "; ") + m;
      findings.push_back(
          {DiagnosticKind::measurement,
           fmt::format("{} sample(s) failed and were left out: {}", r_.failed_samples, messages)});
    }
    if (r_.throttled_samples > 0) {
      findings.push_back(
          {DiagnosticKind::throttle,
           fmt::format("{} sample(s) dropped: SM clock below {:.0f}% of {:.0f} MHz (lowest {:.0f} MHz)",
                       r_.throttled_samples, 100.0 * config_.throttle.threshold, *reference_mhz_,
                       lowest_throttled_mhz_)});
    }
    const double noise = r_.time.relative_noise();
    if ((r_.stop_reason == StopReason::timeout || r_.stop_reason == StopReason::max_samples) &&
        !(noise <= r_.criteria.max_noise)) {
      findings.push_back(
          {DiagnosticKind::stability,
           fmt::format("noise {} did not reach the {} target before the {} ({} samples, {:.3g} s "
                       "measured)",
                       std::isnan(noise) ? "unknown" : percent(noise), percent(r_.criteria.max_noise),
                       r_.stop_reason == StopReason::timeout ? "timeout" : "sample limit", r_.time.count,
                       rule_.accumulated_seconds())});
    }
    if (r_.time.count > 0 && static_cast<double>(r_.outlier_samples) >
                                 kOutlierFractionWorthNaming * static_cast<double>(r_.time.count)) {
      findings.push_back({DiagnosticKind::stability,
                          fmt::format("{} of {} samples are outliers (beyond 1.5 IQR of the quartiles)",
                                      r_.outlier_samples, r_.time.count)});
    }
    for (Diagnostic& d : host_pmu_diagnostics(r_.metrics)) findings.push_back(std::move(d));
    for (Diagnostic& d : findings) r_.diagnostics.push_back(std::move(d));

    if (!r_.error && !r_.skip_reason && r_.time.count == 0) {
      r_.error = failure_messages_.empty() ? "no sample was kept"
                                           : "no sample could be measured: " + failure_messages_.front();
    }
  }

  const Benchmark::Config& config_;
  const AxisPoint& point_;
  const RunOptions& options_;
  StoppingRule rule_;
  RunResult r_;
  Clock::time_point started_ = Clock::now();

  std::unique_ptr<MeasurementBackend> backend_;
  std::unique_ptr<CacheFlusher> flusher_;
  std::unique_ptr<ClockMonitor> clock_;
  std::optional<double> reference_mhz_;
  double bytes_ = 0;
  double flops_ = 0;

  MetricAggregator timed_;
  MetricAggregator diagnostic_;
  std::size_t consecutive_failures_ = 0;
  std::vector<std::string> failure_messages_;
  double lowest_throttled_mhz_ = INFINITY;
};

}  // namespace

RunResult run_point(const Benchmark& benchmark, const AxisPoint& point, const RunOptions& options) {
  return PointRun(benchmark.config(), point, options).run();
}

std::vector<RunResult> run_benchmarks(const std::vector<Benchmark>& benchmarks, Printer& printer,
                                      const RunOptions& options) {
  printer.begin(RunContext::of_this_process(options.executable));
  std::vector<RunResult> results;
  std::size_t family_index = 0;
  for (const Benchmark& benchmark : benchmarks) {
    std::size_t instance_index = 0;
    for (const AxisPoint& point : cartesian_product(benchmark.config().axes)) {
      if (options.filter &&
          !std::regex_search(benchmark.config().name + point.name_suffix(), *options.filter))
        continue;
      RunResult result = run_point(benchmark, point, options);
      result.family_index = family_index;
      result.instance_index = instance_index++;
      printer.report(result);
      results.push_back(std::move(result));
    }
    if (instance_index > 0) ++family_index;
  }
  printer.end();
  return results;
}

std::vector<Diagnostic> host_pmu_diagnostics(const std::vector<MetricSummary>& metrics) {
  std::vector<Diagnostic> out;
  auto find = [&](std::string_view name) -> const Summary* {
    for (const MetricSummary& m : metrics) {
      if (m.key.section == "host_pmu" && m.key.name == name && m.stats.count > 0) return &m.stats;
    }
    return nullptr;
  };
  if (const Summary* ipc = find("ipc"); ipc && ipc->median < kLowIpc) {
    out.push_back(
        {DiagnosticKind::host_pmu,
         fmt::format("low IPC: {:.2f} instructions per cycle (median); the core mostly waits on memory or "
                     "long dependency chains",
                     ipc->median)});
  }
  if (const Summary* b = find("branch_miss_pct"); b && b->median > kHighBranchMissPct) {
    out.push_back({DiagnosticKind::host_pmu,
                   fmt::format("branch mispredictions: {:.1f}% of branches (median)", b->median)});
  }
  if (const Summary* c = find("cache_miss_pct"); c && c->median > kHighCacheMissPct) {
    out.push_back(
        {DiagnosticKind::host_pmu,
         fmt::format("cache misses: {:.1f}% of cache references go past the last-level cache (median)",
                     c->median)});
  }
  if (const Summary* s = find("context_switches"); s && s->mean >= kContextSwitchesPerSample) {
    out.push_back(
        {DiagnosticKind::host_pmu,
         fmt::format("the thread was switched out {:.1f} times per sample (mean): other work shares this CPU",
                     s->mean)});
  }
  return out;
}

std::size_t count_outliers(std::vector<double> values) {
  if (values.size() < 4) return 0;
  std::sort(values.begin(), values.end());
  const double q1 = percentile_of_sorted(values, 0.25);
  const double q3 = percentile_of_sorted(values, 0.75);
  const double fence = 1.5 * (q3 - q1);
  return static_cast<std::size_t>(std::count_if(values.begin(), values.end(),
                                                [&](double v) { return v < q1 - fence || v > q3 + fence; }));
}

}  // namespace diescope::harness
