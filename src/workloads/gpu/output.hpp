// What the workloads print: the window markers (flushed at once, since diescope run times them when
// they arrive) and one JSON result line per measured window.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "diescope/workloads/work.hpp"
#include "kernels.hpp"

namespace diescope::workloads::gpu {

void print_measure_start();
void print_measure_stop();
// "diescope: measure flops FLOPS": the work the window just marked did, for diescope run's joules per
// TFLOP (docs/energy.md#telling-diescope-the-flops). Printed after the stop marker.
void print_measure_flops(double flops);
void print_result(const nlohmann::json& result);
// A line for people, on stderr.
void print_note(const std::string& line);

// A figure that may be unknown: a number, or null with a reason beside it under `<key>_reason`.
void put_rate(nlohmann::json& into, const std::string& key, const Rate& rate);
void put_number(nlohmann::json& into, const std::string& key, double value, const std::string& reason_if_nan);

// The starting value of a tally: nothing counted, the earliest start at its largest.
ClockTally empty_tally();
// The clock block of a result from a kernel's own tally.
nlohmann::json clock_json_from_tally(const ClockTally& tally, double rated_max_mhz);

}  // namespace diescope::workloads::gpu
