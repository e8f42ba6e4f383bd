#include "diescope/workloads/work.hpp"

#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>

namespace diescope::workloads {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string arch(int major, int minor) {
  return "compute capability " + std::to_string(major) + "." + std::to_string(minor);
}

std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b) {
  if (a != 0 && b > std::numeric_limits<std::uint64_t>::max() / a)
    throw std::overflow_error("work count overflows 64 bits");
  return a * b;
}

}  // namespace

Rate fp32_lanes_per_sm(int cc_major, int cc_minor) {
  // Volta (7.0, 7.2), Turing (7.5) and GA100 (8.0): 64 FP32 lanes per SM. GA10x (8.6, 8.7), Ada (8.9),
  // Hopper (9.0) and Blackwell (10.x, 11.x, 12.x): 128.
  if (cc_major == 7) return {64.0, ""};
  if (cc_major == 8 && cc_minor == 0) return {64.0, ""};
  if (cc_major == 8 || cc_major == 9 || cc_major == 10 || cc_major == 11 || cc_major == 12)
    return {128.0, ""};
  return {kNaN, "FP32 lanes per SM not known for " + arch(cc_major, cc_minor)};
}

Rate ffma_warp_instructions_per_sm_per_cycle(int cc_major, int cc_minor) {
  Rate lanes = fp32_lanes_per_sm(cc_major, cc_minor);
  if (std::isnan(lanes.value)) return lanes;
  return {lanes.value / 32.0, ""};
}

Rate bf16_dense_flop_per_sm_per_cycle(int cc_major, int cc_minor) {
  if (cc_major == 8 && cc_minor == 0) return {2048.0, ""};
  if (cc_major == 9 && cc_minor == 0) return {4096.0, ""};
  return {kNaN, "dense bf16 tensor rate per SM not tabulated for " + arch(cc_major, cc_minor)};
}

std::uint64_t ffma_per_thread(std::uint64_t iterations, std::uint64_t unroll, std::uint64_t accumulators) {
  return checked_mul(checked_mul(iterations, unroll), accumulators);
}

std::uint64_t ffma_warp_instructions(std::uint64_t fma_per_thread, std::uint64_t threads,
                                     std::uint64_t launches) {
  if (threads % 32 != 0) throw std::invalid_argument("threads must be whole warps");
  return checked_mul(checked_mul(fma_per_thread, threads / 32), launches);
}

double ffma_flops(std::uint64_t fma_per_thread, std::uint64_t threads, std::uint64_t launches) {
  return 2.0 * static_cast<double>(checked_mul(checked_mul(fma_per_thread, threads), launches));
}

double expected_fma_pipe_pct(double warp_instructions, double sm_count, double peak_per_sm_per_cycle,
                             double sm_clock_hz, double seconds) {
  const double capacity = sm_count * peak_per_sm_per_cycle * sm_clock_hz * seconds;
  if (!(capacity > 0.0)) return kNaN;
  return 100.0 * warp_instructions / capacity;
}

double fp32_peak_flops(double sm_count, double lanes_per_sm, double sm_clock_hz) {
  return sm_count * lanes_per_sm * 2.0 * sm_clock_hz;
}

std::string_view stream_kernel_name(StreamKernel kernel) {
  switch (kernel) {
    case StreamKernel::copy:
      return "copy";
    case StreamKernel::scale:
      return "scale";
    case StreamKernel::add:
      return "add";
    case StreamKernel::triad:
      return "triad";
  }
  return "unknown";
}

int stream_vectors_read(StreamKernel kernel) {
  return kernel == StreamKernel::add || kernel == StreamKernel::triad ? 2 : 1;
}

int stream_vectors_written(StreamKernel) {
  return 1;
}

std::uint64_t stream_bytes(StreamKernel kernel, std::uint64_t elements, std::uint64_t element_bytes) {
  const auto vectors = static_cast<std::uint64_t>(stream_vectors_read(kernel)) +
                       static_cast<std::uint64_t>(stream_vectors_written(kernel));
  return checked_mul(checked_mul(vectors, elements), element_bytes);
}

double gemm_flops(std::int64_t m, std::int64_t n, std::int64_t k) {
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
}

double clock_mhz(double cycles, double nanoseconds) {
  if (!(nanoseconds > 0.0)) return kNaN;
  return cycles / nanoseconds * 1000.0;  // cycles per ns is GHz
}

Rate clock_mhz_between(const std::vector<SmStamp>& first, const std::vector<SmStamp>& last) {
  std::map<int, SmStamp> earlier;
  for (const auto& s : first) earlier.emplace(s.smid, s);
  double sum = 0.0;
  int count = 0;
  for (const auto& s : last) {
    auto it = earlier.find(s.smid);
    if (it == earlier.end() || s.ns <= it->second.ns || s.cycles < it->second.cycles) continue;
    sum += clock_mhz(static_cast<double>(s.cycles - it->second.cycles),
                     static_cast<double>(s.ns - it->second.ns));
    ++count;
  }
  if (count == 0) return {kNaN, "no SM was stamped both before and after the window"};
  return {sum / count, ""};
}

std::uint64_t shared_bytes_for_one_block_per_sm(std::uint64_t shared_per_sm, std::uint64_t reserved_per_block,
                                                std::uint64_t shared_per_block_optin) {
  // Two blocks need 2 x (bytes + reserved) > shared_per_sm, i.e. bytes > shared_per_sm / 2 - reserved.
  if (shared_per_sm / 2 <= reserved_per_block) return 0;
  const std::uint64_t bytes = shared_per_sm / 2 - reserved_per_block + 1;
  return bytes <= shared_per_block_optin ? bytes : 0;
}

std::uint64_t launches_to_fill(double seconds, double seconds_per_launch) {
  if (!(seconds_per_launch > 0.0) || !(seconds > 0.0)) return 1;
  const double n = std::ceil(seconds / seconds_per_launch - 1e-9);
  return n < 1.0 ? 1 : static_cast<std::uint64_t>(n);
}

double on_fraction(double on_seconds, double window_seconds) {
  if (!(window_seconds > 0.0)) return kNaN;
  return on_seconds / window_seconds;
}

}  // namespace diescope::workloads
