// diescope: how much of the GPU is in use, from the chip's own counters.
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <fmt/core.h>
#include <map>
#include <string>
#include <vector>

#include "command.hpp"
#include "options.hpp"
#include "diescope/core/error.hpp"
#include "diescope/core/printable.hpp"
#include "diescope/core/version.hpp"

namespace diescope::cli {

std::vector<Command>& command_registry() {
  static std::vector<Command> commands;
  return commands;
}

namespace {

int run_main(int argc, char** argv) {
  CLI::App app{
      "diescope: how much of the GPU is really in use.\n"
      "GPU-Util (nvidia-smi) says a kernel was running; DIE-Util says how busy the chip's busiest unit\n"
      "was, from its own hardware counters. diescope reports both over the same time, the gap between\n"
      "them and where the stranded capacity went.",
      "diescope"};
  app.set_version_flag("--version",
                       fmt::format("diescope {} (method {}, report schema {})", core::kToolVersion,
                                   core::kMethodVersion, core::kReportSchemaVersion));
  app.require_subcommand(1, 1);
  app.fallthrough(false);

  auto& commands = command_registry();
  std::sort(commands.begin(), commands.end(),
            [](const Command& a, const Command& b) { return a.order < b.order; });
  std::map<CLI::App*, std::function<int()>> actions;
  for (auto& command : commands) {
    CLI::App* sub = app.add_subcommand(command.name, command.description);
    actions[sub] = command.setup(*sub);
  }

  // Every refusal is the project's own message: the cause, the closest valid name, the fix, exit 2.
  const std::vector<std::string> args(argv + 1, argv + argc);
  check_command_name(app, args);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    throw usage_error_for(app, e, args);
  }
  for (auto& [sub, action] : actions) {
    if (sub->parsed()) return action();
  }
  return core::kExitInternal;
}

}  // namespace
}  // namespace diescope::cli

int main(int argc, char** argv) {
  try {
    return diescope::cli::run_main(argc, argv);
  } catch (const diescope::core::Error& e) {
    // A cause may quote a file's bytes: shown, never sent to the terminal as they are.
    std::fprintf(stderr, "diescope: error: %s\n", diescope::core::printable(e.cause()).c_str());
    if (!e.fix().empty()) std::fprintf(stderr, "  fix: %s\n", diescope::core::printable(e.fix()).c_str());
    return e.exit_code();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "diescope: internal error: %s\n  fix: please report this with the command you ran\n",
                 diescope::core::printable(e.what()).c_str());
    return diescope::core::kExitInternal;
  }
}
