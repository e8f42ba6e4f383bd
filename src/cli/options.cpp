// docs/command-line.md#shared-options
#include "options.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "diescope/core/edit_distance.hpp"

namespace diescope::cli {

std::string rule_text(const NumberRule& rule, std::string_view text) {
  return fmt::format(fmt::runtime(text), fmt::arg("default", rule.fallback), fmt::arg("min", rule.min),
                     fmt::arg("max", rule.max));
}

bool in_range(const NumberRule& rule, double value) {
  return (rule.zero_is_off && value == 0) || (value >= rule.min && value <= rule.max);
}

void check_range(const NumberRule& rule, double value) {
  if (!in_range(rule, value))
    throw core::UsageError(fmt::format("{} {:g} is out of range", rule.name, value),
                           rule_text(rule, rule.fix));
}

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

// `--duty ON/PERIOD` (docs/method.md#duty-cycles-in-run): two numbers of milliseconds. run's loop
// switches the counters at its 100 ms ticks, so each part of the period must be at least one tick.
std::pair<double, double> parse_duty(const std::string& text, double poll_ms) {
  const std::string example = "--duty 2000/10000 (counters on 2 s of every 10 s)";
  const auto slash = text.find('/');
  if (slash == std::string::npos)
    throw core::UsageError("--duty '" + text + "' is not ON/PERIOD",
                           "give two numbers of ms, e.g. " + example);
  const double on = parse_number("--duty's ON", text.substr(0, slash), example);
  const double period = parse_number("--duty's PERIOD", text.substr(slash + 1), example);
  if (!(on >= poll_ms))
    throw core::UsageError(
        fmt::format("--duty {}: the counters' on-time {:g} ms is shorter than run's {:g} ms "
                    "loop, which switches them",
                    text, on, poll_ms),
        "give an on-time of at least " + fmt::format("{:g}", poll_ms) + " ms, e.g. " + example);
  if (!(period - on >= poll_ms))
    throw core::UsageError(
        fmt::format("--duty {}: the period leaves the counters off for {:g} ms, under run's {:g} ms loop",
                    text, period - on, poll_ms),
        "make the period at least " + fmt::format("{:g}", poll_ms) +
            " ms longer than the on-time, or leave --duty out for counters on throughout");
  return {on, period};
}

}  // namespace diescope::cli
