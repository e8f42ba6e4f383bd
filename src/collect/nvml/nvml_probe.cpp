// `diescope units --nvml-probe`: what NVML reports for one GPU, as text.
#include <fmt/core.h>

#include <chrono>
#include <thread>
#include <vector>

#include "diescope/collect/nvml.hpp"
#include "diescope/core/clock.hpp"

namespace diescope::collect {

namespace {

std::string reading_text(const NvmlReading& r, const char* unit) {
  return r.ok() ? fmt::format("{:g} {}", r.value, unit) : "n/a (" + r.why + ")";
}

}  // namespace

int print_nvml_probe(int gpu, double seconds) {
  auto nvml = Nvml::load();
  fmt::print("library {}\nsymbols {}\ndriver {}\ngpus {}\n", nvml->library_path(), nvml->bound_symbols(),
             nvml->driver_version(), nvml->device_count());
  NvmlDevice device = nvml->device(gpu);
  const recording::GpuIdentity id = device.identity();
  fmt::print("gpu {}: {} {} compute capability {}.{}\n", id.index, id.model, id.uuid,
             id.compute_capability / 10, id.compute_capability % 10);
  fmt::print("sm clock {}\nmemory clock {}\n", reading_text(device.sm_clock_mhz(), "MHz"),
             reading_text(device.memory_clock_mhz(), "MHz"));
  const recording::PowerLimitReading power = device.power_limit(core::realtime_ns());
  fmt::print("enforced power limit {:g} W\n", power.limit_w);
  const recording::ThrottleReading reasons = device.throttle_reasons(core::realtime_ns());
  if (reasons.mask)
    fmt::print("clock event reasons 0x{:x}\n", *reasons.mask);
  else
    fmt::print("clock event reasons n/a\n");
  const auto engines = device.engines();
  fmt::print("engines {}\n", engines.size());
  for (const auto& e : engines)
    fmt::print("  {} ({}): {}\n", e.key, e.label, reading_text(device.engine_utilization(e), "%"));
  const recording::ProcessReading processes = device.processes(core::realtime_ns());
  fmt::print("processes compute {} graphics {}\n", processes.compute, processes.graphics);
  fmt::print("polled gpu util {}\n", reading_text(device.polled_gpu_util(), "%"));

  const recording::TimeNs start = core::realtime_ns();
  GpuUtilReader reader(device, start);
  std::vector<recording::UtilSample> samples;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    reader.read(core::realtime_ns(), samples);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  fmt::print("gpu util over {:g} s: {} readings ({})\n", seconds, samples.size(),
             reader.polling() ? "polled: " + reader.reason_text() : std::string("NVML samples"));
  recording::TimeNs previous = 0;
  for (const auto& s : samples) {
    fmt::print("  {:+.3f} s  {:g} %{}\n", static_cast<double>(s.ts_ns - start) / 1e9, s.pct,
               previous ? fmt::format("  (+{:.0f} ms)", static_cast<double>(s.ts_ns - previous) / 1e6) : "");
    previous = s.ts_ns;
  }
  return 0;
}

}  // namespace diescope::collect
