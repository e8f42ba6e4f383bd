// FFMA on a chosen number of SMs. Pinning: each block of 1024 threads asks for more than half of an
// SM's shared memory, so the occupancy calculator allows one block per SM and N blocks land on N
// different SMs; the kernel records each block's %smid and the run fails if any SM held two.
#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <set>
#include <vector>

#include "device.hpp"
#include "diescope/core/error.hpp"
#include "diescope/workloads/work.hpp"
#include "kernels.hpp"
#include "output.hpp"
#include "workloads.hpp"

namespace diescope::workloads::gpu {

namespace {

constexpr int kCheckIterations = 64;          // the launch whose result is checked on the host
constexpr int kCalibrationIterations = 1024;  // the launch that measures how long a trip takes

// One thread's output, computed on the host with the same operations in the same order.
float host_thread_result(unsigned thread, int iterations) {
  float sum = 0.0f;
  for (int i = 0; i < kFfmaAccumulators; ++i) {
    float acc = ffma_initial_value(thread, i);
    for (long step = 0; step < static_cast<long>(iterations) * kFfmaUnroll; ++step) {
      acc = std::fmaf(acc, kFfmaMultiplier, kFfmaAddend);
    }
    sum += acc;
  }
  return sum;
}

std::size_t count_distinct(const std::vector<unsigned>& smids) {
  return std::set<unsigned>(smids.begin(), smids.end()).size();
}

}  // namespace

int run_ffma(const FfmaOptions& options) {
  const DeviceInfo device = open_device(options.common.device);
  const int sms = options.sms == 0 ? device.sm_count : options.sms;
  if (sms > device.sm_count) {
    throw core::UsageError("--sms " + std::to_string(sms) + " is more than the " +
                               std::to_string(device.sm_count) + " SMs of " + device.name,
                           "choose --sms between 1 and " + std::to_string(device.sm_count));
  }
  const std::uint64_t shared = shared_bytes_for_one_block_per_sm(
      device.shared_per_sm, device.reserved_shared_per_block, device.shared_per_block_optin);
  if (shared == 0) {
    throw core::DeviceError(
        "cannot hold this GPU to one FFMA block per SM: a block may not ask for more than half of an "
        "SM's shared memory",
        "use the whole GPU (leave out --sms)");
  }
  check(ffma_set_shared_bytes(shared), "raising the FFMA kernel's shared-memory limit");
  int blocks_per_sm = 0;
  check(ffma_blocks_per_sm(&blocks_per_sm, shared), "asking the occupancy of the FFMA kernel");
  if (blocks_per_sm != 1) {
    throw core::DeviceError("the FFMA kernel fits " + std::to_string(blocks_per_sm) +
                                " blocks per SM where exactly 1 is needed to load a chosen number of SMs",
                            "report this with the GPU model; use the whole GPU meanwhile");
  }

  Stream stream;
  const std::uint64_t threads = static_cast<std::uint64_t>(sms) * kFfmaThreads;
  DeviceBuffer out(threads * sizeof(float), "allocating the FFMA output");
  DeviceBuffer smids(static_cast<std::size_t>(sms) * sizeof(unsigned), "allocating the SM id list");
  DeviceBuffer tally(sizeof(ClockTally), "allocating the clock tally");
  FfmaArgs args{out.as<float>(),  smids.as<unsigned>(), tally.as<ClockTally>(),
                kCheckIterations, kFfmaMultiplier,      kFfmaAddend};

  // Setup: one short launch whose result is checked against the host, so the FFMAs counted are the
  // FFMAs done; then one timed launch that sizes the window's launches.
  check(launch_ffma(args, sms, shared, stream.get()), "launching the FFMA kernel");
  stream.synchronize("running the FFMA check launch");
  std::vector<float> results(threads);
  check(cudaMemcpy(results.data(), out.as<float>(), threads * sizeof(float), cudaMemcpyDeviceToHost),
        "reading the FFMA results");
  for (std::uint64_t t :
       {std::uint64_t{0}, std::uint64_t{kFfmaThreads - 1}, threads - kFfmaThreads, threads - 1}) {
    const float expected = host_thread_result(static_cast<unsigned>(t % kFfmaThreads), kCheckIterations);
    // Bit for bit: the kernel and the host do the same FMAs in the same order.
    if (std::bit_cast<std::uint32_t>(expected) != std::bit_cast<std::uint32_t>(results[t])) {
      throw core::DeviceError("the FFMA kernel computed " + std::to_string(results[t]) + " for thread " +
                                  std::to_string(t) + " where the host computed " + std::to_string(expected),
                              "the GPU or this build miscomputes FMAs; report this with the GPU model");
    }
  }
  std::vector<unsigned> seen(static_cast<std::size_t>(sms));
  check(cudaMemcpy(seen.data(), smids.as<unsigned>(), seen.size() * sizeof(unsigned), cudaMemcpyDeviceToHost),
        "reading the SM ids");
  if (count_distinct(seen) != static_cast<std::size_t>(sms)) {
    throw core::DeviceError(
        std::to_string(sms) + " FFMA blocks ran on only " + std::to_string(count_distinct(seen)) +
            " distinct SMs",
        "another process may be using the GPU (nvidia-smi lists them); run on an idle GPU");
  }

  Event e0, e1;
  args.iterations = kCalibrationIterations;
  e0.record(stream.get());
  check(launch_ffma(args, sms, shared, stream.get()), "launching the FFMA kernel");
  e1.record(stream.get());
  const double calibration_s = elapsed_ms(e0, e1) / 1000.0;
  // Launches of about 1/20 of the window, between 2 and 50 ms: long against launch gaps, short
  // enough that the window ends close to the time asked for.
  const double launch_target_s = std::clamp(options.common.seconds / 20.0, 0.002, 0.05);
  const double iterations = std::clamp(std::round(kCalibrationIterations * launch_target_s / calibration_s),
                                       1.0, static_cast<double>(INT_MAX));
  args.iterations = static_cast<int>(iterations);
  const std::uint64_t launches =
      launches_to_fill(options.common.seconds, calibration_s * iterations / kCalibrationIterations);

  const ClockTally fresh = empty_tally();
  check(cudaMemcpy(tally.as<ClockTally>(), &fresh, sizeof fresh, cudaMemcpyHostToDevice),
        "resetting the clock tally");

  // The window: every launch is queued at once, so the GPU never waits on the host inside it.
  print_measure_start();
  e0.record(stream.get());
  for (std::uint64_t i = 0; i < launches; ++i)
    check(launch_ffma(args, sms, shared, stream.get()), "launching the FFMA kernel");
  e1.record(stream.get());
  const double seconds = elapsed_ms(e0, e1) / 1000.0;
  print_measure_stop();

  ClockTally measured{};
  check(cudaMemcpy(&measured, tally.as<ClockTally>(), sizeof measured, cudaMemcpyDeviceToHost),
        "reading the clock tally");
  check(cudaMemcpy(seen.data(), smids.as<unsigned>(), seen.size() * sizeof(unsigned), cudaMemcpyDeviceToHost),
        "reading the SM ids");
  const std::size_t distinct = count_distinct(seen);

  const std::uint64_t fma_thread =
      ffma_per_thread(static_cast<std::uint64_t>(args.iterations), kFfmaUnroll, kFfmaAccumulators);
  const std::uint64_t instructions = ffma_warp_instructions(fma_thread, threads, launches);
  const double flops = ffma_flops(fma_thread, threads, launches);
  print_measure_flops(flops);
  const double mhz = clock_mhz(static_cast<double>(measured.cycles), static_cast<double>(measured.ns));
  const Rate lanes = fp32_lanes_per_sm(device.cc_major, device.cc_minor);
  const Rate peak_instructions = ffma_warp_instructions_per_sm_per_cycle(device.cc_major, device.cc_minor);
  const double device_pct = expected_fma_pipe_pct(static_cast<double>(instructions), device.sm_count,
                                                  peak_instructions.value, mhz * 1e6, seconds);
  const double loaded_pct = expected_fma_pipe_pct(static_cast<double>(instructions), sms,
                                                  peak_instructions.value, mhz * 1e6, seconds);
  const double peak_flops = fp32_peak_flops(device.sm_count, lanes.value, mhz * 1e6);

  nlohmann::json result{{"workload", "ffma"}, {"schema", 1}, {"device", device_json(device)}};
  result["config"] = {
      {"sms", sms},
      {"threads_per_block", kFfmaThreads},
      {"accumulators", kFfmaAccumulators},
      {"unroll", kFfmaUnroll},
      {"iterations_per_launch", args.iterations},
      {"launches", launches},
      {"shared_bytes_per_block", shared},
      {"pinning", "dynamic shared memory over half an SM's, so at most one block per SM; %smid checked"},
      {"seconds_requested", options.common.seconds}};
  result["work"] = {{"ffma_per_thread_per_launch", fma_thread},
                    {"threads", threads},
                    {"ffma_warp_instructions", instructions},
                    {"flops", flops},
                    {"counted",
                     "FFMAs of the main loop only, 2 FLOP each per thread; the 16 FMAs that set "
                     "the accumulators and the 16 adds that sum them, once per thread per launch, "
                     "are left out"}};
  result["time_s"] = seconds;
  result["clock"] = clock_json_from_tally(measured, device.rated_max_sm_clock_mhz);
  nlohmann::json figures;
  figures["tflops"] = flops / seconds / 1e12;
  put_rate(figures, "fp32_lanes_per_sm", lanes);
  put_rate(figures, "ffma_warp_instructions_per_sm_per_cycle_peak", peak_instructions);
  put_number(figures, "fp32_peak_tflops_at_clock", peak_flops / 1e12,
             "FP32 lanes per SM or the clock is unknown");
  put_number(figures, "expected_fma_pipe_pct", device_pct, "FP32 lanes per SM or the clock is unknown");
  put_number(figures, "fma_pipe_pct_of_loaded_sms", loaded_pct, "FP32 lanes per SM or the clock is unknown");
  figures["expected_fma_pipe_pct_formula"] =
      "100 * ffma_warp_instructions / (device SMs * peak warp instructions per SM per cycle * sm_mhz * 1e6 * "
      "time_s)";
  figures["sms_used"] = sms;
  figures["distinct_sms_seen"] = distinct;
  result["result"] = figures;
  print_result(result);

  print_note(device.name + ": FFMA on " + std::to_string(sms) + " of " + std::to_string(device.sm_count) +
             " SMs, " + std::to_string(launches) + " launches in " + std::to_string(seconds) +
             " s: " + std::to_string(flops / seconds / 1e12) + " TFLOP/s at " + std::to_string(mhz) +
             " MHz; expected FMA pipe " + std::to_string(device_pct) + "% of the device (" +
             std::to_string(loaded_pct) + "% of the loaded SMs)");
  if (distinct != static_cast<std::size_t>(sms)) {
    throw core::DeviceError(
        std::to_string(sms) + " FFMA blocks ran on only " + std::to_string(distinct) + " distinct SMs",
        "another process may be using the GPU (nvidia-smi lists them); run on an idle GPU");
  }
  return 0;
}

}  // namespace diescope::workloads::gpu
