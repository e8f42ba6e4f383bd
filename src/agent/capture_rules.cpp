// The capture rules file and its conditions (docs/agent.md#triggered-captures).
#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "diescope/agent/capture.hpp"
#include "diescope/agent/store.hpp"
#include "diescope/core/edit_distance.hpp"
#include "diescope/core/error.hpp"

namespace diescope::agent {

using nlohmann::json;

std::string_view to_string(CaptureCondition condition) {
  switch (condition) {
    case CaptureCondition::gap_over:
      return "gap_over";
    case CaptureCondition::die_under_gpu_over:
      return "die_under_gpu_over";
    case CaptureCondition::http:
      return "http";
    case CaptureCondition::signal:
      return "sigusr1";
  }
  return "?";
}

std::string_view to_string(GapMeasure measure) {
  switch (measure) {
    case GapMeasure::gap:
      return "gap";
    case GapMeasure::stranded:
      return "stranded";
    case GapMeasure::idle:
      return "idle";
  }
  return "?";
}

std::string_view to_string(CaptureOutcome outcome) {
  switch (outcome) {
    case CaptureOutcome::written:
      return "written";
    case CaptureOutcome::cut_short:
      return "cut_short";
    case CaptureOutcome::disk_full:
      return "disk_full";
    case CaptureOutcome::rate_limited:
      return "rate_limited";
    case CaptureOutcome::busy:
      return "busy";
    case CaptureOutcome::failed:
      return "failed";
  }
  return "?";
}

bool CaptureRules::has(CaptureCondition condition) const {
  return std::any_of(rules.begin(), rules.end(),
                     [&](const CaptureRule& r) { return r.condition == condition; });
}

namespace {

constexpr const char* kFix = "see docs/agent.md#triggered-captures for the rules file's fields";
constexpr double kMinIntervalMs = 0.1;
constexpr double kMaxIntervalMs = 10000;

// The shortest chip interval shown to hold for 60 s, by GPU model (docs/agent.md#what-a-capture-holds):
// every sample received, no gap, no overflow (bench/results/run/2026-11-29-h200-cpu-cost-final-table/).
struct HeldInterval {
  std::string_view model;
  double interval_ms;
};
constexpr HeldInterval kHeldIntervals[] = {{"NVIDIA H200", 1.0}};

int line_of_offset(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  return 1 +
         static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
}

// The line of the first `"key"` at or after `from` (nlohmann keeps no positions once parsed).
int line_of_key(std::string_view text, const std::string& key, std::size_t from) {
  const std::string quoted = "\"" + key + "\"";
  std::size_t at = text.find(quoted, std::min(from, text.size()));
  if (at == std::string_view::npos) at = text.find(quoted);
  return at == std::string_view::npos ? 0 : line_of_offset(text, at);
}

struct Ctx {
  std::string_view text;
  const std::string& path;
  [[noreturn]] void fail(int line, const std::string& what, const std::string& fix = kFix) const {
    const std::string where = line > 0 ? fmt::format("{}:{}", path, line) : path;
    throw core::UsageError(fmt::format("capture rules {}: {}", where, what), fix);
  }
};

void check_fields(const Ctx& c, const json& obj, const std::set<std::string>& known, const std::string& what,
                  std::size_t from) {
  for (const auto& [key, value] : obj.items()) {
    if (known.count(key)) continue;
    std::string best;
    std::size_t best_d = 3;
    for (const std::string& k : known) {
      const std::size_t d = core::edit_distance(key, k);
      if (d < best_d) best_d = d, best = k;
    }
    std::string fields;
    for (const std::string& k : known) fields += (fields.empty() ? "" : ", ") + k;
    c.fail(line_of_key(c.text, key, from), fmt::format("unknown field \"{}\" in {}", key, what),
           best.empty() ? fmt::format("the fields of {} are: {}", what, fields)
                        : fmt::format("did you mean \"{}\"? The fields of {} are: {}", best, what, fields));
  }
}

double number(const Ctx& c, const json& obj, const std::string& key, double fallback, double lo, double hi,
              std::size_t from, bool required = false) {
  if (!obj.contains(key)) {
    if (required)
      c.fail(line_of_key(c.text, "when", from), fmt::format("the rule needs \"{}\"", key),
             fmt::format("add \"{}\": a number from {:g} to {:g}", key, lo, hi));
    return fallback;
  }
  const json& v = obj.at(key);
  if (!v.is_number())
    c.fail(line_of_key(c.text, key, from), fmt::format("\"{}\" must be a number, not {}", key, v.dump()));
  const double d = v.get<double>();
  if (!(d >= lo && d <= hi))
    c.fail(line_of_key(c.text, key, from),
           fmt::format("\"{}\" is {:g}, outside {:g} to {:g}", key, d, lo, hi),
           fmt::format("give \"{}\" a value from {:g} to {:g}", key, lo, hi));
  return d;
}

std::string text_field(const Ctx& c, const json& obj, const std::string& key, std::size_t from) {
  if (!obj.contains(key)) return {};
  const json& v = obj.at(key);
  if (!v.is_string())
    c.fail(line_of_key(c.text, key, from), fmt::format("\"{}\" must be a string, not {}", key, v.dump()));
  return v.get<std::string>();
}

}  // namespace

CaptureRules parse_capture_rules(std::string_view text, const std::string& path) {
  const Ctx c{text, path};
  json doc;
  try {
    // Comments are allowed: an operator's rules file explains itself.
    doc = json::parse(text.begin(), text.end(), nullptr, true, true);
  } catch (const json::parse_error& e) {
    c.fail(
        line_of_offset(text, e.byte > 0 ? e.byte - 1 : 0),
        fmt::format("not valid JSON ({})", std::string(e.what()).substr(std::string(e.what()).find(':') + 2)),
        "fix the JSON at that line (a missing comma or quote is the usual cause); " + std::string(kFix));
  }
  if (!doc.is_object()) c.fail(1, "the file must hold one JSON object with \"rules\"");
  check_fields(c, doc, {"captures", "rules"}, "the file", 0);
  CaptureRules out;
  if (doc.contains("captures")) {
    const json& s = doc.at("captures");
    const std::size_t from = text.find("\"captures\"");
    if (!s.is_object()) c.fail(line_of_key(text, "captures", 0), "\"captures\" must be an object");
    check_fields(c, s,
                 {"folder", "quota_mb", "min_interval_s", "token_file", "allow_remote", "host_interval_ms"},
                 "\"captures\"", from);
    out.settings.folder = text_field(c, s, "folder", from);
    out.settings.quota_mb = number(c, s, "quota_mb", out.settings.quota_mb, 0.01, 1e9, from);
    out.settings.min_interval_s = number(c, s, "min_interval_s", out.settings.min_interval_s, 0, 1e9, from);
    out.settings.token_file = text_field(c, s, "token_file", from);
    out.settings.host_interval_ms =
        number(c, s, "host_interval_ms", out.settings.host_interval_ms, 1, 60000, from);
    if (s.contains("allow_remote")) {
      if (!s.at("allow_remote").is_boolean())
        c.fail(line_of_key(text, "allow_remote", from), "\"allow_remote\" must be true or false");
      out.settings.allow_remote = s.at("allow_remote").get<bool>();
    }
  }
  if (!doc.contains("rules") || !doc.at("rules").is_array() || doc.at("rules").empty())
    c.fail(line_of_key(text, "rules", 0), "the file needs \"rules\": a list of at least one rule");
  std::size_t from = text.find("\"rules\"");
  std::set<std::string> names;
  for (const json& r : doc.at("rules")) {
    // Each rule is found in the text by its opening brace after the previous one's.
    from = text.find('{', from + 1);
    const int line = line_of_offset(text, from);
    if (!r.is_object()) c.fail(line, "each rule must be an object");
    check_fields(c, r,
                 {"name", "when", "of", "points", "die_util_under", "gpu_util_over", "for_s", "capture_s",
                  "gpus", "interval_ms"},
                 "a rule", from);
    CaptureRule rule;
    rule.line = line;
    rule.name = text_field(c, r, "name", from);
    if (rule.name.empty())
      c.fail(line, "a rule needs a \"name\"", "add \"name\": \"gap-high\" (letters, digits, - and _)");
    if (!std::all_of(rule.name.begin(), rule.name.end(), [](char ch) {
          return std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_';
        }))
      c.fail(line_of_key(text, "name", from),
             fmt::format("rule name \"{}\" may hold only letters, digits, - and _", rule.name),
             "rename it: the name is a Prometheus label and part of the capture folder's name");
    if (!names.insert(rule.name).second)
      c.fail(line, fmt::format("two rules are named \"{}\"", rule.name), "give each rule its own name");
    const std::string when = text_field(c, r, "when", from);
    bool known = false;
    for (CaptureCondition k : {CaptureCondition::gap_over, CaptureCondition::die_under_gpu_over,
                               CaptureCondition::http, CaptureCondition::signal})
      if (when == to_string(k)) rule.condition = k, known = true;
    if (!known)
      c.fail(when.empty() ? line : line_of_key(text, "when", from),
             when.empty() ? "a rule needs \"when\"" : fmt::format("unknown condition \"when\": \"{}\"", when),
             "\"when\" is one of gap_over, die_under_gpu_over, http, sigusr1");
    const bool window = rule.condition == CaptureCondition::gap_over ||
                        rule.condition == CaptureCondition::die_under_gpu_over;
    auto only_for = [&](const char* key, bool allowed, const char* which) {
      if (!allowed && r.contains(key))
        c.fail(line_of_key(text, key, from),
               fmt::format("\"{}\" is for {} rules, not \"{}\"", key, which, when),
               fmt::format("drop \"{}\" from rule \"{}\"", key, rule.name));
    };
    only_for("of", rule.condition == CaptureCondition::gap_over, "gap_over");
    only_for("points", rule.condition == CaptureCondition::gap_over, "gap_over");
    only_for("die_util_under", rule.condition == CaptureCondition::die_under_gpu_over, "die_under_gpu_over");
    only_for("gpu_util_over", rule.condition == CaptureCondition::die_under_gpu_over, "die_under_gpu_over");
    only_for("for_s", window, "gap_over and die_under_gpu_over");
    if (rule.condition == CaptureCondition::gap_over) {
      const std::string of = r.contains("of") ? text_field(c, r, "of", from) : "gap";
      bool ok = false;
      for (GapMeasure m : {GapMeasure::gap, GapMeasure::stranded, GapMeasure::idle})
        if (of == to_string(m)) rule.of = m, ok = true;
      if (!ok)
        c.fail(line_of_key(text, "of", from), fmt::format("unknown \"of\": \"{}\"", of),
               "\"of\" is gap (GPU-Util minus DIE-Util, the default), stranded (100 minus DIE-Util) or idle "
               "(100 minus GPU-Util)");
      rule.points = number(c, r, "points", 0, -100, 100, from, true);
    }
    if (rule.condition == CaptureCondition::die_under_gpu_over) {
      rule.die_util_under = number(c, r, "die_util_under", 0, 0, 100, from, true);
      rule.gpu_util_over = number(c, r, "gpu_util_over", 0, 0, 100, from, true);
    }
    if (window) rule.for_s = number(c, r, "for_s", 0, 0, 7 * 86400, from);
    rule.capture_s = number(c, r, "capture_s", 0, 1, 3600, from, true);
    // The range --interval-ms takes (docs/command-line.md#shared-options); 0 (absent): the GPU's default.
    rule.interval_ms = number(c, r, "interval_ms", 0, kMinIntervalMs, kMaxIntervalMs, from);
    if (r.contains("gpus")) {
      const json& g = r.at("gpus");
      if (!g.is_array() || !std::all_of(g.begin(), g.end(), [](const json& v) {
            return v.is_number_integer() && v.get<int>() >= 0;
          }))
        c.fail(line_of_key(text, "gpus", from), "\"gpus\" must be a list of GPU indexes, e.g. [0, 2]");
      rule.gpus = g.get<std::vector<int>>();
    }
    out.rules.push_back(std::move(rule));
  }
  if (out.has(CaptureCondition::http) && out.settings.token_file.empty())
    c.fail(line_of_key(text, "http", 0), "an http rule needs \"captures\": {\"token_file\": PATH}",
           "write a secret to a file only the agent's user can read and name it in \"token_file\"");
  return out;
}

CaptureRules read_capture_rules(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in)
    throw core::UsageError(fmt::format("cannot read the capture rules file {}", path.string()),
                           "check the path given to --rules and that the agent's user can read it");
  std::stringstream ss;
  ss << in.rdbuf();
  CaptureRules rules = parse_capture_rules(ss.str(), path.string());
  // Beside the record store by default (docs/agent.md#rules).
  if (rules.settings.folder.empty()) rules.settings.folder = default_store_path().parent_path() / "captures";
  if (!rules.settings.token_file.empty() && rules.has(CaptureCondition::http)) {
    std::ifstream t(rules.settings.token_file);
    if (!t)
      throw core::UsageError(
          fmt::format("cannot read the capture token file {}", rules.settings.token_file.string()),
          "create it with a secret on one line, readable by the agent's user only");
    std::getline(t, rules.token);
    while (!rules.token.empty() && std::isspace(static_cast<unsigned char>(rules.token.back())))
      rules.token.pop_back();
    if (rules.token.size() < 16)
      throw core::UsageError(fmt::format("the capture token in {} is {} characters; at least 16 are needed",
                                         rules.settings.token_file.string(), rules.token.size()),
                             "write a longer secret, e.g. head -c 24 /dev/urandom | base64 > " +
                                 rules.settings.token_file.string());
  }
  return rules;
}

void check_rule_gpus(const CaptureRules& rules, const std::vector<int>& monitored) {
  std::string list;
  for (int g : monitored) list += (list.empty() ? "" : ", ") + std::to_string(g);
  for (const CaptureRule& r : rules.rules)
    for (int g : r.gpus)
      if (std::find(monitored.begin(), monitored.end(), g) == monitored.end())
        throw core::UsageError(fmt::format("capture rule \"{}\" (line {}) watches GPU {}, which this agent "
                                           "does not monitor (it monitors {})",
                                           r.name, r.line, g, list.empty() ? "none" : list),
                               "drop it from the rule's \"gpus\", or monitor it (--gpus)");
}

double default_capture_interval_ms(std::string_view gpu_model, double session_ms) {
  for (const HeldInterval& h : kHeldIntervals)
    if (h.model == gpu_model) return std::min(h.interval_ms, session_ms);
  return session_ms;
}

bool token_matches(std::string_view given, std::string_view expected) {
  // Every byte of the expected token is compared whatever `given` holds, and the result is folded
  // with OR, so the time does not say how long a prefix was right.
  unsigned char diff = given.size() == expected.size() ? 0 : 1;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const unsigned char g = i < given.size() ? static_cast<unsigned char>(given[i]) : 0;
    diff |= static_cast<unsigned char>(g ^ static_cast<unsigned char>(expected[i]));
  }
  return diff == 0 && !expected.empty();
}

RuleEvaluator::RuleEvaluator(std::vector<CaptureRule> rules, std::size_t gpus) : rules_(std::move(rules)) {
  since_.assign(rules_.size(), std::vector<std::optional<recording::TimeNs>>(gpus));
}

bool RuleEvaluator::holds(const CaptureRule& rule, const WindowFigures& w) {
  switch (rule.condition) {
    case CaptureCondition::gap_over: {
      const double v = rule.of == GapMeasure::gap        ? w.gap_pct
                       : rule.of == GapMeasure::stranded ? w.stranded_pct
                                                         : w.stranded_idle_pct;
      return std::isfinite(v) && v > rule.points;
    }
    case CaptureCondition::die_under_gpu_over:
      return std::isfinite(w.die_util_pct) && std::isfinite(w.gpu_util_pct) &&
             w.die_util_pct < rule.die_util_under && w.gpu_util_pct > rule.gpu_util_over;
    default:
      return false;
  }
}

std::vector<std::size_t> RuleEvaluator::observe(std::size_t gpu, int gpu_index, const WindowFigures& w) {
  std::vector<std::size_t> fire;
  for (std::size_t r = 0; r < rules_.size(); ++r) {
    const CaptureRule& rule = rules_[r];
    if (rule.condition != CaptureCondition::gap_over &&
        rule.condition != CaptureCondition::die_under_gpu_over)
      continue;
    if (!rule.gpus.empty() && std::find(rule.gpus.begin(), rule.gpus.end(), gpu_index) == rule.gpus.end())
      continue;
    auto& since = since_[r].at(gpu);
    if (!holds(rule, w)) {
      since.reset();  // a window that breaks the condition starts the count again
      continue;
    }
    if (!since) since = w.start_ns;
    // Held from the first window of the streak to the end of this one (docs/agent.md#rules).
    if (static_cast<double>(w.end_ns - *since) >= rule.for_s * 1e9) {
      fire.push_back(r);
      since.reset();  // fired: the next capture needs the condition to hold for_s again
    }
  }
  return fire;
}

}  // namespace diescope::agent
