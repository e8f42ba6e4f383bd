// Command lines of the bundled workloads (`diescope workload NAME [args]`). Parsing lives here, apart
// from the CUDA code, so it is tested on machines without a GPU.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "diescope/workloads/stream_kernel.hpp"

namespace diescope::workloads {

struct WorkloadInfo {
  std::string_view name;
  std::string_view summary;
};

// Every bundled workload, in the order --help lists them.
const std::vector<WorkloadInfo>& workload_catalog();
bool is_workload(std::string_view name);

struct CommonOptions {
  double seconds = 5.0;  // length of the measured window (between the markers)
  int device = 0;        // CUDA device index
};

struct FfmaOptions {
  CommonOptions common;
  int sms = 0;  // SMs to load, one block each; 0 means every SM of the device
};

struct StreamOptions {
  CommonOptions common;
  std::vector<StreamKernel> kernels = {StreamKernel::copy};  // run in this order, each in its own window
  std::uint64_t elements = std::uint64_t{1} << 28;  // floats per vector: 1 GiB each, many times any L2
};

struct GemmOptions {
  CommonOptions common;
  std::int64_t m = 8192;
  std::int64_t n = 8192;
  std::int64_t k = 8192;
};

struct DutyOptions {
  CommonOptions common;
  double on_ms = 50.0;
  double period_ms = 100.0;
};

using WorkloadOptions = std::variant<FfmaOptions, StreamOptions, GemmOptions, DutyOptions>;

struct ParsedCommand {
  std::string name;                        // the workload; empty when only the overview was asked for
  std::optional<WorkloadOptions> options;  // empty when help was asked for: print `help` and exit 0
  std::string help;
};

// `args` is everything after the program name, e.g. {"ffma", "--sms", "66"}.
// Throws UsageError (exit code 2) naming the bad argument and how to fix it.
ParsedCommand parse_command_line(const std::vector<std::string>& args);

// The overview: every workload with its one-line summary.
std::string overview_help(std::string_view program);

}  // namespace diescope::workloads
