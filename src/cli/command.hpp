// Each subcommand lives in its own cmd_<name>.cpp and registers itself here, so adding a command
// touches one file. The registry is compiled into the executable (not a library), so the static
// registrars are never dropped by the linker.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "diescope/core/error.hpp"
#include "options.hpp"

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

// Options whose values are parsed by options.hpp's parsers. `hidden` are old spellings that set the
// same value and are not listed by --help; giving two spellings of one option is a usage error.
CLI::Option* add_text(CLI::App& sub, const std::string& name, std::string& target,
                      const std::string& description, const std::vector<std::string>& hidden = {});
CLI::Option* add_number(CLI::App& sub, const std::string& name, double& target,
                        const std::string& description, const std::vector<std::string>& hidden = {});
// A shared number option (options.hpp): its name, its default into `target`, and its help (the rule's,
// or `help` where the command words it its own way; {default} is filled in). The range is checked by
// check_range when the command runs.
CLI::Option* add_number(CLI::App& sub, const NumberRule& rule, double& target, std::string_view help = {},
                        const std::vector<std::string>& hidden = {});
CLI::Option* add_whole(CLI::App& sub, const std::string& name, int& target, const std::string& description);
// --gpus LIST: GPU indexes separated by commas (or the option repeated).
CLI::Option* add_gpu_list(CLI::App& sub, std::vector<int>& target, const std::string& description);
// --gpus N for a command that takes exactly one GPU; --gpu and --device are hidden aliases.
CLI::Option* add_one_gpu(CLI::App& sub, std::optional<int>& target, const std::string& description);

// The project's message for what CLI11 refused in `args` (argv without the program name).
core::Error usage_error_for(CLI::App& app, const CLI::ParseError& error,
                            const std::vector<std::string>& args);

// Refuses, before parsing, a first argument that is neither a command nor a top-level option.
void check_command_name(const CLI::App& app, const std::vector<std::string>& args);

}  // namespace diescope::cli
