// The one file that includes CLI11 (docs/command-line.md#one-file-includes-cli11): the parser behind
// command.hpp's Args and Opt, the options whose values options.hpp parses, and the project's message
// for everything CLI11 refuses.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <climits>
#include <map>
#include <memory>

#include "command.hpp"
#include "diescope/core/version.hpp"
#include "options.hpp"

namespace diescope::cli {

namespace {

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

}  // namespace

// ---- Opt and Args: the parser as the command files see it ------------------------------------------

Opt& Opt::type_name(const std::string& name) {
  option_->type_name(name);
  return *this;
}
Opt& Opt::required() {
  option_->required();
  return *this;
}
Opt& Opt::choices(const std::vector<std::string>& words) {
  option_->check(CLI::IsMember(words));
  return *this;
}
Opt& Opt::show_default() {
  option_->capture_default_str();
  return *this;
}
Opt& Opt::one_value_each() {
  option_->allow_extra_args(false);
  return *this;
}
Opt& Opt::list(char delimiter) {
  option_->delimiter(delimiter);
  return *this;
}
Opt& Opt::check(const std::function<std::string(const std::string&)>& why_not) {
  option_->check(CLI::Validator([why_not](std::string& value) { return why_not(value); }, ""));
  return *this;
}
Opt& Opt::group(const std::string& name) {
  option_->group(name);
  return *this;
}
bool Opt::given() const {
  return option_->count() > 0;
}

Opt Args::option(const std::string& name, std::string& target, const std::string& help) {
  return Opt(app_->add_option(name, target, help));
}
Opt Args::option(const std::string& name, std::vector<std::string>& target, const std::string& help) {
  return Opt(app_->add_option(name, target, help));
}
Opt Args::option(const std::string& name, double& target, const std::string& help) {
  return Opt(app_->add_option(name, target, help));
}
Opt Args::flag(const std::string& name, bool& target, const std::string& help) {
  return Opt(app_->add_flag(name, target, help));
}
Opt Args::text(const std::string& name, std::string& target, const std::string& help,
               const std::vector<std::string>& hidden) {
  return Opt(add_text(*app_, name, target, help, hidden));
}
Opt Args::number(const std::string& name, double& target, const std::string& help,
                 const std::vector<std::string>& hidden) {
  return Opt(add_number(*app_, name, target, help, hidden));
}
Opt Args::number(const NumberRule& rule, double& target, std::string_view help,
                 const std::vector<std::string>& hidden) {
  target = rule.fallback;
  return Opt(add_number(*app_, std::string(rule.name), target,
                        rule_text(rule, help.empty() ? rule.help : help), hidden));
}
Opt Args::whole(const std::string& name, int& target, const std::string& help) {
  return Opt(add_whole(*app_, name, target, help));
}
Opt Args::gpu_list(std::vector<int>& target, const std::string& help) {
  return Opt(add_gpu_list(*app_, target, help));
}
Opt Args::one_gpu(std::optional<int>& target, const std::string& help) {
  return Opt(add_one_gpu(*app_, target, help));
}
void Args::footer(const std::string& text) {
  app_->footer(text);
}
Args Args::subcommand(const std::string& name, const std::string& description) {
  return Args(*app_->add_subcommand(name, description));
}
void Args::require_subcommand() {
  app_->require_subcommand(1, 1);
}
void Args::pass_through() {
  app_->prefix_command();
}
std::vector<std::string> Args::remaining() const {
  return app_->remaining();
}
bool Args::parsed() const {
  return app_->parsed();
}

std::vector<Command>& command_registry() {
  static std::vector<Command> commands;
  return commands;
}

int run_command_line(int argc, char** argv) {
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
    actions[sub] = command.setup(Args(*sub));
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

}  // namespace diescope::cli
