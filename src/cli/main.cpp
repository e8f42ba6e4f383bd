// diescope: how much of the GPU is in use, from the chip's own counters.
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <fmt/core.h>
#include <map>

#include "command.hpp"
#include "diescope/core/error.hpp"
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

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : core::kExitUsage;
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
    std::fprintf(stderr, "diescope: error: %s\n", e.cause().c_str());
    if (!e.fix().empty()) std::fprintf(stderr, "  fix: %s\n", e.fix().c_str());
    return e.exit_code();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "diescope: internal error: %s\n  fix: please report this with the command you ran\n",
                 e.what());
    return diescope::core::kExitInternal;
  }
}
