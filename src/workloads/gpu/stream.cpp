// STREAM copy and triad. Bytes are the kernel's own reads plus writes (copy 2 x N x 4, triad
// 3 x N x 4); the vectors are many times the L2, so every launch goes to DRAM.
#include <cmath>
#include <limits>
#include <vector>

#include "device.hpp"
#include "diescope/core/error.hpp"
#include "diescope/workloads/work.hpp"
#include "kernels.hpp"
#include "output.hpp"
#include "workloads.hpp"

namespace diescope::workloads::gpu {

namespace {

constexpr float kTriadScalar = 3.0f;
constexpr int kCalibrationLaunches = 5;
constexpr std::uint64_t kCheckedElements = 4096;

struct Vectors {
  const DeviceBuffer& a;
  const DeviceBuffer& b;
  const DeviceBuffer& c;
  std::uint64_t n;
};

// Every `stride`-th element from 0, plus the last one (which the tail code writes when n % 4 != 0).
std::vector<float> sample(const DeviceBuffer& v, std::uint64_t n) {
  const std::uint64_t stride = std::max<std::uint64_t>(1, n / kCheckedElements);
  const std::uint64_t count = (n - 1) / stride + 1;
  std::vector<float> values(count + 1);
  check(cudaMemcpy2D(values.data(), sizeof(float), v.as<float>(), stride * sizeof(float), sizeof(float),
                     count, cudaMemcpyDeviceToHost),
        "reading sampled vector elements");
  check(cudaMemcpy(&values[count], v.as<float>() + (n - 1), sizeof(float), cudaMemcpyDeviceToHost),
        "reading the last vector element");
  return values;
}

void verify(StreamKernel kernel, const Vectors& v) {
  const auto a = sample(v.a, v.n), b = sample(v.b, v.n), c = sample(v.c, v.n);
  for (std::size_t i = 0; i < a.size(); ++i) {
    const bool ok = kernel == StreamKernel::copy
                        ? b[i] == a[i]
                        : std::fabs(a[i] - (b[i] + kTriadScalar * c[i])) <= 1e-6f * std::fabs(a[i]);
    if (!ok) {
      throw core::DeviceError(
          "STREAM " + std::string(stream_kernel_name(kernel)) + " wrote a wrong value (sample " +
              std::to_string(i) + ": a=" + std::to_string(a[i]) + " b=" + std::to_string(b[i]) +
              " c=" + std::to_string(c[i]) + ")",
          "the GPU or this build computes STREAM wrongly; report this with the GPU model");
    }
  }
}

// Copy and triad only: the parser offers no other (scale and add run in calibrate's STREAM sweep).
void launch(StreamKernel kernel, const Vectors& v, ClockTally* tally, int blocks, cudaStream_t stream) {
  if (kernel == StreamKernel::copy) {
    check(launch_stream_copy(v.a.as<float>(), v.b.as<float>(), v.n, tally, blocks, stream),
          "launching STREAM copy");
  } else {
    check(launch_stream_triad(v.a.as<float>(), v.b.as<float>(), v.c.as<float>(), kTriadScalar, v.n, tally,
                              blocks, stream),
          "launching STREAM triad");
  }
}

void run_phase(StreamKernel kernel, const StreamOptions& options, const DeviceInfo& device, const Vectors& v,
               Stream& stream) {
  DeviceBuffer tally(sizeof(ClockTally), "allocating the clock tally");
  const int blocks = device.sm_count * std::max(1, device.max_threads_per_sm / kStreamThreads);

  // Setup: warm-up launches, then a timed few that size the window.
  launch(kernel, v, tally.as<ClockTally>(), blocks, stream.get());
  launch(kernel, v, tally.as<ClockTally>(), blocks, stream.get());
  Event e0, e1;
  e0.record(stream.get());
  for (int i = 0; i < kCalibrationLaunches; ++i)
    launch(kernel, v, tally.as<ClockTally>(), blocks, stream.get());
  e1.record(stream.get());
  const double per_launch_s = elapsed_ms(e0, e1) / 1000.0 / kCalibrationLaunches;
  const std::uint64_t launches = launches_to_fill(options.common.seconds, per_launch_s);
  const ClockTally fresh = empty_tally();
  check(cudaMemcpy(tally.as<ClockTally>(), &fresh, sizeof fresh, cudaMemcpyHostToDevice),
        "resetting the clock tally");

  // The window. The launch queue holds about a thousand launches; when it is full the host waits
  // for room, so the GPU still has that many queued and never waits on the host.
  print_measure_start();
  e0.record(stream.get());
  for (std::uint64_t i = 0; i < launches; ++i)
    launch(kernel, v, tally.as<ClockTally>(), blocks, stream.get());
  e1.record(stream.get());
  const double seconds = elapsed_ms(e0, e1) / 1000.0;
  print_measure_stop();

  ClockTally measured{};
  check(cudaMemcpy(&measured, tally.as<ClockTally>(), sizeof measured, cudaMemcpyDeviceToHost),
        "reading the clock tally");
  verify(kernel, v);

  const std::uint64_t per_launch = stream_bytes(kernel, v.n, sizeof(float));
  const double bytes = static_cast<double>(per_launch) * static_cast<double>(launches);
  nlohmann::json result{{"workload", "stream"}, {"schema", 1}, {"device", device_json(device)}};
  result["config"] = {{"kernel", stream_kernel_name(kernel)},
                      {"elements", v.n},
                      {"element_bytes", sizeof(float)},
                      {"blocks", blocks},
                      {"threads_per_block", kStreamThreads},
                      {"launches", launches},
                      {"seconds_requested", options.common.seconds}};
  result["work"] = {{"bytes_per_launch", per_launch},
                    {"bytes", bytes},
                    {"counted", kernel == StreamKernel::copy
                                    ? "copy b = a: 2 x elements x 4 bytes (read a, write b)"
                                    : "triad a = b + s*c: 3 x elements x 4 bytes (read b and c, write a)"}};
  result["time_s"] = seconds;
  result["clock"] = clock_json_from_tally(measured, device.rated_max_sm_clock_mhz);
  result["result"] = {{"gb_per_s", bytes / seconds / 1e9}};
  print_result(result);
  print_note(device.name + ": STREAM " + std::string(stream_kernel_name(kernel)) + ", " +
             std::to_string(launches) + " launches in " + std::to_string(seconds) +
             " s: " + std::to_string(bytes / seconds / 1e9) + " GB/s");
}

}  // namespace

int run_stream(const StreamOptions& options) {
  const DeviceInfo device = open_device(options.common.device);
  const std::uint64_t n = options.elements;
  const std::uint64_t vector_bytes = n * sizeof(float);
  std::size_t free_bytes = 0, total_bytes = 0;
  check(cudaMemGetInfo(&free_bytes, &total_bytes), "reading free GPU memory");
  if (static_cast<double>(3 * vector_bytes) > 0.9 * static_cast<double>(free_bytes)) {
    throw core::UsageError(
        "three vectors of " + std::to_string(n) + " floats need " + std::to_string(3 * vector_bytes >> 20) +
            " MiB, more than the " + std::to_string(free_bytes >> 20) + " MiB free on " + device.name,
        "use --elements " +
            std::to_string(static_cast<std::uint64_t>(0.9 * static_cast<double>(free_bytes)) /
                           (3 * sizeof(float))) +
            " or fewer");
  }
  DeviceBuffer a(vector_bytes, "allocating STREAM vector a");
  DeviceBuffer b(vector_bytes, "allocating STREAM vector b");
  DeviceBuffer c(vector_bytes, "allocating STREAM vector c");
  Stream stream;
  // Distinct values in each vector, so a skipped write shows in the check.
  check(launch_stream_fill(a.as<float>(), n, 1.0f, 1.0f / 1024, stream.get()), "filling STREAM vector a");
  check(launch_stream_fill(b.as<float>(), n, 2.0f, 1.0f / 2048, stream.get()), "filling STREAM vector b");
  check(launch_stream_fill(c.as<float>(), n, 0.5f, 1.0f / 4096, stream.get()), "filling STREAM vector c");
  stream.synchronize("filling the STREAM vectors");
  const Vectors v{a, b, c, n};
  for (const StreamKernel kernel : options.kernels) run_phase(kernel, options, device, v, stream);
  return 0;
}

}  // namespace diescope::workloads::gpu
