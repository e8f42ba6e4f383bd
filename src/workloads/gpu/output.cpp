#include "output.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

namespace diescope::workloads::gpu {

void print_measure_start() {
  std::fputs("diescope: measure start\n", stdout);
  std::fflush(stdout);
}

void print_measure_stop() {
  std::fputs("diescope: measure stop\n", stdout);
  std::fflush(stdout);
}

void print_measure_flops(double flops) {
  std::string line = "diescope: measure flops ";
  char number[64];
  const auto end = std::to_chars(number, number + sizeof number, flops).ptr;
  line.append(number, end);
  line += '\n';
  std::fputs(line.c_str(), stdout);
  std::fflush(stdout);
}

void print_result(const nlohmann::json& result) {
  const std::string line = result.dump();
  std::fputs(line.c_str(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

void print_note(const std::string& line) {
  std::fputs(("diescope-workload: " + line + "\n").c_str(), stderr);
  std::fflush(stderr);
}

void put_number(nlohmann::json& into, const std::string& key, double value,
                const std::string& reason_if_nan) {
  if (std::isfinite(value)) {
    into[key] = value;
  } else {
    into[key] = nullptr;
    into[key + "_reason"] = reason_if_nan;
  }
}

void put_rate(nlohmann::json& into, const std::string& key, const Rate& rate) {
  put_number(into, key, rate.value, rate.reason);
}

ClockTally empty_tally() {
  ClockTally t{};
  t.first_start_ns = std::numeric_limits<unsigned long long>::max();
  return t;
}

nlohmann::json clock_json_from_tally(const ClockTally& tally, double rated_max_mhz) {
  nlohmann::json clock;
  put_number(clock, "sm_mhz", clock_mhz(static_cast<double>(tally.cycles), static_cast<double>(tally.ns)),
             "the kernels recorded no time");
  clock["source"] =
      "clock64() over %globaltimer in thread 0 of every block, from block start to block end, "
      "summed over all blocks and launches in the window";
  clock["blocks_timed"] = tally.blocks;
  if (tally.last_end_ns > tally.first_start_ns) {
    clock["kernel_span_s"] = static_cast<double>(tally.last_end_ns - tally.first_start_ns) * 1e-9;
  }
  clock["rated_max_sm_mhz"] = rated_max_mhz;
  return clock;
}

}  // namespace diescope::workloads::gpu
