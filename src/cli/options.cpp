#include "options.hpp"

#include <fmt/core.h>

#include "diescope/core/edit_distance.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <memory>

namespace diescope::cli {

namespace {

// Text from the command line, quoted as given but with control bytes shown as \xHH.
std::string in_quotes(const std::string& text) {
  std::string out = "'";
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f)
      out += fmt::format("\\x{:02x}", byte);
    else
      out += c;
  }
  return out + "'";
}

bool looks_like_option(const std::string& token) {
  // "-" alone is a value (standard input), and so is a negative number.
  if (token.size() < 2 || token[0] != '-') return false;
  return !(std::isdigit(static_cast<unsigned char>(token[1])) || token[1] == '.');
}

std::string help_fix(const std::string& command) {
  return command.empty() ? "`diescope --help` lists the commands and options"
                         : "`diescope " + command + " --help` lists its options";
}

// Every name --help shows for a command: its options' long and short names and its positionals.
std::vector<std::string> visible_option_names(const CLI::App& sub) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : sub.get_options()) {
    if (opt->get_group().empty()) continue;
    for (const auto& l : opt->get_lnames()) names.push_back("--" + l);
  }
  return names;
}

// The first option in a command's arguments that it does not have (before "--").
std::optional<std::string> unknown_option(const CLI::App& sub, const std::vector<std::string>& args) {
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& token = args[i];
    if (token == "--") break;
    if (!looks_like_option(token)) continue;
    const std::string name = token.substr(0, token.find('='));
    if (sub.get_option_no_throw(name) == nullptr) return name;
  }
  return std::nullopt;
}

// CLI11 names the option first in most of its messages ("--gpus: ..."); the text before ": ".
std::string leading_name(const std::string& message) {
  const auto colon = message.find(": ");
  return colon == std::string::npos ? std::string() : message.substr(0, colon);
}

}  // namespace

std::string closest_name(const std::string& given, const std::vector<std::string>& names) {
  std::string best;
  std::size_t best_distance = SIZE_MAX;
  for (const auto& name : names) {
    const std::size_t d = core::edit_distance(given, name);
    if (d < best_distance) {
      best_distance = d;
      best = name;
    }
  }
  if (best.empty()) return {};
  const std::size_t allowed = std::max<std::size_t>(1, std::max(given.size(), best.size()) / 3);
  // A prefix of a name ("--versio", "rep") is a likely typo however short it is.
  const bool prefix = given.size() >= 3 && best.rfind(given, 0) == 0;
  return best_distance <= allowed || prefix ? best : std::string();
}

std::string did_you_mean(const std::string& given, const std::vector<std::string>& names) {
  const std::string best = closest_name(given, names);
  return best.empty() ? std::string() : "; did you mean '" + best + "'?";
}

double parse_number(const std::string& option, const std::string& text, const std::string& example) {
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(value))
    throw core::UsageError(option + " " + in_quotes(text) + " is not a number",
                           "give a number, e.g. " + example);
  return value;
}

long parse_whole(const std::string& option, const std::string& text, const std::string& example) {
  errno = 0;
  char* end = nullptr;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE)
    throw core::UsageError(option + " " + in_quotes(text) + " is not a whole number",
                           "give one, e.g. " + example);
  return value;
}

int parse_gpu_index(const std::string& option, const std::string& text) {
  const std::string fix =
      "give a GPU index as nvidia-smi numbers them, from 0, e.g. --gpus 0 (a list, --gpus 0,1, where the "
      "command takes several)";
  errno = 0;
  char* end = nullptr;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE || value < 0 || value > INT_MAX)
    throw core::UsageError(option + " " + in_quotes(text) + " is not a GPU index", fix);
  return static_cast<int>(value);
}

namespace {

// One option under several spellings: the first spelling given is remembered, and a second one is a
// usage error (one value, one place). Checked here rather than with CLI11's excludes, which --help
// would print.
class Spellings {
 public:
  void given(const std::string& name) const {
    if (!first_->empty() && *first_ != name)
      throw core::UsageError(*first_ + " and " + name + " are two spellings of one option", "give it once");
    *first_ = name;
  }

 private:
  std::shared_ptr<std::string> first_ = std::make_shared<std::string>();
};

// Hidden aliases of `primary`: they set the same value and --help does not list them.
void add_hidden_aliases(CLI::App& sub, const Spellings& spellings, const std::vector<std::string>& hidden,
                        const std::function<void(const std::string&, const std::string&)>& set) {
  for (const auto& alias : hidden) {
    sub.add_option_function<std::string>(
           alias,
           [set, alias, spellings](const std::string& value) mutable {
             spellings.given(alias);
             set(alias, value);
           },
           "")
        ->group("");
  }
}

}  // namespace

CLI::Option* add_text(CLI::App& sub, const std::string& name, std::string& target,
                      const std::string& description, const std::vector<std::string>& hidden) {
  Spellings spellings;
  CLI::Option* opt = sub.add_option_function<std::string>(
      name,
      [&target, name, spellings](const std::string& v) mutable {
        spellings.given(name);
        target = v;
      },
      description);
  add_hidden_aliases(sub, spellings, hidden,
                     [&target](const std::string&, const std::string& v) { target = v; });
  return opt;
}

CLI::Option* add_number(CLI::App& sub, const std::string& name, double& target,
                        const std::string& description, const std::vector<std::string>& hidden) {
  const std::string example = name + " 10";
  Spellings spellings;
  CLI::Option* opt = sub.add_option_function<std::string>(
      name,
      [&target, name, example, spellings](const std::string& v) mutable {
        spellings.given(name);
        target = parse_number(name, v, example);
      },
      description);
  opt->type_name("NUMBER");
  add_hidden_aliases(sub, spellings, hidden,
                     [&target, example](const std::string& alias, const std::string& v) {
                       target = parse_number(alias, v, example);
                     });
  return opt;
}

CLI::Option* add_whole(CLI::App& sub, const std::string& name, int& target, const std::string& description) {
  CLI::Option* opt = sub.add_option_function<std::string>(
      name,
      [&target, name](const std::string& v) {
        const long value = parse_whole(name, v, name + " 5");
        if (value < INT_MIN || value > INT_MAX)
          throw core::UsageError(name + " " + v + " is out of range",
                                 "give a smaller number, e.g. " + name + " 5");
        target = static_cast<int>(value);
      },
      description);
  opt->type_name("N");
  return opt;
}

CLI::Option* add_gpu_list(CLI::App& sub, std::vector<int>& target, const std::string& description) {
  CLI::Option* opt = sub.add_option_function<std::vector<std::string>>(
      "--gpus",
      [&target](const std::vector<std::string>& values) {
        target.clear();
        for (const auto& v : values) target.push_back(parse_gpu_index("--gpus", v));
      },
      description);
  opt->delimiter(',')->allow_extra_args(false)->type_name("LIST");
  return opt;
}

CLI::Option* add_one_gpu(CLI::App& sub, std::optional<int>& target, const std::string& description) {
  // One value, so --help shows no "..."; a comma list is split here only to say it names several.
  Spellings spellings;
  auto set = [&target, spellings](const std::string& name, const std::string& value) {
    spellings.given(name);
    const auto gpus = static_cast<std::size_t>(std::count(value.begin(), value.end(), ',')) + 1;
    if (gpus != 1)
      throw core::UsageError(name + " names " + std::to_string(gpus) + " GPUs; this command takes one",
                             "give one GPU index, e.g. --gpus 0, and run the command once per GPU");
    target = parse_gpu_index(name, value);
  };
  CLI::Option* opt = sub.add_option_function<std::string>(
      "--gpus", [set](const std::string& v) { set("--gpus", v); }, description);
  opt->type_name("N");
  for (const std::string alias : {"--gpu", "--device"})
    sub.add_option_function<std::string>(
           alias, [set, alias](const std::string& v) { set(alias, v); }, "")
        ->group("");
  return opt;
}

void check_command_name(const CLI::App& app, const std::vector<std::string>& args) {
  std::vector<std::string> commands;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    commands.push_back(sub->get_name());
  std::string listed;
  for (const auto& c : commands) listed += (listed.empty() ? "" : ", ") + c;
  if (args.empty())
    throw core::UsageError("name a command: " + listed, "e.g. `diescope run -- CMD`; " + help_fix(""));
  const std::string& first = args.front();
  if (std::find(commands.begin(), commands.end(), first) != commands.end()) return;
  if (first == "--help" || first == "-h" || first == "--version") return;
  if (looks_like_option(first)) {
    const std::string name = first.substr(0, first.find('='));
    throw core::UsageError(
        "unknown option " + in_quotes(name) + did_you_mean(name, {"--help", "--version"}),
        "options other than --help and --version follow the command, e.g. `diescope report "
        "--help`; " +
            help_fix(""));
  }
  throw core::UsageError("unknown command " + in_quotes(first) + did_you_mean(first, commands),
                         "the commands are " + listed + "; " + help_fix(""));
}

core::Error usage_error_for(CLI::App& app, const CLI::ParseError& error,
                            const std::vector<std::string>& args) {
  // check_command_name ran first, so the first argument names the command.
  CLI::App* sub = nullptr;
  for (CLI::App* candidate : app.get_subcommands([](const CLI::App*) { return true; }))
    if (!args.empty() && candidate->get_name() == args.front()) sub = candidate;
  const std::string command = sub ? sub->get_name() : std::string();
  const std::string who = command.empty() ? "diescope" : command;
  const std::string what = error.what();
  const std::string fix = help_fix(command);

  if (dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr) {
    if (sub) {
      if (auto name = unknown_option(*sub, args))
        return core::UsageError(
            who + ": unknown option " + in_quotes(*name) + did_you_mean(*name, visible_option_names(*sub)),
            fix);
    }
    const auto colon = what.find(": ");
    const std::string extra = colon == std::string::npos ? what : what.substr(colon + 2);
    return core::UsageError(who + ": unexpected argument " + in_quotes(extra), fix);
  }
  if (dynamic_cast<const CLI::RequiredError*>(&error) != nullptr) {
    // A command with its own commands (`roofline plot`): a mistyped one is named, with the closest.
    const auto nested =
        sub ? sub->get_subcommands([](const CLI::App*) { return true; }) : std::vector<CLI::App*>{};
    if (!nested.empty() && args.size() > 1 && !looks_like_option(args[1])) {
      std::vector<std::string> names;
      std::string listed;
      for (const CLI::App* n : nested) {
        names.push_back(n->get_name());
        listed += (listed.empty() ? "" : ", ") + n->get_name();
      }
      return core::UsageError(who + ": unknown command " + in_quotes(args[1]) + did_you_mean(args[1], names),
                              "the " + who + " commands are " + listed + "; " + fix);
    }
    const std::string name = what.substr(0, what.find(" is required"));
    return core::UsageError(who + ": " + name + " is missing", fix);
  }
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&error) != nullptr) {
    const std::string name = leading_name(what);
    if (what.find("missing") != std::string::npos || what.find("at least") != std::string::npos)
      return core::UsageError(who + ": " + name + " needs a value", fix);
    return core::UsageError(who + ": " + name + " was given more than once or with too many values",
                            "give it once; " + fix);
  }
  return core::UsageError(who + ": " + what, fix);
}

}  // namespace diescope::cli
