// Each subcommand lives in its own cmd_<name>.cpp and registers itself here, so adding a command
// touches one file. The registry is compiled into the executable (not a library), so the static
// registrars are never dropped by the linker.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace diescope::cli {

struct Command {
  std::string name;
  int order;  // position in --help
  // Adds the subcommand's options to `sub`; returns what runs when it is chosen (its exit code).
  std::function<std::function<int()>(CLI::App& sub)> setup;
  std::string description;
};

std::vector<Command>& command_registry();

struct CommandRegistrar {
  explicit CommandRegistrar(Command command) { command_registry().push_back(std::move(command)); }
};

}  // namespace diescope::cli
