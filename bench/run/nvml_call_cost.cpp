// What each NVML read that `diescope run` makes costs the caller: wall time and this thread's CPU
// time per call, through diescope's own adapter, on a real GPU. `diescope run` reads clocks and
// throttle reasons, the power limit, draw and energy counter every 100 ms and the rest (GPU-Util
// samples, engines, process lists) once a second: on the H200 a GPU-Util samples read cost about 2.2 ms of
// CPU, so reading it every 100 ms was most of the run's own CPU
// (bench/results/run/2026-11-29-h200-nvml-cadence/). The agent's attribution adds the per-process
// utilisation (docs/agent.md#nvml-reads).
//   nvml_call_cost [GPU_INDEX] [CALLS]      (defaults 0 and 500)
#include <algorithm>
#include <cmath>
#include <cstdint>
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
    time_call("power limit, draw and energy", calls, [&] { (void)device.power_limit(0); });
    time_call("power draw", calls, [&] { (void)device.power_draw_w(); });
    time_call("energy counter, by call", calls, [&] { (void)device.total_energy_mj_by_call(); });
    time_call("energy counter, by field value", calls, [&] { (void)device.total_energy_mj_by_field(); });
    // The two ways side by side for 2 s: how often each value changes (the counter's staircase) and
    // how far apart they read.
    {
      double last_call = -1, last_field = -1, max_apart = 0;
      int reads = 0, steps_call = 0, steps_field = 0;
      std::string why;
      const std::int64_t end = diescope::core::monotonic_ns() + 2'000'000'000;
      while (diescope::core::monotonic_ns() < end) {
        const auto a = device.total_energy_mj_by_call();
        const auto b = device.total_energy_mj_by_field();
        if (!a.ok() || !b.ok()) {
          why = a.ok() ? b.why : a.why;
          break;
        }
        ++reads;
        if (a.value != last_call) ++steps_call;
        if (b.value != last_field) ++steps_field;
        last_call = a.value;
        last_field = b.value;
        max_apart = std::max(max_apart, std::abs(a.value - b.value));
      }
      std::printf(
          "energy staircase over 2 s: %d read pairs; the call's value changed %d times, the field's %d; "
          "they differed by up to %.0f mJ%s%s\n",
          reads, steps_call, steps_field, max_apart, why.empty() ? "" : "; stopped: ", why.c_str());
    }
    time_call("GPU-Util samples (since 0)", calls, [&] { (void)device.gpu_util_samples(0); });
    // What run reads once a second: the samples newer than the newest it has.
    const std::uint64_t newest = device.gpu_util_samples(0).newest_us;
    time_call("GPU-Util samples (since newest)", calls, [&] { (void)device.gpu_util_samples(newest); });
    time_call("process ids (holders)", calls / 10, [&] { (void)device.process_ids(); });
    time_call("GPU-Util polled", calls, [&] { (void)device.polled_gpu_util(); });
    for (const auto& engine : device.engines())
      time_call("engine " + engine.key, calls, [&] { (void)device.engine_utilization(engine); });
    time_call("process lists", calls / 10, [&] { (void)device.processes(0); });
    // Attribution's per-process utilisation, asked since the previous read as its polls ask.
    std::uint64_t seen_us = 0;
    time_call("per-process utilisation", calls / 10, [&] {
      const diescope::collect::ProcessUtilRead r = device.process_utilization(seen_us);
      seen_us = r.newest_us;
    });
  } catch (const diescope::core::Error& e) {
    std::fprintf(stderr, "nvml_call_cost: %s\n", e.what());
    return 4;
  }
  return 0;
}
