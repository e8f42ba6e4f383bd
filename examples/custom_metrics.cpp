// Per-sample results you can copy (docs/harness.md#per-sample-results): the benchmark function returns
// a SampleResult, the operations it did plus named metrics, and the runner aggregates every metric
// by section, name and unit into the custom metrics table. Three formats: a duration (duration_ms),
// a rate (throughput_tflops) and an integer (integer: an algorithm id, printed without decimals).
//
// The work is a small single-precision matrix product on the host, in two loop orders; each sample
// times itself with the steady clock, reports its own GFLOP-scale rate, and names the order it used.
// A third benchmark runs the i-k-j order on 4 concurrent workers (docs/harness.md#concurrent-workers):
// one window covers all four, and their operations add up.
//
//   ./custom_metrics
//   ./custom_metrics --json metrics.json
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "diescope/harness/main.hpp"

using namespace diescope::harness;

namespace {

constexpr int kN = 128;

struct Matrices {
  std::vector<float> a = std::vector<float>(kN * kN, 1.0f), b = std::vector<float>(kN * kN, 0.5f),
                     c = std::vector<float>(kN * kN, 0.0f);
};

// order 0: i-j-k (strided reads of b); order 1: i-k-j (unit-stride rows of b and c).
void multiply(Matrices& m, int order) {
  float* __restrict c = m.c.data();
  const float* __restrict a = m.a.data();
  const float* __restrict b = m.b.data();
  if (order == 0) {
    for (int i = 0; i < kN; ++i)
      for (int j = 0; j < kN; ++j) {
        float s = 0;
        for (int k = 0; k < kN; ++k) s += a[i * kN + k] * b[k * kN + j];
        c[i * kN + j] = s;
      }
  } else {
    for (int i = 0; i < kN; ++i)
      for (int k = 0; k < kN; ++k) {
        const float x = a[i * kN + k];
        for (int j = 0; j < kN; ++j) c[i * kN + j] += x * b[k * kN + j];
      }
  }
  asm volatile("" : : "r"(c) : "memory");
}

Benchmark product(const char* name, int order, std::size_t workers) {
  // One set of matrices per worker, made before any window opens.
  auto per_worker = std::make_shared<std::vector<Matrices>>(workers);
  Benchmark b = Benchmark::sampled(name, [per_worker, order](State& state) {
    Matrices& m = (*per_worker)[state.worker()];
    const auto start = std::chrono::steady_clock::now();
    for (std::uint64_t i = 0; i < state.iterations(); ++i) multiply(m, order);
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    const double flops = 2.0 * kN * kN * kN * static_cast<double>(state.iterations());
    return SampleResult::of_operations(state.iterations())
        .push_metric(
            MetricValue::duration_ms("own_time_ms", took).with_section("bench").with_display_name("own time"))
        .push_metric(MetricValue::throughput_tflops("own_tflops", flops, took.count())
                         .with_section("bench")
                         .with_display_name("own TFLOP/s"))
        .push_metric(MetricValue::integer("loop_order", order, "id").with_section("bench"));
  });
  b.flops_per_iteration(2.0 * kN * kN * kN).time_unit(TimeUnit::microsecond);
  if (workers > 1) b.workers(workers).backend([] { return std::make_unique<WallClockBackend>(); });
  return b;
}

}  // namespace

int main(int argc, char** argv) {
  return bench_main(
      argc, argv, {product("matmul_ijk", 0, 1), product("matmul_ikj", 1, 1), product("matmul_ikj_x4", 1, 4)});
}
