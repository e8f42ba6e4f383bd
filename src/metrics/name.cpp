#include "diescope/metrics/name.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace diescope::metrics {
namespace {

constexpr std::array<std::string_view, 4> kRollups = {"sum", "avg", "min", "max"};

// Transforms a counter takes after its rollup (docs/metrics.md#types-and-their-legal-suffixes; the
// two compound per_second forms are what CUPTI's host API lists beside them).
constexpr std::array<std::string_view, 14> kCounterSubmetrics = {
    "per_second",
    "per_cycle_active",
    "per_cycle_elapsed",
    "per_cycle_region",
    "peak_sustained",
    "peak_sustained_active",
    "peak_sustained_elapsed",
    "peak_sustained_active.per_second",
    "peak_sustained_elapsed.per_second",
    "peak_burst",
    "pct_of_peak_sustained_active",
    "pct_of_peak_sustained_elapsed",
    "pct_of_peak_burst_active",
    "pct_of_peak_burst_elapsed",
};

// A throughput is already counter/peak; its suffix only picks the peak
// (docs/metrics.md#types-and-their-legal-suffixes).
constexpr std::array<std::string_view, 6> kThroughputSubmetrics = {
    "pct_of_peak_sustained_active", "pct_of_peak_sustained_elapsed", "pct_of_peak_sustained_region",
    "pct_of_peak_burst_active",     "pct_of_peak_burst_elapsed",     "pct_of_peak_burst_region",
};

constexpr std::array<std::string_view, 3> kRatioSubmetrics = {"ratio", "pct", "max_rate"};

template <std::size_t N>
bool contains(const std::array<std::string_view, N>& list, std::string_view item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

bool is_known_submetric(std::string_view s) {
  return contains(kCounterSubmetrics, s) || contains(kThroughputSubmetrics, s) ||
         contains(kRatioSubmetrics, s);
}

bool lower(char c) {
  return c >= 'a' && c <= 'z';
}
bool upper(char c) {
  return c >= 'A' && c <= 'Z';
}
bool digit(char c) {
  return c >= '0' && c <= '9';
}

struct Part {
  std::string_view text;
  std::size_t offset;  // 0-based position in the whole name
};

MetricError fail(std::string_view name, const std::string& what) {
  return MetricError{"metric name \"" + std::string(name) + "\": " + what};
}

std::string at_column(std::size_t offset) {
  return " at column " + std::to_string(offset + 1);
}

std::string quoted_char(char c) {
  if (std::isprint(static_cast<unsigned char>(c))) return std::string("'") + c + "'";
  return "byte " + std::to_string(static_cast<unsigned>(static_cast<unsigned char>(c)));
}

// First character of `part` that `allowed` refuses, as an error naming the part and its rule.
std::optional<MetricError> check_chars(std::string_view name, Part part, bool (*allowed)(char),
                                       std::string_view part_name, std::string_view rule) {
  for (std::size_t i = 0; i < part.text.size(); ++i) {
    if (!allowed(part.text[i])) {
      return fail(name, "bad character " + quoted_char(part.text[i]) + " in " + std::string(part_name) +
                            at_column(part.offset + i) + " (" + std::string(rule) + ")");
    }
  }
  return std::nullopt;
}

std::string join(const std::vector<Part>& parts, std::size_t from) {
  std::string out;
  for (std::size_t i = from; i < parts.size(); ++i) {
    if (i > from) out += '.';
    out += parts[i].text;
  }
  return out;
}

}  // namespace

std::string_view to_string(MetricType type) {
  switch (type) {
    case MetricType::counter:
      return "counter";
    case MetricType::ratio:
      return "ratio";
    case MetricType::throughput:
      return "throughput";
  }
  return "?";
}

std::string_view to_string(Rollup rollup) {
  return kRollups[static_cast<std::size_t>(rollup)];
}

std::string MetricName::base() const {
  std::string out;
  if (!group.empty()) out += group + '.';
  if (!pass.empty()) out += pass + '.';
  return out + entity + "__" + counter;
}

std::string MetricName::full() const {
  std::string out = base();
  if (rollup) out += '.' + std::string(to_string(*rollup));
  if (!submetric.empty()) out += '.' + submetric;
  return out;
}

Expected<MetricName> parse_metric_name(std::string_view text) {
  if (text.empty()) return MetricError{"metric name is empty"};

  std::vector<Part> parts;
  for (std::size_t start = 0;;) {
    std::size_t dot = text.find('.', start);
    std::size_t end = dot == std::string_view::npos ? text.size() : dot;
    if (end == start) {
      return fail(text, "empty part" + at_column(start) + " (a dot at the start or end, or two in a row)");
    }
    parts.push_back({text.substr(start, end - start), start});
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }

  auto base_it = std::find_if(parts.begin(), parts.end(),
                              [](const Part& p) { return p.text.find("__") != std::string_view::npos; });
  if (base_it == parts.end()) {
    return fail(
        text, "no \"__\" between entity and counter (expected <entity>__<counter>, e.g. sm__cycles_active)");
  }
  const auto base_index = static_cast<std::size_t>(base_it - parts.begin());

  MetricName name;
  // Qualifiers: CUPTI's "GROUP.Pass." or "Pass." prefix, at most two parts, each starting upper-case.
  if (base_index > 2) {
    return fail(text, "too many qualifiers before the entity" + at_column(parts[0].offset) +
                          " (at most GROUP.Pass., e.g. TPC.TriageCompute.)");
  }
  for (std::size_t i = 0; i < base_index; ++i) {
    if (!upper(parts[i].text[0])) {
      return fail(text, "qualifier \"" + std::string(parts[i].text) + "\"" + at_column(parts[i].offset) +
                            " must start with an upper-case letter (CUPTI's GROUP.Pass. prefix, e.g. "
                            "TPC.TriageCompute.)");
    }
    if (auto e = check_chars(
            text, parts[i], [](char c) { return upper(c) || lower(c) || digit(c) || c == '_'; }, "qualifier",
            "letters, digits and '_'")) {
      return *e;
    }
  }
  if (base_index == 2) {
    name.group = parts[0].text;
    name.pass = parts[1].text;
  } else if (base_index == 1) {
    name.pass = parts[0].text;
  }

  const Part base = parts[base_index];
  const std::size_t sep = base.text.find("__");
  const Part entity{base.text.substr(0, sep), base.offset};
  const Part counter{base.text.substr(sep + 2), base.offset + sep + 2};
  if (entity.text.empty()) return fail(text, "empty entity before \"__\"" + at_column(base.offset));
  if (counter.text.empty()) return fail(text, "empty counter after \"__\"" + at_column(counter.offset));
  if (!lower(entity.text[0])) {
    return fail(text, "entity \"" + std::string(entity.text) + "\"" + at_column(entity.offset) +
                          " must start with a lower-case letter");
  }
  if (auto e = check_chars(
          text, entity, [](char c) { return lower(c) || digit(c); }, "entity",
          "lower-case letters and digits")) {
    return *e;
  }
  if (std::size_t again = counter.text.find("__"); again != std::string_view::npos) {
    return fail(text, "second \"__\"" + at_column(counter.offset + again) +
                          " (a name has exactly one, between entity and counter)");
  }
  if (auto e = check_chars(
          text, counter, [](char c) { return lower(c) || digit(c) || c == '_'; }, "counter",
          "lower-case letters, digits and '_'")) {
    return *e;
  }
  name.entity = entity.text;
  name.counter = counter.text;

  const std::size_t first_suffix = base_index + 1;
  for (std::size_t i = first_suffix; i < parts.size(); ++i) {
    if (auto e = check_chars(
            text, parts[i], [](char c) { return lower(c) || digit(c) || c == '_'; },
            i == first_suffix ? "rollup" : "submetric", "lower-case letters, digits and '_'")) {
      return *e;
    }
  }
  if (first_suffix == parts.size()) return name;

  const Part head = parts[first_suffix];
  if (contains(kRollups, head.text)) {
    name.rollup =
        static_cast<Rollup>(std::find(kRollups.begin(), kRollups.end(), head.text) - kRollups.begin());
    if (first_suffix + 1 < parts.size()) {
      std::string submetric = join(parts, first_suffix + 1);
      if (!is_known_submetric(submetric)) {
        return fail(text,
                    "unknown submetric \"" + submetric + "\"" + at_column(parts[first_suffix + 1].offset) +
                        " (e.g. per_second, pct_of_peak_sustained_elapsed; docs/metrics.md lists them)");
      }
      name.submetric = std::move(submetric);
    }
    return name;
  }
  std::string rest = join(parts, first_suffix);
  if (contains(kRatioSubmetrics, rest)) {  // ratios have no rollup: their suffix is the submetric alone
    name.submetric = std::move(rest);
    return name;
  }
  if (is_known_submetric(rest)) {
    return fail(text, "submetric \"" + rest + "\"" + at_column(head.offset) +
                          " needs a rollup before it (sum, avg, min or max), e.g. \".sum." + rest + "\"");
  }
  return fail(text, "unknown rollup \"" + std::string(head.text) + "\"" + at_column(head.offset) +
                        " (expected sum, avg, min or max; or ratio, pct, max_rate for a ratio)");
}

std::optional<MetricError> check_suffix(const MetricName& name, MetricType type) {
  auto wrong = [&](const std::string& what) {
    return MetricError{"metric name \"" + name.full() + "\": " + what};
  };
  const std::string type_name(to_string(type));
  switch (type) {
    case MetricType::counter:
      if (!name.rollup && !name.submetric.empty()) {
        return wrong("\"." + name.submetric +
                     "\" is a ratio submetric; a counter takes a rollup (sum, avg, min, "
                     "max) and then an optional transform such as per_second");
      }
      if (!name.submetric.empty() && !contains(kCounterSubmetrics, name.submetric)) {
        return wrong("submetric \"" + name.submetric +
                     "\" is not legal for a counter (e.g. per_second, "
                     "per_cycle_active, pct_of_peak_sustained_elapsed)");
      }
      return std::nullopt;
    case MetricType::ratio:
      if (name.rollup) {
        return wrong("a ratio takes no rollup (\"." + std::string(to_string(*name.rollup)) +
                     "\"); its suffix is one of .ratio, .pct, .max_rate");
      }
      return std::nullopt;  // parse admits no other rollup-free submetric
    case MetricType::throughput:
      if (!name.rollup && !name.submetric.empty()) {
        return wrong("\"." + name.submetric +
                     "\" is a ratio submetric; a throughput takes a rollup and a "
                     "pct_of_peak_* submetric, e.g. .avg.pct_of_peak_sustained_elapsed");
      }
      if (name.rollup && name.submetric.empty()) {
        return wrong("a throughput's rollup must be followed by the peak it is a percent of, e.g. \"." +
                     std::string(to_string(*name.rollup)) + ".pct_of_peak_sustained_elapsed\"");
      }
      if (!name.submetric.empty() && !contains(kThroughputSubmetrics, name.submetric)) {
        return wrong("submetric \"" + name.submetric +
                     "\" is not legal for a throughput (only "
                     "pct_of_peak_{sustained,burst}_{active,elapsed,region})");
      }
      return std::nullopt;
  }
  return wrong("unknown metric type");
}

Expected<MetricName> parse_metric_name(std::string_view text, MetricType type) {
  auto parsed = parse_metric_name(text);
  if (!parsed) return parsed;
  if (auto e = check_suffix(*parsed, type)) return *e;
  return parsed;
}

std::vector<MetricType> types_allowing(const MetricName& name) {
  std::vector<MetricType> out;
  for (MetricType t : {MetricType::counter, MetricType::ratio, MetricType::throughput}) {
    if (!check_suffix(name, t)) out.push_back(t);
  }
  return out;
}

bool is_percent_submetric(std::string_view submetric) {
  return submetric == "pct" || submetric.substr(0, 12) == "pct_of_peak_";
}

}  // namespace diescope::metrics
