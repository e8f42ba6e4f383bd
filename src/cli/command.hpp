// Each subcommand lives in its own cmd_<name>.cpp and registers itself here, so adding a command
// touches one file. The registry is compiled into the executable (not a library), so the static
// registrars are never dropped by the linker.
//
// The command files see the parser through Args and Opt, a small interface of the project's own:
// CLI11 is included by command_line.cpp alone (docs/command-line.md#one-file-includes-cli11).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "options.hpp"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace diescope::cli {

// One option as a command file sees it: the settings the commands use.
class Opt {
 public:
  explicit Opt(CLI::Option* option) : option_(option) {}
  Opt& type_name(const std::string& name);  // the value's name in --help (DIR, PATH, N)
  Opt& required();
  Opt& choices(const std::vector<std::string>& words);  // one of these; --help lists them
  Opt& show_default();                                  // --help shows the value it starts with
  Opt& one_value_each();      // one value per use: a word after it is the next argument
  Opt& list(char delimiter);  // several values in one word, split at `delimiter`
  // Refuses a value: `why_not` returns the reason, or empty when the value is taken.
  Opt& check(const std::function<std::string(const std::string&)>& why_not);
  Opt& group(const std::string& name);  // the heading --help lists it under
  bool given() const;                   // it was on the command line

 private:
  CLI::Option* option_;
};

// A command's (or a subcommand's) options.
class Args {
 public:
  explicit Args(CLI::App& app) : app_(&app) {}

  // Values as the parser reads them.
  Opt option(const std::string& name, std::string& target, const std::string& help);
  Opt option(const std::string& name, std::vector<std::string>& target, const std::string& help);
  Opt option(const std::string& name, double& target, const std::string& help);
  Opt flag(const std::string& name, bool& target, const std::string& help);
  // Values parsed by options.hpp, so a bad one gets the project's message. `hidden` are old spellings
  // that set the same value and that --help does not list; two spellings of one option are refused.
  Opt text(const std::string& name, std::string& target, const std::string& help,
           const std::vector<std::string>& hidden = {});
  Opt number(const std::string& name, double& target, const std::string& help,
             const std::vector<std::string>& hidden = {});
  // A shared option (options.hpp): its name and default from the rule, its help the rule's or `help`
  // ({default} filled in). check_range checks the value when the command runs.
  Opt number(const NumberRule& rule, double& target, std::string_view help = {},
             const std::vector<std::string>& hidden = {});
  Opt whole(const std::string& name, int& target, const std::string& help);
  // --gpus LIST: GPU indexes separated by commas (or the option repeated).
  Opt gpu_list(std::vector<int>& target, const std::string& help);
  // --gpus N for a command that takes exactly one GPU; --gpu and --device are hidden aliases.
  Opt one_gpu(std::optional<int>& target, const std::string& help);

  void footer(const std::string& text);
  Args subcommand(const std::string& name, const std::string& description);
  void require_subcommand();
  // Everything after the command's name is left for remaining(), --help included.
  void pass_through();
  std::vector<std::string> remaining() const;
  bool parsed() const;

 private:
  CLI::App* app_;
};

struct Command {
  std::string name;
  int order;  // position in --help
  // Adds the subcommand's options to `args`; returns what runs when it is chosen (its exit code).
  std::function<std::function<int()>(Args args)> setup;
  std::string description;
};

std::vector<Command>& command_registry();

struct CommandRegistrar {
  explicit CommandRegistrar(Command command) { command_registry().push_back(std::move(command)); }
};

// Parses the command line and runs the chosen command; returns its exit code. Throws core::Error
// (a UsageError for a bad command line) for main to print.
int run_command_line(int argc, char** argv);

}  // namespace diescope::cli
