// The CUDA side where there is no GPU (the CI machine): every failure must be a diagnostic, never a
// crash; CUPTI's host API (no GPU needed) must accept the default counter set.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include "diescope/harness/cuda.hpp"
#include "diescope/harness/cupti.hpp"
#include "diescope/harness/runner.hpp"
#include "diescope/core/error.hpp"

namespace diescope::harness {
namespace {

bool gpu_present() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

TEST(CudaWithoutGpu, EventBackendReportsTheErrorAsAMetric) {
  if (gpu_present()) GTEST_SKIP() << "a GPU is present: the gpu-labelled tests cover this machine";
  Benchmark b("no_gpu", [](State&) {});
  b.domain(MeasurementDomain::gpu).backend(cuda_event_backend());
  const RunResult r = run_point(b, AxisPoint{});
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.stop_reason, StopReason::failed);
  const MetricSummary* code = r.find_metric("backend", "cuda_error_code");
  ASSERT_TRUE(code);
  EXPECT_GT(code->stats.min, 0.0);  // a real cudaError_t, e.g. cudaErrorNoDevice (100)
  ASSERT_TRUE(r.error);
  EXPECT_NE(r.error->find("cudaError"), std::string::npos) << *r.error;  // named, not just numbered
}

TEST(CudaWithoutGpu, FlusherAndCollectorThrowTypedErrors) {
  if (gpu_present()) GTEST_SKIP() << "a GPU is present: the gpu-labelled tests cover this machine";
  EXPECT_THROW(CudaL2Flusher{}, core::DeviceError);
  try {
    CuptiRangeCollector collector;
    FAIL() << "a collector without a GPU";
  } catch (const CounterError& e) {
    EXPECT_EQ(e.kind(), CounterErrorKind::setup);
    EXPECT_NE(e.vendor_code(), 0);
  }
}

TEST(CudaWithoutGpu, ClockMonitorTurnsThrottleDetectionOffAndSaysWhy) {
  if (gpu_present()) GTEST_SKIP() << "a GPU is present: the gpu-labelled tests cover this machine";
  const auto monitor = gpu_clock_monitor()();
  EXPECT_FALSE(monitor->reference_sm_clock_mhz());
  EXPECT_FALSE(monitor->sm_clock_mhz());
  EXPECT_FALSE(monitor->describe().empty());
}

TEST(CuptiHost, DefaultCountersAreValidOnHopperAndCountPasses) {
  // CUPTI's host API needs no GPU. The five default metrics must exist on GH100 (H100, H200);
  // each needs its own passes, so the set needs at least one.
  const std::size_t passes = counter_pass_count("GH100", default_gpu_counters());
  EXPECT_GE(passes, 1u);
  // One cheap counter alone needs exactly one pass.
  EXPECT_EQ(
      counter_pass_count("GH100", {{"dram__throughput.avg.pct_of_peak_sustained_elapsed", "dram", "", "%"}}),
      1u);
  std::printf("GH100: the default counter set needs %zu replay passes\n", passes);
  for (const CounterMetric& m : default_gpu_counters()) {
    std::printf("GH100: %s alone needs %zu\n", m.profiler_name.c_str(), counter_pass_count("GH100", {m}));
  }
}

TEST(CuptiHost, AnUnknownMetricIsAMetricError) {
  try {
    counter_pass_count("GH100", {{"sm__no_such_counter.sum", "x", "", ""}});
    FAIL() << "an unknown metric was accepted";
  } catch (const CounterError& e) {
    EXPECT_EQ(e.kind(), CounterErrorKind::metric);
    const auto metrics = e.metrics();
    ASSERT_FALSE(metrics.empty());
    EXPECT_EQ(metrics[0].name, "gpu_counter_error");
    EXPECT_DOUBLE_EQ(metrics[0].value, 3.0);  // CounterErrorKind::metric
  }
}

}  // namespace
}  // namespace diescope::harness
