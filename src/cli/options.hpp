// The command line's options module (CONTRIBUTING.md, "Command-line options"): the options several
// commands share, each with its name, default, range and help written once here
// (docs/command-line.md#shared-options), and the value parsers that give every bad value the
// project's own message (cause, fix, exit 2). No CLI11 here: command_line.cpp is the one file that
// includes it.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "diescope/core/error.hpp"
#include "diescope/recording/records.hpp"

namespace diescope::cli {

// A number option several commands take. `help` and `fix` may name {default}, {min} and {max}, which
// are filled in from the rule, so the figures are written once.
struct NumberRule {
  std::string_view name;  // "--interval-ms"
  double fallback;        // the default
  double min;             // the range, both ends included
  double max;
  bool zero_is_off;       // 0 is taken too: the thing it paces is off
  std::string_view help;  // --help's words, where a command has none of its own
  std::string_view fix;   // the refusal's fix
};

// docs/command-line.md#shared-options
inline constexpr NumberRule kIntervalMs{"--interval-ms",
                                        recording::kDefaultIntervalMs,
                                        0.1,
                                        10'000,
                                        false,
                                        "chip counter sample interval in ms (default {default})",
                                        "give a sample interval from {min} to {max} ms (default {default})"};
inline constexpr NumberRule kDrainMs{"--drain-ms",
                                     recording::kDefaultDrainMs,
                                     10,
                                     60'000,
                                     false,
                                     "how often the counter buffer is decoded, in ms (default {default})",
                                     "give a drain period from {min} to {max} ms (default {default})"};
inline constexpr NumberRule kHostIntervalMs{
    "--host-interval-ms",
    recording::kDefaultHostIntervalMs,
    1,
    60'000,
    true,
    "how often the host probes read CPU, memory, disks and the command's processes, in ms; 0: none "
    "(default {default})",
    "give a host probe interval from {min} to {max} ms, or 0 for no host probes (default {default})"};

// `text` with {default}, {min} and {max} filled in from `rule` (numbers in their shortest form).
std::string rule_text(const NumberRule& rule, std::string_view text);
// Whether `value` is one the rule takes: within [min, max], or 0 where 0 means off. NaN never is.
bool in_range(const NumberRule& rule, double value);
// Throws UsageError "NAME VALUE is out of range" with the rule's fix unless in_range.
void check_range(const NumberRule& rule, double value);

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

// `--duty ON/PERIOD` (docs/method.md#duty-cycles-in-run): two numbers of milliseconds, each part of the
// period at least `poll_ms` (run's loop switches the counters at its ticks). Returns {on, period}.
std::pair<double, double> parse_duty(const std::string& text, double poll_ms);

// Text from the command line, quoted as given but with control bytes shown as \xHH.
std::string in_quotes(const std::string& text);

}  // namespace diescope::cli
