// The runner with the simulated GPU backend: every number below follows from the scripted device
// times, so each expectation is computed by hand.
#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <thread>

#include "diescope/harness/group.hpp"
#include "diescope/harness/printer.hpp"
#include "diescope/harness/runner.hpp"
#include "helpers.hpp"

namespace diescope::harness {
namespace {

using testing::CountingFlusher;
using testing::device_times;

Benchmark cold_gpu(std::string name, std::vector<double> seconds, std::shared_ptr<int> flushes,
                   std::size_t samples) {
  Benchmark b(std::move(name), [](State&) {});
  b.domain(MeasurementDomain::gpu)
      .timing(TimingMode::cold)
      .cache_flusher([flushes] { return std::make_unique<CountingFlusher>(flushes); })
      .backend([seconds] { return std::make_unique<SimulatedGpuBackend>(device_times(seconds)); })
      .stopping(
          {.min_samples = 1, .min_time_s = 0, .max_noise = 0.0, .timeout_s = 100, .max_samples = samples});
  return b;
}

TEST(SimulatedGpuBackend, DeviceTimeIsTheDurationAndOverheadIsTheRest) {
  SimulatedGpuBackend backend([](const SampleWindow&) { return 0.002; });
  SampleMeasurement m;
  backend.begin();
  backend.end();
  backend.collect(SampleWindow{std::chrono::milliseconds(5), 1, 0, SamplePhase::timed}, m);
  ASSERT_TRUE(m.duration_s);
  EXPECT_DOUBLE_EQ(*m.duration_s, 0.002);
  ASSERT_EQ(m.metrics.size(), 2u);
  EXPECT_EQ(m.metrics[0].name, "cuda_event_ms");
  EXPECT_DOUBLE_EQ(m.metrics[0].value, 2.0);
  EXPECT_EQ(m.metrics[1].name, "host_overhead_ms");
  EXPECT_NEAR(m.metrics[1].value, 3.0, 1e-12);  // 5 ms on the host - 2 ms on the device

  SampleMeasurement faster_host;  // host time below device time (clock skew): overhead 0, not negative
  backend.collect(SampleWindow{std::chrono::milliseconds(1), 1, 1, SamplePhase::timed}, faster_host);
  EXPECT_DOUBLE_EQ(faster_host.metrics[1].value, 0.0);
  EXPECT_FALSE(backend.emits_cpu_diagnostics());
}

TEST(Runner, ColdSamplesUseDeviceTimeAndFlushBeforeEach) {
  auto flushes = std::make_shared<int>(0);
  const RunResult r =
      run_point(cold_gpu("copy", {0.001, 0.002, 0.003, 0.004, 0.010}, flushes, 5), AxisPoint{});
  ASSERT_TRUE(r.ok()) << r.error.value_or("");
  EXPECT_EQ(r.backend, "simulated-gpu");
  EXPECT_EQ(r.iterations_per_sample, 1u);
  EXPECT_EQ(r.time.count, 5u);
  EXPECT_DOUBLE_EQ(r.time.mean, 0.004);  // 0.020 / 5
  EXPECT_DOUBLE_EQ(r.time.median, 0.003);
  EXPECT_DOUBLE_EQ(r.time.p95, 0.0088);  // rank 3.8: 0.004 + 0.8 * (0.010 - 0.004)
  EXPECT_DOUBLE_EQ(r.time.min, 0.001);
  EXPECT_DOUBLE_EQ(r.time.max, 0.010);
  EXPECT_EQ(r.stop_reason, StopReason::max_samples);
  EXPECT_EQ(*flushes, 6);  // the warm-up and the five timed samples
  const MetricSummary* device = r.find_metric("backend", "cuda_event_ms");
  ASSERT_TRUE(device);
  EXPECT_EQ(device->stats.count, 5u);
  EXPECT_DOUBLE_EQ(device->stats.mean, 4.0);  // ms
  EXPECT_EQ(r.host_policy, HostDiagnostics::suppress);
}

TEST(Runner, BatchCalibrationGrowsIterationsUntilTheTarget) {
  // Device time is iterations x 2^-20 s; target 2^-10 s (1024 units). From 1 iteration:
  //   1 -> growth ceil(1024/1) clamped to 10 -> 10 -> ceil(102.4) -> 10 -> 100 -> ceil(10.24) = 11,
  //   clamped to 10 -> 1000 -> ceil(1.024) = 2 -> 2000 (>= 1024: taken again, same time: calibrated).
  const double unit = 1.0 / 1048576.0;
  Benchmark b("batch", [](State&) {});
  b.domain(MeasurementDomain::gpu)
      .batch_sample_time(std::chrono::duration<double>(1024 * unit))
      .backend([unit] {
        return std::make_unique<SimulatedGpuBackend>(
            [unit](const SampleWindow& w) { return static_cast<double>(w.iterations) * unit; });
      })
      .stopping({.min_samples = 3, .min_time_s = 0, .max_noise = 0.01, .timeout_s = 100});
  const RunResult r = run_point(b, AxisPoint{});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.iterations_per_sample, 2000u);
  EXPECT_DOUBLE_EQ(r.time.mean, unit);  // per iteration
  EXPECT_EQ(r.time.count, 3u);          // equal samples: noise 0 converges at min_samples
  EXPECT_EQ(r.stop_reason, StopReason::converged);
}

TEST(Runner, ThroughputMetricsComeFromTheSampleDuration) {
  auto flushes = std::make_shared<int>(0);
  Benchmark b = cold_gpu("gemm", {0.5, 0.5}, flushes, 2);
  b.bytes_per_iteration(2.0 * (1 << 30)).flops_per_iteration(3e12);
  const RunResult r = run_point(b, AxisPoint{});
  const MetricSummary* bw = r.find_metric("throughput", "bandwidth");
  const MetricSummary* tf = r.find_metric("throughput", "tflops");
  ASSERT_TRUE(bw && tf);
  EXPECT_DOUBLE_EQ(bw->stats.mean, 4.0);  // 2 GiB in 0.5 s of device time
  EXPECT_DOUBLE_EQ(tf->stats.mean, 6.0);  // 3e12 FLOP in 0.5 s
}

TEST(Runner, ADeviceErrorBecomesAMetricAndALeftOutSample) {
  auto flushes = std::make_shared<int>(0);
  Benchmark b("faulty", [](State&) {});
  b.domain(MeasurementDomain::gpu)
      .timing(TimingMode::cold)
      .cache_flusher([flushes] { return std::make_unique<CountingFlusher>(flushes); })
      .backend([] {
        auto backend = std::make_unique<SimulatedGpuBackend>(device_times({0.001, 0.002, 0.003, 0.004}));
        backend->fail_timed_sample(1, 700);
        return backend;
      })
      .stopping({.min_samples = 1, .min_time_s = 0, .max_noise = 0.0, .timeout_s = 100, .max_samples = 3});
  const RunResult r = run_point(b, AxisPoint{});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.failed_samples, 1u);
  EXPECT_EQ(r.time.count, 3u);               // samples 0, 2 and 3 kept
  EXPECT_DOUBLE_EQ(r.time.mean, 0.008 / 3);  // (0.001 + 0.003 + 0.004) / 3
  const MetricSummary* code = r.find_metric("backend", "cuda_error_code");
  ASSERT_TRUE(code);
  EXPECT_EQ(code->format, MetricFormat::integer);
  EXPECT_EQ(code->stats.count, 1u);
  EXPECT_DOUBLE_EQ(code->stats.max, 700.0);
  bool named = false;
  for (const std::string& line : r.visible_diagnostics()) named |= line.find("700") != std::string::npos;
  EXPECT_TRUE(named);
}

TEST(Runner, AStickyDeviceErrorStopsThePointWithoutACrash) {
  Benchmark b("broken", [](State&) {});
  b.domain(MeasurementDomain::gpu).backend([] {
    auto backend = std::make_unique<SimulatedGpuBackend>([](const SampleWindow&) { return 0.001; });
    backend->fail_always(999);
    return backend;
  });
  const RunResult r = run_point(b, AxisPoint{});
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.stop_reason, StopReason::failed);
  EXPECT_EQ(r.failed_samples, 3u);  // three in a row, then it stops (calibration windows count)
  ASSERT_TRUE(r.error);
  EXPECT_NE(r.error->find("999"), std::string::npos);
}

TEST(Runner, ThrottledSamplesAreDroppedAndClocksRecorded) {
  // Reference 1980 MHz, threshold 75 % -> 1485 MHz. Clocks per timed sample: 1980, 1000, 1980, 1980.
  auto flushes = std::make_shared<int>(0);
  Benchmark b = cold_gpu("throttle", {0.001, 0.002, 0.003, 0.004}, flushes, 3);
  b.clock_monitor(
      [] {
        return std::make_unique<testing::ScriptedClock>(std::vector<double>{1980, 1000, 1980, 1980}, 1980.0);
      },
      ThrottlePolicy{0.75, std::chrono::seconds(0)});
  const RunResult r = run_point(b, AxisPoint{});
  EXPECT_EQ(r.throttled_samples, 1u);
  EXPECT_EQ(r.time.count, 3u);
  EXPECT_DOUBLE_EQ(r.time.mean, 0.008 / 3);  // sample 1 (0.002 s) dropped
  const MetricSummary* clock = r.find_metric("clocks", "sm_clock_mhz");
  ASSERT_TRUE(clock);
  EXPECT_EQ(clock->stats.count, 3u);
  EXPECT_DOUBLE_EQ(clock->stats.mean, 1980.0);
  bool named = false;
  for (const std::string& line : r.visible_diagnostics()) {
    named |= line.find("1 sample(s) dropped") != std::string::npos &&
             line.find("lowest 1000 MHz") != std::string::npos;
  }
  EXPECT_TRUE(named);
}

TEST(Runner, UnknownReferenceClockTurnsThrottleDetectionOff) {
  auto flushes = std::make_shared<int>(0);
  Benchmark b = cold_gpu("noref", {0.001, 0.002}, flushes, 2);
  b.clock_monitor(
      [] { return std::make_unique<testing::ScriptedClock>(std::vector<double>{500}, std::nullopt); });
  const RunResult r = run_point(b, AxisPoint{});
  EXPECT_EQ(r.throttled_samples, 0u);
  EXPECT_EQ(r.time.count, 2u);
  bool named = false;
  for (const std::string& line : r.visible_diagnostics())
    named |= line.find("throttle detection is off") != std::string::npos;
  EXPECT_TRUE(named);
}

TEST(Runner, DiagnosticPassNeverEntersTiming) {
  auto flushes = std::make_shared<int>(0);
  const std::vector<double> times = {0.001, 0.002, 0.003, 0.004};
  const RunResult plain = run_point(cold_gpu("k", times, flushes, 4), AxisPoint{});

  auto seen_iterations = std::make_shared<std::vector<std::uint64_t>>();
  Benchmark with_pass = cold_gpu("k", times, flushes, 4);
  with_pass.diagnostic_pass(
      [seen_iterations](State& state) {
        seen_iterations->push_back(state.iterations());
        EXPECT_TRUE(state.in_diagnostic_pass());
        DiagnosticResult result("profiler");
        result.push_metric(MetricValue("kernel_launches", 42, "count"));
        result.push_metric(MetricValue("own_section", 1, "x").with_section("mine"));
        return result;
      },
      3);
  const RunResult r = run_point(with_pass, AxisPoint{});

  EXPECT_EQ(r.diagnostic_pass_runs, 3u);
  EXPECT_EQ(*seen_iterations, (std::vector<std::uint64_t>{1, 1, 1}));  // the calibrated count (cold: 1)
  EXPECT_EQ(r.sample_seconds, plain.sample_seconds);
  EXPECT_DOUBLE_EQ(r.time.mean, plain.time.mean);
  EXPECT_DOUBLE_EQ(r.time.stddev, plain.time.stddev);
  const MetricSummary* launches = r.find_metric("profiler", "kernel_launches");  // section inherited
  ASSERT_TRUE(launches);
  EXPECT_EQ(launches->origin, MetricOrigin::diagnostic_pass);
  EXPECT_EQ(launches->stats.count, 3u);
  EXPECT_TRUE(r.find_metric("mine", "own_section"));  // an explicit section is kept
}

TEST(Runner, AFailingDiagnosticPassIsADiagnosticNotAFailedRun) {
  auto flushes = std::make_shared<int>(0);
  Benchmark b = cold_gpu("k", {0.001, 0.002}, flushes, 2);
  auto calls = std::make_shared<int>(0);
  b.diagnostic_pass(
      [calls](State&) -> DiagnosticResult {
        ++*calls;
        throw CounterError(CounterErrorKind::permission, "restricted to admin users", 35);
      },
      3);
  const RunResult r = run_point(b, AxisPoint{});
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.time.count, 2u);
  EXPECT_EQ(*calls, 1);  // a permission failure is not repeated
  const MetricSummary* kind = r.find_metric("gpu_counters", "gpu_counter_error");
  const MetricSummary* code = r.find_metric("gpu_counters", "gpu_counter_error_code");
  ASSERT_TRUE(kind && code);
  EXPECT_DOUBLE_EQ(kind->stats.mean, 2.0);  // CounterErrorKind::permission
  EXPECT_DOUBLE_EQ(code->stats.mean, 35.0);
  bool named = false;
  for (const std::string& line : r.visible_diagnostics())
    named |= line.find("restricted to admin users") != std::string::npos;
  EXPECT_TRUE(named);

  Benchmark generic = cold_gpu("g", {0.001, 0.002}, flushes, 2);
  generic.diagnostic_pass([](State&) -> DiagnosticResult { throw std::runtime_error("profiler busy"); });
  const RunResult g = run_point(generic, AxisPoint{});
  const MetricSummary* failed = g.find_metric("diagnostic", "diagnostic_pass_failed");
  ASSERT_TRUE(failed);
  EXPECT_DOUBLE_EQ(failed->stats.mean, 1.0);
}

TEST(Runner, SkipThrowAndBrokenBackendAreReportedNotThrown) {
  Benchmark skipping("skip", [](State& s) { s.skip("needs 80 GB"); });
  skipping.backend([] { return std::make_unique<WallClockBackend>(); });
  const RunResult s = run_point(skipping, AxisPoint{});
  EXPECT_EQ(s.stop_reason, StopReason::skipped);
  EXPECT_EQ(s.skip_reason, "needs 80 GB");

  Benchmark throwing("throw", [](State&) { throw std::runtime_error("out of memory"); });
  throwing.backend([] { return std::make_unique<WallClockBackend>(); });
  const RunResult t = run_point(throwing, AxisPoint{});
  ASSERT_TRUE(t.error);
  EXPECT_NE(t.error->find("out of memory"), std::string::npos);

  Benchmark no_flusher("noflusher", [](State&) {});
  no_flusher.timing(TimingMode::cold)
      .backend([] { return std::make_unique<WallClockBackend>(); })
      .cache_flusher([]() -> std::unique_ptr<CacheFlusher> { throw std::runtime_error("no L2 to flush"); });
  const RunResult f = run_point(no_flusher, AxisPoint{});
  ASSERT_TRUE(f.error);
  EXPECT_NE(f.error->find("cache flusher"), std::string::npos);
  EXPECT_NE(f.error->find("no L2 to flush"), std::string::npos);

  Benchmark no_backend("nobackend", [](State&) {});
  no_backend.backend([]() -> std::unique_ptr<MeasurementBackend> { throw std::runtime_error("no device"); });
  const RunResult n = run_point(no_backend, AxisPoint{});
  ASSERT_TRUE(n.error);
  EXPECT_NE(n.error->find("no device"), std::string::npos);
}

TEST(Runner, StateMetricsJoinBackendMetrics) {
  Benchmark b("custom", [](State& s) { s.push_metric(MetricValue::integer("algo", 7, "id")); });
  b.timing(TimingMode::cold)
      .domain(MeasurementDomain::gpu)
      .cache_flusher([] { return std::make_unique<CountingFlusher>(std::make_shared<int>(0)); })
      .backend([] {
        return std::make_unique<SimulatedGpuBackend>(device_times({0.001, 0.001}));
      })
      .stopping({.min_samples = 2, .min_time_s = 0, .max_noise = 0.5, .timeout_s = 100});
  const RunResult r = run_point(b, AxisPoint{});
  ASSERT_EQ(r.time.count, 2u);
  const MetricSummary* algo = r.find_metric("", "algo");
  ASSERT_TRUE(algo);
  EXPECT_EQ(algo->stats.count, 2u);  // warm-up metrics are not kept
  ASSERT_EQ(r.sample_metrics.size(), 2u);
  EXPECT_EQ(r.sample_metrics[0].front().name, "algo");
}

// A sampled benchmark returns its operations and metrics (docs/harness.md#per-sample-results). Each
// cold sample takes 4 ms of device time and says it did 8 operations: 0.5 ms per operation, and
// with 1e6 bytes per operation 8e6 B / 0.004 s = 2e9 B/s = 1.86265 GiB/s. Its metric joins the table.
TEST(Runner, ASampledBenchmarksOperationsDivideItsTimeAndItsMetricsAreAggregated) {
  Benchmark b = Benchmark::sampled("sampled", [](State&) {
    return SampleResult::of_operations(8).push_metric(
        MetricValue::integer("algo", 3, "id").with_section("bench"));
  });
  b.timing(TimingMode::cold)
      .domain(MeasurementDomain::gpu)
      .bytes_per_iteration(1e6)
      .cache_flusher([] { return std::make_unique<CountingFlusher>(std::make_shared<int>(0)); })
      .backend([] {
        return std::make_unique<SimulatedGpuBackend>(device_times({0.004, 0.004, 0.004}));
      })
      .stopping({.min_samples = 2, .min_time_s = 0, .max_noise = 0.5, .timeout_s = 100, .max_samples = 2});
  const RunResult r = run_point(b, AxisPoint{});
  ASSERT_EQ(r.time.count, 2u);
  EXPECT_NEAR(r.time.mean, 0.0005, 1e-12);
  const MetricSummary* algo = r.find_metric("bench", "algo");
  ASSERT_TRUE(algo);
  EXPECT_EQ(algo->stats.count, 2u);
  EXPECT_DOUBLE_EQ(algo->stats.mean, 3);
  const MetricSummary* bandwidth = r.find_metric("throughput", "bandwidth");
  ASSERT_TRUE(bandwidth);
  EXPECT_NEAR(bandwidth->stats.mean, 2e9 / (1024.0 * 1024.0 * 1024.0), 1e-9);
  EXPECT_NE(format_console(r).find("  custom metrics:\n"), std::string::npos);
}

// Concurrent workers (docs/harness.md#concurrent-workers): four workers each sleep 20 ms inside one
// window, so a sample lasts about 20 ms, not 80; each says it did one operation, so the time per
// operation is about 5 ms; each pushes its worker index, so every sample holds four values whose
// mean is (0 + 1 + 2 + 3) / 4 = 1.5.
TEST(Runner, ConcurrentWorkersShareOneWindow) {
  Benchmark b = Benchmark::sampled("workers", [](State& s) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return SampleResult::of_operations(1).push_metric(
        MetricValue::integer("worker", static_cast<std::int64_t>(s.worker()), "index"));
  });
  b.workers(4).backend([] { return std::make_unique<WallClockBackend>(); });
  b.timing(TimingMode::batch)
      .batch_sample_time(std::chrono::milliseconds(1))
      .stopping({.min_samples = 3, .min_time_s = 0, .max_noise = 1.0, .timeout_s = 100, .max_samples = 3});
  const RunResult r = run_point(b, AxisPoint{});
  ASSERT_FALSE(r.error) << *r.error;
  ASSERT_EQ(r.time.count, 3u);
  EXPECT_GT(r.time.mean, 0.0045);
  EXPECT_LT(r.time.mean, 0.015);  // 80 ms / 4 would be 20 ms: the workers ran at once
  const MetricSummary* worker = r.find_metric("", "worker");
  ASSERT_TRUE(worker);
  EXPECT_EQ(worker->stats.count, 12u);
  EXPECT_DOUBLE_EQ(worker->stats.mean, 1.5);
}

// The sharp edge (docs/harness-sharp-edges.md#one-stream-event-timers): a device-event backend times
// one stream, so concurrent workers are refused unless the benchmark says it joins their streams.
TEST(Runner, ConcurrentWorkersOnAOneStreamTimerMustJoinTheirStreams) {
  auto make = [](bool joined) {
    Benchmark b("gpu workers", [](State&) {});
    b.domain(MeasurementDomain::gpu)
        .workers(2, joined)
        .timing(TimingMode::batch)
        .batch_sample_time(std::chrono::microseconds(1))
        .backend(
            [] { return std::make_unique<SimulatedGpuBackend>([](const SampleWindow&) { return 0.001; }); })
        .stopping({.min_samples = 2, .min_time_s = 0, .max_noise = 1.0, .timeout_s = 100, .max_samples = 2});
    return b;
  };
  const RunResult refused = run_point(make(false), AxisPoint{});
  ASSERT_TRUE(refused.error);
  EXPECT_NE(refused.error->find("device events time one stream"), std::string::npos) << *refused.error;
  EXPECT_NE(refused.error->find("workers(2, true)"), std::string::npos) << *refused.error;
  EXPECT_EQ(refused.time.count, 0u);
  const RunResult joined = run_point(make(true), AxisPoint{});
  ASSERT_FALSE(joined.error) << *joined.error;
  EXPECT_EQ(joined.time.count, 2u);
  // The gap is still said once, beside the figures.
  bool said = false;
  for (const Diagnostic& d : joined.diagnostics) said = said || d.message.find("2 concurrent workers") == 0;
  EXPECT_TRUE(said);
}

// A group (docs/harness.md#groups): one context made once for both members, on first use, and the
// group's domain and backend (made from the context) on each. The context's device time is 3 ms, so
// both members time 3 ms per sample.
TEST(Group, MembersShareOneContextDomainAndBackend) {
  struct Device {
    double seconds = 0.003;
    int uses = 0;
  };
  auto made = std::make_shared<int>(0);
  Group<Device> g("device", [made] {
    ++*made;
    return std::make_unique<Device>();
  });
  g.add("a", [](Device& d, State&) { ++d.uses; });
  g.domain(MeasurementDomain::gpu).backend([](Device& d) {
    const double seconds = d.seconds;
    return std::make_unique<SimulatedGpuBackend>([seconds](const SampleWindow&) { return seconds; });
  });
  g.add_sampled("b", [](Device& d, State&) {
    ++d.uses;
    return SampleResult::of_operations(1);
  });
  EXPECT_FALSE(g.context_made());  // nothing made until a member runs
  std::vector<RunResult> results;
  for (Benchmark b : g.benchmarks()) {
    b.timing(TimingMode::batch)
        .batch_sample_time(std::chrono::microseconds(1))
        .stopping({.min_samples = 2, .min_time_s = 0, .max_noise = 1.0, .timeout_s = 100, .max_samples = 2});
    results.push_back(run_point(b, AxisPoint{}));
  }
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(*made, 1);
  EXPECT_EQ(results[0].name, "device/a");
  EXPECT_EQ(results[1].name, "device/b");
  for (const RunResult& r : results) {
    EXPECT_EQ(r.domain, MeasurementDomain::gpu);
    EXPECT_EQ(r.backend, "simulated-gpu");
    EXPECT_NEAR(r.time.mean, 0.003, 1e-12);
  }
  EXPECT_GT(g.context().uses, 4);  // both members ran on the one context (warm-up, calibration, samples)
}

TEST(Runner, RunBenchmarksExpandsAxesFiltersAndReportsEach) {
  struct Collect final : Printer {
    std::vector<std::string> names;
    int begun = 0, ended = 0;
    void begin(const RunContext&) override { ++begun; }
    void report(const RunResult& r) override { names.push_back(r.name); }
    void end() override { ++ended; }
  } printer;
  Benchmark b("k", [](State&) {});
  b.int_axis("n", {1, 2})
      .string_axis("mode", {"a", "b"})
      .timing(TimingMode::cold)
      .domain(MeasurementDomain::gpu)
      .cache_flusher([] { return std::make_unique<CountingFlusher>(std::make_shared<int>(0)); })
      .backend([] {
        return std::make_unique<SimulatedGpuBackend>(device_times({0.001, 0.001}));
      })
      .stopping({.min_samples = 2, .min_time_s = 0, .max_noise = 0.5, .timeout_s = 100});
  RunOptions options;
  options.filter = std::regex("mode:b");
  const auto results = run_benchmarks({b}, printer, options);
  EXPECT_EQ(printer.names, (std::vector<std::string>{"k/n:1/mode:b", "k/n:2/mode:b"}));
  EXPECT_EQ(results.size(), 2u);
  EXPECT_EQ(results[1].instance_index, 1u);
  EXPECT_EQ(printer.begun, 1);
  EXPECT_EQ(printer.ended, 1);
}

TEST(Runner, OutliersByTukeyFences) {
  // 1..8 and 100: Q1 = 3, Q3 = 7 (ranks 2 and 6 of 9 values), IQR 4, fences -3 and 13 -> one outlier.
  EXPECT_EQ(count_outliers({1, 2, 3, 4, 5, 6, 7, 8, 100}), 1u);
  EXPECT_EQ(count_outliers({1, 2, 3}), 0u);  // too few to call anything an outlier
}

}  // namespace
}  // namespace diescope::harness
