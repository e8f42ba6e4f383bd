// The command line's one convention (CONTRIBUTING.md, "Command-line options"): the same name for the
// same concept in every command, values parsed here so that every bad value gets the project's own
// message (cause, fix, exit 2), and old spellings kept as hidden aliases that --help does not list.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "diescope/core/error.hpp"

namespace diescope::cli {

// The name in `names` closest to `given` by edit distance, when it is close enough to be a likely
// typo (at most a third of the longer name's letters, and at least one); empty otherwise.
std::string closest_name(const std::string& given, const std::vector<std::string>& names);

// "; did you mean 'X'?" for the closest name, or empty.
std::string did_you_mean(const std::string& given, const std::vector<std::string>& names);

// A finite number, the whole text. Throws UsageError naming the option and the text.
double parse_number(const std::string& option, const std::string& text, const std::string& example);
// A whole number, the whole text.
long parse_whole(const std::string& option, const std::string& text, const std::string& example);
// One GPU index as nvidia-smi numbers them: a whole number from 0.
int parse_gpu_index(const std::string& option, const std::string& text);

// Options whose values are parsed by the functions above. `hidden` are old spellings that set the
// same value and are not listed by --help; giving two spellings of one option is a usage error.
CLI::Option* add_text(CLI::App& sub, const std::string& name, std::string& target,
                      const std::string& description, const std::vector<std::string>& hidden = {});
CLI::Option* add_number(CLI::App& sub, const std::string& name, double& target,
                        const std::string& description, const std::vector<std::string>& hidden = {});
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
