// diescope-workload: the bundled GPU workloads, in their own executable so that `diescope` itself
// never links the CUDA runtime or cuBLAS. `diescope workload NAME ...` execs this.
#include <cstdio>
#include <exception>
#include <string>
#include <variant>
#include <vector>

#include "diescope/core/error.hpp"
#include "diescope/workloads/options.hpp"
#include "workloads.hpp"

namespace {

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

int run(const std::vector<std::string>& args) {
  using namespace diescope::workloads;
  if (!args.empty() && args.front() == "calibrate") return gpu::run_calibrate({args.begin() + 1, args.end()});
  const ParsedCommand command = parse_command_line(args);
  if (!command.options) {
    std::fputs(command.help.c_str(), stdout);
    return 0;
  }
  return std::visit(Overloaded{[](const FfmaOptions& o) { return gpu::run_ffma(o); },
                               [](const StreamOptions& o) { return gpu::run_stream(o); },
                               [](const GemmOptions& o) { return gpu::run_gemm(o); },
                               [](const DutyOptions& o) { return gpu::run_duty(o); }},
                    *command.options);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const diescope::core::Error& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "diescope-workload: error: %s\n", e.cause().c_str());
    if (!e.fix().empty()) std::fprintf(stderr, "  fix: %s\n", e.fix().c_str());
    return e.exit_code();
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(
        stderr, "diescope-workload: internal error: %s\n  fix: please report this with the command you ran\n",
        e.what());
    return diescope::core::kExitInternal;
  }
}
