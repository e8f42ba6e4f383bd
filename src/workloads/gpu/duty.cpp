// A kernel on/off duty cycle: at the start of every period the host launches a kernel that keeps
// every SM busy for the on-time (it watches %globaltimer), then the GPU idles until the next period.
// The on-fraction is measured with CUDA events around each kernel against events bounding the window.
#include <chrono>
#include <cmath>
#include <thread>
#include <vector>

#include "device.hpp"
#include "diescope/workloads/work.hpp"
#include "kernels.hpp"
#include "output.hpp"
#include "workloads.hpp"

namespace diescope::workloads::gpu {

int run_duty(const DutyOptions& options) {
  using clock = std::chrono::steady_clock;
  const DeviceInfo device = open_device(options.common.device);
  int per_sm = 0;
  check(duty_blocks_per_sm(&per_sm), "asking the occupancy of the duty kernel");
  const int blocks = device.sm_count * std::max(1, per_sm);
  const auto on_ns = static_cast<unsigned long long>(std::llround(options.on_ms * 1e6));
  const auto period = std::chrono::duration_cast<clock::duration>(
      std::chrono::duration<double, std::milli>(options.period_ms));
  const auto periods = static_cast<std::uint64_t>(
      std::max(1.0, std::round(options.common.seconds * 1000.0 / options.period_ms)));

  Stream stream;
  DeviceBuffer out(static_cast<std::size_t>(blocks) * kDutyThreads * sizeof(float),
                   "allocating the duty output");
  DeviceBuffer tally(sizeof(ClockTally), "allocating the clock tally");
  // Setup: one busy launch, so module loading stays outside the window.
  check(launch_duty(out.as<float>(), tally.as<ClockTally>(), on_ns, blocks, stream.get()),
        "launching the duty kernel");
  stream.synchronize("running the duty warm-up");
  const ClockTally fresh = empty_tally();
  check(cudaMemcpy(tally.as<ClockTally>(), &fresh, sizeof fresh, cudaMemcpyHostToDevice),
        "resetting the clock tally");

  std::vector<Event> on_start(periods), on_end(periods);
  Event window_start, window_end;
  double worst_late_ms = 0.0;

  print_measure_start();
  const auto t0 = clock::now();
  window_start.record(stream.get());
  for (std::uint64_t p = 0; p < periods; ++p) {
    const auto due = t0 + period * static_cast<long>(p);
    std::this_thread::sleep_until(due);
    worst_late_ms =
        std::max(worst_late_ms, std::chrono::duration<double, std::milli>(clock::now() - due).count());
    on_start[p].record(stream.get());
    check(launch_duty(out.as<float>(), tally.as<ClockTally>(), on_ns, blocks, stream.get()),
          "launching the duty kernel");
    on_end[p].record(stream.get());
  }
  std::this_thread::sleep_until(t0 + period * static_cast<long>(periods));
  window_end.record(stream.get());
  const double window_s = elapsed_ms(window_start, window_end) / 1000.0;
  print_measure_stop();

  double on_s = 0.0;
  for (std::uint64_t p = 0; p < periods; ++p) on_s += elapsed_ms(on_start[p], on_end[p]) / 1000.0;
  ClockTally measured{};
  check(cudaMemcpy(&measured, tally.as<ClockTally>(), sizeof measured, cudaMemcpyDeviceToHost),
        "reading the clock tally");

  const double achieved = on_fraction(on_s, window_s);
  nlohmann::json result{{"workload", "duty"}, {"schema", 1}, {"device", device_json(device)}};
  result["config"] = {{"on_ms", options.on_ms},
                      {"period_ms", options.period_ms},
                      {"periods", periods},
                      {"blocks", blocks},
                      {"threads_per_block", kDutyThreads},
                      {"seconds_requested", options.common.seconds}};
  result["work"] = {{"on_s", on_s},
                    {"counted", "CUDA-event time of each busy kernel, summed over the periods"}};
  result["time_s"] = window_s;
  result["clock"] = clock_json_from_tally(measured, device.rated_max_sm_clock_mhz);
  nlohmann::json figures;
  figures["target_on_fraction"] = options.on_ms / options.period_ms;
  put_number(figures, "on_fraction", achieved, "the window had no length");
  figures["mean_on_ms"] = on_s * 1000.0 / static_cast<double>(periods);
  figures["worst_host_lateness_ms"] = worst_late_ms;
  result["result"] = figures;
  print_result(result);
  print_note(device.name + ": duty " + std::to_string(options.on_ms) + " ms of every " +
             std::to_string(options.period_ms) + " ms over " + std::to_string(periods) + " periods: on " +
             std::to_string(100.0 * achieved) + "% (target " +
             std::to_string(100.0 * options.on_ms / options.period_ms) + "%)");
  return 0;
}

}  // namespace diescope::workloads::gpu
