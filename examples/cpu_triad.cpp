// A CPU benchmark you can copy: STREAM's triad (a = b + s * c) on host memory.
//
//   triad       batch timing: back-to-back iterations with warm caches, for three array sizes
//   triad_cold  cold timing: the host's last-level cache is flushed before every sample
//
// Both report bandwidth (from bytes_per_iteration) and one custom metric. Run it with --help for the
// options; --json writes Google Benchmark JSON that compare.py reads:
//   ./cpu_triad --json before.json ... ./cpu_triad --json after.json
//   python3 /usr/share/benchmark/compare.py benchmarks before.json after.json
#include <cstdint>
#include <memory>
#include <vector>

#include "diescope/harness/main.hpp"

using namespace diescope::harness;

namespace {

struct Arrays {
  std::vector<double> a, b, c;
  void resize(std::size_t n) {
    if (a.size() == n) return;  // the warm-up sample pays for the allocation, not a timed one
    a.assign(n, 0.0);
    b.assign(n, 1.0);
    c.assign(n, 2.0);
  }
};

void triad(Arrays& arrays, State& state) {
  const auto n = static_cast<std::size_t>(state.get_int("elements"));
  arrays.resize(n);
  const double scalar = 3.0;
  for (std::uint64_t i = 0; i < state.iterations(); ++i) {
    double* __restrict a = arrays.a.data();
    const double* __restrict b = arrays.b.data();
    const double* __restrict c = arrays.c.data();
    for (std::size_t j = 0; j < n; ++j) a[j] = b[j] + scalar * c[j];
    // Keep the compiler from dropping iterations whose result nobody reads.
    asm volatile("" : : "r"(a) : "memory");
  }
  state.push_metric(MetricValue::integer("elements", static_cast<std::int64_t>(n), "count")
                        .with_display_name("array length"));
}

double triad_bytes(const AxisPoint& point) {
  return 3.0 * sizeof(double) * static_cast<double>(point.get_int("elements"));  // read b and c, write a
}

}  // namespace

int main(int argc, char** argv) {
  auto arrays = std::make_shared<Arrays>();
  std::vector<Benchmark> benchmarks;
  benchmarks.push_back(Benchmark("triad", [arrays](State& state) { triad(*arrays, state); })
                           .int_axis("elements", {1 << 12, 1 << 16, 1 << 22})
                           .bytes_per_iteration(triad_bytes)
                           .flops_per_iteration([](const AxisPoint& p) {
                             return 2.0 * static_cast<double>(p.get_int("elements"));
                           }));
  benchmarks.push_back(Benchmark("triad_cold", [arrays](State& state) { triad(*arrays, state); })
                           .timing(TimingMode::cold)
                           .int_axis("elements", {1 << 16})
                           .bytes_per_iteration(triad_bytes)
                           .time_unit(TimeUnit::microsecond));
  return bench_main(argc, argv, benchmarks);
}
