// The four bundled workloads. Each returns the process exit code, prints its window markers and JSON
// result line on stdout, and throws core::Error with a cause and a fix when it cannot run.
#pragma once

#include <string>
#include <vector>

#include "diescope/workloads/options.hpp"

namespace diescope::workloads::gpu {

int run_ffma(const FfmaOptions& options);
int run_stream(const StreamOptions& options);
int run_gemm(const GemmOptions& options);
int run_duty(const DutyOptions& options);
// `diescope-workload calibrate ...`: the device side of `diescope calibrate` (calibrate.cpp), not a
// bundled workload; `args` is everything after "calibrate".
int run_calibrate(const std::vector<std::string>& args);

}  // namespace diescope::workloads::gpu
