#include "diescope/roofline/csv.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <stdexcept>

#include "diescope/core/error.hpp"
#include "internal.hpp"

namespace diescope::roofline {

namespace {

using detail::kNaN;

// Shortest round-trip text; NaN is an empty cell (not available).
std::string num(double v) {
  return std::isfinite(v) ? fmt::format("{}", v) : std::string();
}

std::string quote(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

struct Column {
  std::string name;
  std::string unit;
  std::function<std::string(const Row&)> write;
  // Reads the cell into the row; nullptr for a derived column (recomputed, never read).
  std::function<void(Row&, const std::string&)> read;
};

// A cell -> number, or throws std::invalid_argument.
double cell_number(const std::string& s) {
  if (s.empty()) return kNaN;
  std::size_t used = 0;
  const double v = std::stod(s, &used);
  if (used != s.size()) throw std::invalid_argument("\"" + s + "\" is not a number");
  return v;
}

std::int64_t cell_integer(const std::string& s) {
  std::size_t used = 0;
  const long long v = std::stoll(s, &used);
  if (used != s.size()) throw std::invalid_argument("\"" + s + "\" is not a whole number");
  return v;
}

Column text_col(const std::string& name, std::string Row::*field) {
  return {name, "", [field](const Row& r) { return quote(r.*field); },
          [field](Row& r, const std::string& s) { r.*field = s; }};
}

Column number_col(const std::string& name, const std::string& unit, double Row::*field) {
  return {name, unit, [field](const Row& r) { return num(r.*field); },
          [field](Row& r, const std::string& s) { r.*field = cell_number(s); }};
}

template <class Array, class Key>
Column array_col(const std::string& name, const std::string& unit, Array Row::*field, Key key) {
  return {name, unit, [field, key](const Row& r) { return num((r.*field)[index(key)]); },
          [field, key](Row& r, const std::string& s) { (r.*field)[index(key)] = cell_number(s); }};
}

Column derived(const std::string& name, const std::string& unit,
               std::function<std::string(const Row&)> write) {
  return {name, unit, std::move(write), nullptr};
}

const std::vector<Column>& columns() {
  static const std::vector<Column> cols = [] {
    std::vector<Column> c;
    c.push_back({"profiler", "", [](const Row& r) { return quote(std::string(profiler_name(r.profiler))); },
                 [](Row& r, const std::string& s) {
                   const std::optional<Profiler> p = profiler_from_name(s);
                   if (!p) throw std::invalid_argument("not a profiler");
                   r.profiler = *p;
                 }});
    c.push_back(text_col("executable", &Row::executable));
    c.push_back(text_col("kernel", &Row::kernel));
    c.push_back({"launch", "id", [](const Row& r) { return std::to_string(r.launch); },
                 [](Row& r, const std::string& s) { r.launch = cell_integer(s); }});
    c.push_back(text_col("region", &Row::region));
    c.push_back(text_col("grid", &Row::grid));
    c.push_back(text_col("block", &Row::block));
    c.push_back({"launches", "", [](const Row& r) { return std::to_string(r.launches); },
                 [](Row& r, const std::string& s) { r.launches = cell_integer(s); }});
    c.push_back(text_col("gpu", &Row::gpu));
    c.push_back(text_col("driver", &Row::driver));
    c.push_back(number_col("duration", "s", &Row::duration_s));
    c.push_back(number_col("sm clock", "Hz", &Row::sm_hz));
    for (Level l : kAllLevels)
      c.push_back(array_col(std::string(level_name(l)) + " clock", "Hz", &Row::level_hz, l));
    for (Precision p : kAllPrecisions)
      c.push_back(
          array_col("work " + std::string(precision_name(p)), std::string(precision_unit(p)), &Row::flop, p));
    // docs/roofline.md#packed-half-precision: the top of the fp16 range and why, where the lanes are
    // not known.
    c.push_back(number_col("work fp16 high", "FLOP", &Row::fp16_flop_high));
    c.push_back(text_col("fp16 lanes unknown", &Row::fp16_why));
    c.push_back(number_col("tensor instructions", "inst", &Row::tensor_inst));
    for (Level l : kAllLevels)
      c.push_back(array_col("bytes " + std::string(level_name(l)), "B", &Row::bytes, l));
    for (Precision p : kAllPrecisions)
      c.push_back(array_col("counter peak " + std::string(precision_name(p)),
                            std::string(precision_unit(p)) + "/cycle", &Row::peak_flop_per_cycle, p));
    for (Level l : kAllLevels)
      c.push_back(
          array_col("counter peak " + std::string(level_name(l)), "B/cycle", &Row::peak_bytes_per_cycle, l));
    for (Precision p : kAllPrecisions)
      c.push_back(array_col("measured ceiling " + std::string(precision_name(p)),
                            std::string(precision_unit(p)) + "/s", &Row::measured_flop_per_s, p));
    for (Level l : kAllLevels)
      c.push_back(
          array_col("measured ceiling " + std::string(level_name(l)), "B/s", &Row::measured_bytes_per_s, l));
    c.push_back(text_col("calibration", &Row::calibration));
    // docs/roofline.md#dram-bytes-and-the-cache-flush: one of the three states, or empty.
    c.push_back({"caches", "", [](const Row& r) { return quote(r.caches); },
                 [](Row& r, const std::string& s) {
                   if (!s.empty() && s != kCachesFlushed && s != kCachesUnflushed && s != kCachesProgram)
                     throw std::invalid_argument("not a cache state");
                   r.caches = s;
                 }});
    // docs/roofline.md#energy: the joules over the row's kernel windows and their source.
    c.push_back(number_col("energy", "J", &Row::energy_j));
    c.push_back({"energy source", "", [](const Row& r) { return quote(r.energy_source); },
                 [](Row& r, const std::string& s) {
                   if (!s.empty() && s != kEnergyCounter && s != kEnergyPowerDraw)
                     throw std::invalid_argument("not an energy source");
                   r.energy_source = s;
                 }});
    // Derived: written for people, recomputed on reading (docs/roofline.md#derived).
    for (Precision p : kAllPrecisions)
      c.push_back(derived("counter ceiling " + std::string(precision_name(p)),
                          std::string(precision_unit(p)) + "/s",
                          [p](const Row& r) { return num(counter_peak_flop_per_s(r, p)); }));
    for (Level l : kAllLevels)
      c.push_back(derived("counter ceiling " + std::string(level_name(l)), "B/s",
                          [l](const Row& r) { return num(counter_peak_bytes_per_s(r, l)); }));
    c.push_back(derived("precision", "", [](const Row& r) {
      const auto p = dominant_precision(r);
      return p ? std::string(precision_name(*p)) : std::string();
    }));
    for (Level l : kAllLevels)
      c.push_back(derived("intensity " + std::string(level_name(l)), "FLOP/B",
                          [l](const Row& r) { return num(intensity(r, l)); }));
    c.push_back(derived("performance", "FLOP/s", [](const Row& r) { return num(performance(r)); }));
    c.push_back(derived("roof", "FLOP/s", [](const Row& r) { return num(binding_roof(r).flop_per_s); }));
    c.push_back(derived("roof from", "", [](const Row& r) {
      const Roof roof = binding_roof(r);
      if (roof.which.empty()) return std::string();
      return roof.which + (roof.measured ? " (measured)" : " (counter peak)");
    }));
    c.push_back(derived("of roof", "%", [](const Row& r) { return num(pct_of_roof(r)); }));
    c.push_back(
        derived("joules per tflop", "J/TFLOP", [](const Row& r) { return num(joules_per_tflop(r)); }));
    return c;
  }();
  return cols;
}

// "duration [s]" -> "duration"
std::string strip_unit(const std::string& header) {
  const std::size_t open = header.rfind(" [");
  if (open != std::string::npos && !header.empty() && header.back() == ']') return header.substr(0, open);
  return header;
}

}  // namespace

std::vector<std::string> split_csv_line(std::string_view line) {
  std::vector<std::string> fields;
  std::string cur;
  bool in_quotes = false, was_quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (in_quotes) {
      if (c == '"') {
        if (i + 1 < line.size() && line[i + 1] == '"') {
          cur += '"';
          ++i;
        } else {
          in_quotes = false;
        }
      } else {
        cur += c;
      }
    } else if (c == '"' && cur.empty() && !was_quoted) {
      in_quotes = was_quoted = true;
    } else if (c == ',') {
      fields.push_back(std::move(cur));
      cur.clear();
      was_quoted = false;
    } else {
      cur += c;
    }
  }
  if (in_quotes) throw std::invalid_argument("a quoted field is not closed (the line is cut short)");
  fields.push_back(std::move(cur));
  return fields;
}

std::string table_csv(const std::vector<Row>& rows) {
  const auto& cols = columns();
  std::string out;
  for (std::size_t i = 0; i < cols.size(); ++i) {
    if (i > 0) out += ',';
    out += cols[i].unit.empty() ? cols[i].name : cols[i].name + " [" + cols[i].unit + "]";
  }
  out += '\n';
  for (const Row& r : rows) {
    for (std::size_t i = 0; i < cols.size(); ++i) {
      if (i > 0) out += ',';
      out += cols[i].write(r);
    }
    out += '\n';
  }
  return out;
}

std::vector<Row> parse_table_csv(std::string_view text, const std::string& path) {
  const std::string fix = "give a table `diescope roofline profile` or `plot` wrote (roofline.csv), unedited";
  const auto& cols = columns();
  std::map<std::string, const Column*> by_name;
  for (const Column& c : cols) by_name.emplace(c.name, &c);
  std::vector<const Column*> layout;
  std::vector<Row> rows;
  long line_no = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    const bool complete = end != std::string_view::npos;
    if (!complete) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    std::vector<std::string> fields;
    try {
      fields = split_csv_line(line);
    } catch (const std::invalid_argument& e) {
      throw core::InputError(path, line_no, e.what(), fix);
    }
    if (layout.empty()) {
      for (const std::string& h : fields) {
        const auto it = by_name.find(strip_unit(h));
        if (it == by_name.end())
          throw core::InputError(path, line_no, "column \"" + h + "\" is not a roofline table column", fix);
        layout.push_back(it->second);
      }
      for (const Column& c : cols) {
        // A table written before the range backend has no profiler column (its rows are ncu's), and one
        // written before the caches were recorded no caches column (not recorded: empty).
        // Nor one written before packed half precision the fp16 range's columns
        // (docs/roofline.md#packed-half-precision).
        // Nor one written before energy its columns (docs/roofline.md#energy).
        if (c.read && c.name != "profiler" && c.name != "caches" && c.name != "work fp16 high" &&
            c.name != "fp16 lanes unknown" && c.name != "energy" && c.name != "energy source" &&
            std::find(layout.begin(), layout.end(), &c) == layout.end())
          throw core::InputError(path, line_no, "column \"" + c.name + "\" is missing", fix);
      }
      continue;
    }
    if (!complete)
      throw core::InputError(path, line_no, "the file ends in the middle of this line (truncated?)", fix);
    if (fields.size() != layout.size())
      throw core::InputError(
          path, line_no, fmt::format("{} fields where the header has {}", fields.size(), layout.size()), fix);
    Row r;
    for (std::size_t i = 0; i < layout.size(); ++i) {
      if (!layout[i]->read) continue;
      try {
        layout[i]->read(r, fields[i]);
      } catch (const std::exception&) {
        const std::string& name = layout[i]->name;
        throw core::InputError(path, line_no,
                               "column \"" + name + "\" holds \"" + fields[i] + "\", not " +
                                   (name == "caches"          ? "flushed, unflushed, program or empty"
                                    : name == "profiler"      ? "ncu, range or sampled"
                                    : name == "energy source" ? "counter, power_draw or empty"
                                                              : "a number"),
                               fix);
      }
    }
    rows.push_back(std::move(r));
  }
  if (layout.empty()) throw core::InputError(path, 0, "the file is empty: no header line", fix);
  return rows;
}

}  // namespace diescope::roofline
