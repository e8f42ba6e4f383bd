// What each NVML read that `diescope run` makes costs the caller: wall time and this thread's CPU
// time per call, through diescope's own adapter, on a real GPU. `diescope run` reads clocks and
// throttle reasons every 100 ms and the rest (GPU-Util samples, engines, power limit, process list)
// once a second: on the H200 a GPU-Util samples read cost about 2.2 ms of CPU, so reading it every
// 100 ms was most of the run's own CPU (bench/results/run/2026-11-29-h200-nvml-cadence/).
//   nvml_call_cost [GPU_INDEX] [CALLS]      (defaults 0 and 500)
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>

#include "diescope/collect/nvml.hpp"
#include "diescope/core/clock.hpp"
#include "diescope/core/error.hpp"

namespace {

void time_call(const std::string& name, int calls, const std::function<void()>& call) {
  call();  // the first call may bind lazily
  const std::int64_t wall0 = diescope::core::monotonic_ns(), cpu0 = diescope::core::thread_cpu_ns();
  for (int i = 0; i < calls; ++i) call();
  const double wall_us = double(diescope::core::monotonic_ns() - wall0) / calls / 1e3;
  const double cpu_us = double(diescope::core::thread_cpu_ns() - cpu0) / calls / 1e3;
  std::printf("%-34s %10.1f %10.1f\n", name.c_str(), wall_us, cpu_us);
}

}  // namespace

int main(int argc, char** argv) {
  const int index = argc > 1 ? std::atoi(argv[1]) : 0;
  const int calls = argc > 2 ? std::atoi(argv[2]) : 500;
  try {
    auto nvml = diescope::collect::Nvml::load();
    const diescope::collect::NvmlDevice device = nvml->device(index);
    std::printf("GPU %d: %s, driver %s, %d calls each\n", index, device.identity().model.c_str(),
                nvml->driver_version().c_str(), calls);
    std::printf("%-34s %10s %10s\n", "read", "wall_us", "cpu_us");
    time_call("clocks (SM and memory)", calls, [&] { (void)device.clocks(0); });
    time_call("throttle reasons", calls, [&] { (void)device.throttle_reasons(0); });
    time_call("power limit", calls, [&] { (void)device.power_limit(0); });
    time_call("GPU-Util samples (since 0)", calls, [&] { (void)device.gpu_util_samples(0); });
    time_call("GPU-Util polled", calls, [&] { (void)device.polled_gpu_util(); });
    for (const auto& engine : device.engines())
      time_call("engine " + engine.key, calls, [&] { (void)device.engine_utilization(engine); });
    time_call("process lists", calls / 10, [&] { (void)device.processes(0); });
  } catch (const diescope::core::Error& e) {
    std::fprintf(stderr, "nvml_call_cost: %s\n", e.what());
    return 4;
  }
  return 0;
}
