// The four bundled workloads. Each returns the process exit code, prints its window markers and JSON
// result line on stdout, and throws diescope::Error with a cause and a fix when it cannot run.
#pragma once

#include "diescope/workloads/options.hpp"

namespace diescope::workloads::gpu {

int run_ffma(const FfmaOptions& options);
int run_stream(const StreamOptions& options);
int run_gemm(const GemmOptions& options);
int run_duty(const DutyOptions& options);

}  // namespace diescope::workloads::gpu
