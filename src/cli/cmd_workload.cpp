// `diescope workload NAME [args]`: runs a bundled GPU workload by replacing this process with the
// diescope-workload executable beside diescope (kept apart so diescope itself needs no CUDA runtime).
#include <iostream>
#include <string>
#include <vector>

#include "command.hpp"
#include "diescope/core/error.hpp"
#include "diescope/workloads/launcher.hpp"
#include "diescope/workloads/options.hpp"

namespace diescope::cli {
namespace {

std::function<int()> setup_workload(Args sub) {
  // Everything from the workload's name on goes to diescope-workload untouched, --help included.
  sub.pass_through();
  sub.footer(workloads::overview_help("diescope workload"));
  return [sub]() -> int {
    const std::vector<std::string> args = sub.remaining();
    if (args.empty()) {
      throw core::UsageError("name the workload to run", "diescope workload ffma|stream|gemm|duty [--help]");
    }
    // The options are checked, and --help answered, here: neither needs the CUDA executable.
    const workloads::ParsedCommand parsed = workloads::parse_command_line(args);
    if (!parsed.options) {
      std::cout << parsed.help << std::flush;
      return 0;
    }
    const auto binary = workloads::find_workload_binary(workloads::current_executable());
    workloads::exec_workload(binary, args);
  };
}

const CommandRegistrar registrar{Command{
    "workload", 70, setup_workload, "run a bundled GPU workload with known work (ffma, stream, gemm, duty)"}};

}  // namespace
}  // namespace diescope::cli
