#include <charconv>
#include <cmath>
#include <csignal>
#include <set>

#include <nlohmann/json.hpp>

#include "diescope/core/signals.hpp"
#include "diescope/core/version.hpp"
#include "diescope/recording/format.hpp"
#include "format_internal.hpp"

namespace diescope::recording {

namespace {

struct ReasonName {
  std::uint64_t bit;
  std::string_view name;
};
// NVML's clock-event reasons with their bit values (records.hpp ThrottleBit).
constexpr std::array<ReasonName, 9> kReasonNames = {{
    {throttle_gpu_idle, "gpu_idle"},
    {throttle_applications_clocks, "applications_clocks"},
    {throttle_sw_power_cap, "sw_power_cap"},
    {throttle_hw_slowdown, "hw_slowdown"},
    {throttle_sync_boost, "sync_boost"},
    {throttle_sw_thermal, "sw_thermal"},
    {throttle_hw_thermal, "hw_thermal"},
    {throttle_hw_power_brake, "hw_power_brake"},
    {throttle_display_clocks, "display_clocks"},
}};

}  // namespace

std::string_view throttle_reason_name(std::uint64_t bit) {
  for (const ReasonName& r : kReasonNames)
    if (r.bit == bit) return r.name;
  return {};
}

std::optional<std::uint64_t> throttle_reason_bit(std::string_view name) {
  for (const ReasonName& r : kReasonNames)
    if (r.name == name) return r.bit;
  return std::nullopt;
}

std::vector<std::string> throttle_reason_names(std::uint64_t mask) {
  std::vector<std::string> names;
  std::uint64_t unnamed = 0;
  for (int i = 0; i < 64; ++i) {
    const std::uint64_t bit = std::uint64_t{1} << i;
    if ((mask & bit) == 0) continue;
    const std::string_view name = throttle_reason_name(bit);
    if (name.empty())
      unnamed |= bit;
    else
      names.emplace_back(name);
  }
  if (unnamed != 0) {
    char hex[24] = "0x";
    const auto res = std::to_chars(hex + 2, hex + sizeof hex, unnamed, 16);
    names.emplace_back(hex, res.ptr);
  }
  return names;
}

namespace {
constexpr std::string_view kExited = "exited";
constexpr std::string_view kPeriodEnd = "period end";
constexpr std::string_view kSignalPrefix = "signal ";
}  // namespace

RunEnding parse_run_ending(std::string_view text) {
  if (text.empty()) return {};
  if (text == kExited) return RunEnding::exit();
  if (text == kPeriodEnd) return RunEnding::period_end();
  if (text.starts_with(kSignalPrefix)) {
    // Only a name run_ending_text() would print back the same (an alias such as SIGIOT is other text).
    const std::string_view name = text.substr(kSignalPrefix.size());
    for (int number = 1; number < NSIG; ++number)
      if (core::signal_name(number) == name) return RunEnding::killed_by(number);
  }
  return {RunEnding::Way::other, 0, std::string(text)};
}

std::string_view holder_role_text(HolderRole role) {
  switch (role) {
    case HolderRole::command:
      return "command";
    case HolderRole::diescope:
      return "diescope";
    case HolderRole::other:
      return "other";
    case HolderRole::gone:
      return "gone";
  }
  return "other";
}

std::optional<HolderRole> holder_role_from_text(std::string_view word) {
  for (HolderRole r : {HolderRole::command, HolderRole::diescope, HolderRole::other, HolderRole::gone})
    if (holder_role_text(r) == word) return r;
  return std::nullopt;
}

std::string_view combine_text(UnitRecipe::Combine combine) {
  switch (combine) {
    case UnitRecipe::Combine::counter:
      return "counter";
    case UnitRecipe::Combine::mean:
      return "mean";
  }
  return "counter";
}

std::string_view unit_source_text(UnitSource source) {
  switch (source) {
    case UnitSource::chip:
      return "chip";
    case UnitSource::nvml_engine:
      return "nvml_engine";
    case UnitSource::gpm:
      return "gpm";
  }
  return "chip";
}

std::string_view unit_flag_text(UnitFlag flag) {
  switch (flag) {
    case UnitFlag::stand_in_counter:
      return "stand_in_counter";
    case UnitFlag::different_measure:
      return "different_measure";
  }
  return "stand_in_counter";
}

std::string run_ending_text(const RunEnding& ending) {
  switch (ending.way) {
    case RunEnding::Way::unstated:
      return {};
    case RunEnding::Way::exited:
      return std::string(kExited);
    case RunEnding::Way::signal:
      return std::string(kSignalPrefix) + core::signal_name(ending.signal);
    case RunEnding::Way::period_end:
      return std::string(kPeriodEnd);
    case RunEnding::Way::other:
      return ending.text;
  }
  return ending.text;
}

// docs/recording-format.md#flops-notes
std::string_view flops_scope_text(FlopsScope scope) {
  return scope == FlopsScope::run ? "run" : "window";
}

std::string flops_note_text(const FlopsNote& note) {
  std::string out;
  recfmt::append_number(out, note.flops);
  out += ' ';
  out += flops_scope_text(note.scope);
  return out;
}

std::optional<FlopsNote> parse_flops_note(std::string_view text) {
  const std::size_t space = text.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  const std::string_view number = text.substr(0, space);
  const std::string_view scope = text.substr(space + 1);
  FlopsNote note;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), note.flops);
  if (ec != std::errc() || end != number.data() + number.size() || !std::isfinite(note.flops) ||
      !(note.flops > 0))
    return std::nullopt;
  if (scope == "window") {
    note.scope = FlopsScope::window;
  } else if (scope == "run") {
    note.scope = FlopsScope::run;
  } else {
    return std::nullopt;
  }
  return note;
}

namespace recfmt {

std::optional<std::size_t> kind_of_word(std::string_view word) {
  for (std::size_t i = 0; i < kKindCount; ++i)
    if (kKindWords[i] == word) return i;
  return std::nullopt;
}

void append_number(std::string& out, double value) {
  if (std::isnan(value)) {
    out += "nan";
    return;
  }
  char buf[32];
  const auto res = std::to_chars(buf, buf + sizeof buf, value);
  out.append(buf, res.ptr);
}

void append_integer(std::string& out, std::int64_t value) {
  char buf[24];
  const auto res = std::to_chars(buf, buf + sizeof buf, value);
  out.append(buf, res.ptr);
}

void append_escaped(std::string& out, std::string_view text) {
  for (char c : text) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        out += c;
    }
  }
}

std::string unescape(std::string_view text, std::string& out) {
  out.clear();
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c != '\\') {
      out += c;
      continue;
    }
    if (i + 1 == text.size()) return "the text ends with a lone backslash";
    const char e = text[++i];
    switch (e) {
      case '\\':
        out += '\\';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      default:
        return "unknown escape '\\" + excerpt(std::string_view(&e, 1)) + "' (only \\\\, \\n and \\r)";
    }
  }
  return {};
}

std::string excerpt(std::string_view text, std::size_t max) {
  std::string out;
  for (std::size_t i = 0; i < text.size() && i < max; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    out += (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '?';
  }
  if (text.size() > max) out += "...";
  return out;
}

// ---- meta ---------------------------------------------------------------------------------------

namespace {

using nlohmann::json;
using ojson = nlohmann::ordered_json;  // written in the order the format document lists the fields

// JSON has no NaN: a double that is not available is written as null.
ojson number_or_null(double v) {
  return std::isnan(v) ? ojson(nullptr) : ojson(v);
}

ojson column_to_json(const ColumnDef& c) {
  ojson flags = ojson::array();
  for (UnitFlag f : c.flags) flags.push_back(unit_flag_text(f));
  return ojson{{"key", c.key},
               {"label", c.label},
               {"metric", c.metric},
               {"recipe", {{"combine", combine_text(c.recipe.combine)}, {"counters", c.recipe.counters}}},
               {"source", unit_source_text(c.source)},
               {"flags", flags},
               {"note", c.note},
               {"counted_by_gpu_util", c.counted_by_gpu_util},
               {"unit", c.unit}};
}

ojson columns_to_json(const std::vector<ColumnDef>& cols) {
  ojson a = ojson::array();
  for (const ColumnDef& c : cols) a.push_back(column_to_json(c));
  return a;
}

// Reads fields of one JSON object, naming the field's full path in every problem.
class Fields {
 public:
  Fields(const json& object, std::string where) : object_(object), where_(std::move(where)) {
    if (!object_.is_object())
      throw MetaProblem(
          (where_.empty() ? std::string("the meta") : "'" + where_.substr(0, where_.size() - 1) + "'") +
          " must be a JSON object");
  }
  const json& at(const char* key) const {
    const auto it = object_.find(key);
    if (it == object_.end()) throw MetaProblem("meta lacks the field " + name(key));
    return *it;
  }
  bool has(const char* key) const { return object_.contains(key); }
  std::string string(const char* key) const {
    const json& v = at(key);
    if (!v.is_string()) throw MetaProblem(name(key) + " must be a string");
    return v.get<std::string>();
  }
  bool boolean(const char* key) const {
    const json& v = at(key);
    if (!v.is_boolean()) throw MetaProblem(name(key) + " must be true or false");
    return v.get<bool>();
  }
  std::int64_t integer(const char* key, std::int64_t lo, std::int64_t hi) const {
    const json& v = at(key);
    if (!v.is_number_integer()) throw MetaProblem(name(key) + " must be a whole number");
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi))
      throw MetaProblem(name(key) + " is out of range");
    const auto x = v.get<std::int64_t>();
    if (x < lo || x > hi) throw MetaProblem(name(key) + " is out of range");
    return x;
  }
  int small_integer(const char* key) const {
    return static_cast<int>(integer(key, -1'000'000'000, 1'000'000'000));
  }
  // A number, or null for not available (NaN).
  double number(const char* key) const {
    const json& v = at(key);
    if (v.is_null()) return std::nan("");
    if (!v.is_number()) throw MetaProblem(name(key) + " must be a number or null");
    return v.get<double>();
  }
  std::vector<std::string> strings(const char* key) const {
    const json& v = at(key);
    if (!v.is_array()) throw MetaProblem(name(key) + " must be an array of strings");
    std::vector<std::string> out;
    for (const json& e : v) {
      if (!e.is_string()) throw MetaProblem(name(key) + " must be an array of strings");
      out.push_back(e.get<std::string>());
    }
    return out;
  }
  const json& array(const char* key) const {
    const json& v = at(key);
    if (!v.is_array()) throw MetaProblem(name(key) + " must be an array");
    return v;
  }
  std::string name(const char* key) const { return "'" + where_ + key + "'"; }

 private:
  const json& object_;
  std::string where_;  // "" or "units[2]." etc.
};

ColumnDef column_from_json(const json& j, const std::string& where) {
  const Fields f(j, where + ".");
  ColumnDef c;
  c.key = f.string("key");
  c.label = f.string("label");
  c.metric = f.string("metric");
  const Fields recipe(f.at("recipe"), where + ".recipe.");
  const std::string combine = recipe.string("combine");
  if (combine == "counter")
    c.recipe.combine = UnitRecipe::Combine::counter;
  else if (combine == "mean")
    c.recipe.combine = UnitRecipe::Combine::mean;
  else
    throw MetaProblem(recipe.name("combine") + " must be \"counter\" or \"mean\", not \"" + excerpt(combine) +
                      "\"");
  c.recipe.counters = recipe.strings("counters");
  const std::string source = f.string("source");
  if (source == "chip")
    c.source = UnitSource::chip;
  else if (source == "nvml_engine")
    c.source = UnitSource::nvml_engine;
  else if (source == "gpm")
    c.source = UnitSource::gpm;
  else
    throw MetaProblem(f.name("source") + " must be \"chip\", \"gpm\" or \"nvml_engine\", not \"" +
                      excerpt(source) + "\"");
  for (const std::string& flag : f.strings("flags")) {
    if (flag == "stand_in_counter")
      c.flags.push_back(UnitFlag::stand_in_counter);
    else if (flag == "different_measure")
      c.flags.push_back(UnitFlag::different_measure);
    else
      throw MetaProblem(f.name("flags") + " holds \"" + excerpt(flag) +
                        "\"; known flags are stand_in_counter and different_measure");
  }
  c.note = f.string("note");
  c.counted_by_gpu_util = f.boolean("counted_by_gpu_util");
  c.unit = f.string("unit");
  return c;
}

std::vector<ColumnDef> columns_from_json(const Fields& f, const char* key) {
  std::vector<ColumnDef> out;
  const json& a = f.array(key);
  for (std::size_t i = 0; i < a.size(); ++i)
    out.push_back(column_from_json(a[i], std::string(key) + "[" + std::to_string(i) + "]"));
  return out;
}

bool is_word(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) return false;
  return true;
}

}  // namespace

void validate_meta(const RecordingMeta& meta) {
  std::set<std::string> keys;
  auto check_columns = [&](const std::vector<ColumnDef>& cols, const char* group) {
    for (std::size_t i = 0; i < cols.size(); ++i) {
      const std::string where = std::string(group) + "[" + std::to_string(i) + "]";
      if (!is_word(cols[i].key))
        throw MetaProblem("'" + where + ".key' must be one word without spaces, not \"" +
                          excerpt(cols[i].key) + "\"");
      if (!keys.insert(cols[i].key).second)
        throw MetaProblem("column key \"" + excerpt(cols[i].key) + "\" (" + where + ") is used twice");
      if (cols[i].unit.empty()) throw MetaProblem("'" + where + ".unit' must not be empty");
    }
  };
  check_columns(meta.units, "units");
  check_columns(meta.diagnostics, "diagnostics");
  check_columns(meta.counts, "counts");
  check_columns(meta.engines, "engines");
  if (!(std::isfinite(meta.interval_ms) && meta.interval_ms > 0))
    throw MetaProblem("'interval_ms' must be a number above 0");
  auto check_positive_or_nan = [](double v, const char* name) {
    if (std::isinf(v) || v < 0) throw MetaProblem(std::string("'") + name + "' must be 0 or more, or null");
  };
  check_positive_or_nan(meta.drain_ms, "drain_ms");
  check_positive_or_nan(meta.gpu_util_resolution_pct, "gpu_util_resolution_pct");
  if (!(std::isfinite(meta.duty_on_ms) && std::isfinite(meta.duty_period_ms) && meta.duty_on_ms >= 0 &&
        meta.duty_period_ms >= 0 && meta.duty_on_ms <= meta.duty_period_ms))
    throw MetaProblem(
        "'duty_on_ms' and 'duty_period_ms' must be numbers with 0 <= duty_on_ms <= duty_period_ms");
  if (!std::isnan(meta.host_interval_ms) &&
      !(std::isfinite(meta.host_interval_ms) && meta.host_interval_ms > 0))
    throw MetaProblem("'host_interval_ms' must be a number above 0, or null when there are no host probes");
  if (meta.run_type != "single" && meta.run_type != "round" && meta.run_type != "sustained")
    throw MetaProblem("'run_type' must be \"single\", \"round\" or \"sustained\", not \"" +
                      excerpt(meta.run_type) + "\"");
}

std::string meta_to_json(const RecordingMeta& meta) {
  validate_meta(meta);
  ojson gpu{{"index", meta.gpu.index},       {"uuid", meta.gpu.uuid},
            {"model", meta.gpu.model},       {"chip", meta.gpu.chip},
            {"driver", meta.gpu.driver},     {"compute_capability", meta.gpu.compute_capability},
            {"l2_bytes", meta.gpu.l2_bytes}, {"sm_count", meta.gpu.sm_count}};
  // Optional: written when known (docs/recording-format.md#the-meta-line).
  if (!meta.gpu.pci_bus_id.empty()) gpu["pci_bus_id"] = meta.gpu.pci_bus_id;
  const ojson j{{"format_version", core::kRecordingFormatVersion},
                {"tool_version", meta.tool_version},
                {"method", meta.method},
                {"gpu", gpu},
                {"unit_table", meta.unit_table},
                {"units", columns_to_json(meta.units)},
                {"diagnostics", columns_to_json(meta.diagnostics)},
                {"counts", columns_to_json(meta.counts)},
                {"engines", columns_to_json(meta.engines)},
                {"interval_ms", meta.interval_ms},
                {"drain_ms", number_or_null(meta.drain_ms)},
                {"gpu_util_resolution_pct", number_or_null(meta.gpu_util_resolution_pct)},
                {"start_ns", meta.start_ns},
                {"run_type", meta.run_type},
                {"command", meta.command},
                {"host", meta.host},
                {"duty_on_ms", meta.duty_on_ms},
                {"duty_period_ms", meta.duty_period_ms},
                {"host_interval_ms", number_or_null(meta.host_interval_ms)}};
  // Invalid UTF-8 in a string (a command's argv can hold anything) is replaced, not fatal.
  return j.dump(-1, ' ', false, ojson::error_handler_t::replace);
}

RecordingMeta meta_from_json(std::string_view text) {
  json j;
  try {
    j = json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {  // parse_error, and out_of_range for numbers like 1e400
    throw MetaProblem(std::string("the meta is not valid JSON (") + e.what() + ")");
  }
  const Fields f(j, "");
  RecordingMeta m;
  m.format_version = f.small_integer("format_version");
  m.tool_version = f.string("tool_version");
  m.method = f.small_integer("method");
  const Fields g(f.at("gpu"), "gpu.");
  m.gpu.index = g.small_integer("index");
  m.gpu.uuid = g.string("uuid");
  m.gpu.model = g.string("model");
  m.gpu.chip = g.string("chip");
  m.gpu.driver = g.string("driver");
  m.gpu.compute_capability = g.small_integer("compute_capability");
  m.gpu.l2_bytes = g.integer("l2_bytes", 0, INT64_MAX);
  m.gpu.sm_count = g.small_integer("sm_count");
  if (g.has("pci_bus_id")) m.gpu.pci_bus_id = g.string("pci_bus_id");
  m.unit_table = f.string("unit_table");
  m.units = columns_from_json(f, "units");
  m.diagnostics = columns_from_json(f, "diagnostics");
  m.counts = columns_from_json(f, "counts");
  m.engines = columns_from_json(f, "engines");
  m.interval_ms = f.number("interval_ms");
  m.drain_ms = f.number("drain_ms");
  m.gpu_util_resolution_pct = f.number("gpu_util_resolution_pct");
  m.start_ns = f.integer("start_ns", INT64_MIN, INT64_MAX);
  m.run_type = f.string("run_type");
  m.command = f.strings("command");
  m.host = f.string("host");
  m.duty_on_ms = f.number("duty_on_ms");
  m.duty_period_ms = f.number("duty_period_ms");
  // Version 2 added the host probes' interval; a version-1 recording has no host probes.
  if (m.format_version >= 2) m.host_interval_ms = f.number("host_interval_ms");
  validate_meta(m);
  return m;
}

}  // namespace recfmt
}  // namespace diescope::recording
