#include "diescope/roofline/range.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>

#include "diescope/core/error.hpp"
#include "diescope/roofline/ncu.hpp"
#include "internal.hpp"

namespace diescope::roofline {

namespace {

using detail::kNaN;
constexpr const char* kFix =
    "run the program again through `diescope roofline profile --profiler range`; the file is the "
    "library's own (docs/roofline.md#the-range-profiler)";

std::vector<std::string> split_tabs(std::string_view line) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (true) {
    const std::size_t tab = line.find('\t', pos);
    out.emplace_back(line.substr(pos, tab == std::string_view::npos ? std::string_view::npos : tab - pos));
    if (tab == std::string_view::npos) break;
    pos = tab + 1;
  }
  return out;
}

// The range profiler's name for an ncu metric: its SASS counts per SM (docs/roofline.md#the-range-profiler).
std::string range_name_of(const std::string& ncu_name) {
  static const std::string kSmsp = "smsp__sass_";
  if (ncu_name.rfind(kSmsp, 0) == 0) return "sm__sass_" + ncu_name.substr(kSmsp.size());
  return ncu_name;
}

// docs/roofline.md#the-range-profiler: ncu's fp16 and int8 tensor totals need two passes of CUPTI's
// range profiler each; their parts (the warpgroup path, and the warp path by destination or sparsity)
// fit one pass each and add up to them. The library collects the parts; a row's total is their sum.
struct SplitMetric {
  const char* whole;
  std::array<const char*, 3> parts;
};
constexpr std::array<SplitMetric, 2> kSplitMetrics = {{
    {"sm__ops_path_tensor_src_fp16.sum",
     {"sm__ops_path_tensor_op_hgmma_src_fp16.sum", "sm__ops_path_tensor_op_hmma_src_fp16_dst_fp16.sum",
      "sm__ops_path_tensor_op_hmma_src_fp16_dst_fp32.sum"}},
    {"sm__ops_path_tensor_src_int8.sum",
     {"sm__ops_path_tensor_op_igmma_src_int8.sum", "sm__ops_path_tensor_op_imma_src_int8_sparsity_off.sum",
      "sm__ops_path_tensor_op_imma_src_int8_sparsity_on.sum"}},
}};

const SplitMetric* split_of(const std::string& ncu_name) {
  for (const SplitMetric& s : kSplitMetrics)
    if (ncu_name == s.whole) return &s;
  return nullptr;
}

std::string key_of(const std::string& name, long number) {
  return fmt::format("{}#{}", name, number);
}

// "nan" is how the library writes a figure it could not measure.
double value_of(const std::string& s) {
  if (s == "nan") return kNaN;
  std::size_t used = 0;
  const double v = std::stod(s, &used);
  if (used != s.size()) throw std::invalid_argument(s);
  return v;
}

}  // namespace

std::vector<std::string> range_metrics() {
  std::vector<std::string> out;
  for (const auto& m : ncu_metrics()) {
    if (m.rfind("launch__", 0) == 0) continue;
    if (const SplitMetric* split = split_of(m))
      out.insert(out.end(), split->parts.begin(), split->parts.end());
    else
      out.push_back(range_name_of(m));
  }
  return out;
}

RangeRun parse_range_output(std::string_view text, const std::string& path) {
  RangeRun run;
  long line_no = 0;
  std::size_t pos = 0;
  bool have_magic = false;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    const bool last = end == std::string_view::npos;
    if (last) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (line.empty()) continue;
    // A line the program's crash cut short is not read (the library flushes whole lines).
    if (last && text.back() != '\n') break;
    const std::vector<std::string> f = split_tabs(line);
    const std::string& kind = f[0];
    auto need = [&](std::size_t n) {
      if (f.size() < n)
        throw core::InputError(path, line_no,
                               fmt::format("a {} line with {} fields, not {}", kind, f.size(), n), kFix);
    };
    try {
      if (!have_magic) {
        if (kind != "diescope-range")
          throw core::InputError(path, line_no,
                                 "not written by libdiescope-range (no diescope-range line first)", kFix);
        need(2);
        if (f[1] != "1")
          throw core::InputError(path, line_no, "format " + f[1] + " of libdiescope-range, not 1",
                                 "use the libdiescope-range.so of the same build as this diescope");
        have_magic = true;
      } else if (kind == "mode") {
        need(2);
        run.mode = f[1];
      } else if (kind == "device") {
        need(3);
        run.gpu = f[1];
        run.chip = f[2];
      } else if (kind == "groups") {
        need(3);
        run.groups = std::stoi(f[1]);
        run.group = std::stoi(f[2]);
      } else if (kind == "metrics") {
        run.metrics.assign(f.begin() + 1, f.end());
      } else if (kind == "refused") {
        run.refused.assign(f.begin() + 1, f.end());
      } else if (kind == "open") {
        need(4);
        run.opened.push_back(key_of(f[1], std::stol(f[2])));
        run.opened_at_ns.push_back(std::stoull(f[3]));
      } else if (kind == "clock") {
        need(4);
        run.have_clock = true;
        run.realtime_minus_monotonic_ns =
            static_cast<std::int64_t>(std::stoull(f[2])) - static_cast<std::int64_t>(std::stoull(f[1]));
        run.clock_bracket_ns = std::stoull(f[3]);
      } else if (kind == "row") {
        need(8);
        RangeRun::Region r;
        r.name = f[1];
        r.number = std::stol(f[2]);
        r.closed = f[3] == "1";
        r.launches = std::stol(f[4]);
        r.kernel = f[5];
        r.opened_ns = std::stoull(f[6]);
        r.closed_ns = std::stoull(f[7]);
        for (std::size_t i = 8; i < f.size(); ++i) r.values.push_back(value_of(f[i]));
        if (r.values.size() != run.metrics.size() && !(run.mode == "timestamps" && r.values.empty()))
          throw core::InputError(path, line_no,
                                 fmt::format("a row with {} values where the metrics line names {}",
                                             r.values.size(), run.metrics.size()),
                                 kFix);
        run.regions.push_back(std::move(r));
      } else if (kind == "error") {
        need(3);
        run.errors.push_back(f[1] + ": " + f[2]);
      } else if (kind == "unmatched") {
        ++run.unmatched;
      } else if (kind == "stale") {
        ++run.stale;
      } else if (kind == "end") {
        run.ended = true;
      } else {
        throw core::InputError(path, line_no,
                               "a line of kind \"" + kind + "\", which libdiescope-range never writes", kFix);
      }
    } catch (const std::invalid_argument&) {
      throw core::InputError(path, line_no, "a " + kind + " line with a field that is not a number", kFix);
    } catch (const std::out_of_range&) {
      throw core::InputError(path, line_no, "a " + kind + " line with a number out of range", kFix);
    }
  }
  if (!have_magic)
    throw core::InputError(
        path, 0,
        "empty: the program never initialised CUDA with the library loaded (no CUDA work, or "
        "CUDA_INJECTION64_PATH was overridden)",
        "check that the program uses the GPU; " + std::string(kFix));
  return run;
}

std::vector<Row> rows_from_range(const std::vector<RangeRun>& runs, const std::string& executable,
                                 std::vector<std::string>& warnings) {
  if (runs.empty()) return {};
  const RangeRun& first = runs.front();
  // One warning per cause, naming the pass groups (from 1) whose runs had it.
  std::vector<std::pair<std::string, std::string>> causes;  // text, groups
  auto note = [&](const std::string& text, int group) {
    const std::string g = std::to_string(group + 1);
    for (auto& [t, groups] : causes)
      if (t == text) {
        groups += ", " + g;
        return;
      }
    causes.emplace_back(text, g);
  };
  for (const RangeRun& run : runs) {
    for (const std::string& e : run.errors)
      note("CUPTI failed (" + e + "); the figures of that run are left empty", run.group);
    if (!run.ended) {
      // docs/roofline.md#the-range-profiler: rows are written as regions close, so the closed ones stand.
      std::set<std::string> closed;
      for (const auto& r : run.regions) closed.insert(key_of(r.name, r.number));
      std::string open;
      for (const std::string& k : run.opened)
        if (!closed.count(k)) open += (open.empty() ? "" : ", ") + k;
      note(fmt::format(
               "the program ended without its exit handlers (it crashed or was killed){}: the regions it "
               "closed before are kept",
               open.empty() ? "" : " inside " + open + ", whose rows are lost"),
           run.group);
    }
    if (run.stale > 0)
      note(fmt::format("CUPTI did not record {} counter range(s) (the last range in its buffer was another "
                       "region's); the regions they belong to are left empty",
                       run.stale),
           run.group);
    if (run.unmatched > 0)
      note(fmt::format("{} NVTX pop or end call(s) with no open range were ignored", run.unmatched),
           run.group);
  }
  for (const auto& [text, groups] : causes)
    warnings.push_back(fmt::format("{}: {} (pass group{} {} of {})", executable, text,
                                   groups.find(',') == std::string::npos ? "" : "s", groups, runs.size()));
  if (!first.refused.empty()) {
    std::string names;
    for (const auto& m : first.refused) names += (names.empty() ? "" : ", ") + m;
    warnings.push_back(executable + ": CUPTI's range profiler cannot collect " + names +
                       " in one pass; those figures are left empty (docs/roofline.md#the-range-profiler)");
  }

  // Merge by region name and occurrence, in the order the first run wrote them.
  struct Merged {
    const RangeRun::Region* head = nullptr;
    std::map<std::string, double> values;
    int groups = 0;
  };
  std::vector<std::string> order;
  std::map<std::string, Merged> merged;
  for (const RangeRun& run : runs) {
    for (const auto& r : run.regions) {
      const std::string key = key_of(r.name, r.number);
      auto [it, fresh] = merged.try_emplace(key);
      if (fresh) order.push_back(key);
      Merged& m = it->second;
      if (!m.head) m.head = &r;
      ++m.groups;
      for (std::size_t i = 0; i < r.values.size() && i < run.metrics.size(); ++i) {
        // docs/roofline.md#the-range-profiler: the duration and clocks of the first group that has them.
        if (!m.values.count(run.metrics[i]) || std::isnan(m.values[run.metrics[i]]))
          m.values[run.metrics[i]] = r.values[i];
      }
    }
  }
  // A split metric's total: the sum of its parts where every part was measured, else not available.
  for (auto& [key, m] : merged)
    for (const SplitMetric& split : kSplitMetrics) {
      double sum = 0;
      bool whole = true;
      for (const char* part : split.parts) {
        const auto it = m.values.find(part);
        if (it == m.values.end() || std::isnan(it->second))
          whole = false;
        else
          sum += it->second;
      }
      if (whole) m.values[split.whole] = sum;
    }
  bool named = false;
  for (const auto& [key, m] : merged)
    if (!m.head->name.empty() && m.head->launches > 0) named = true;

  // The rows, through the ncu backend's own rules (docs/roofline.md#flops): an export-shaped table.
  RawExport raw;
  raw.header = {"ID", "Kernel Name"};
  const std::vector<std::string>& metrics = ncu_metrics();
  std::vector<std::string> wanted;
  for (const auto& m : metrics)
    if (m.rfind("launch__", 0) != 0) wanted.push_back(m);
  raw.header.insert(raw.header.end(), wanted.begin(), wanted.end());
  raw.units.assign(raw.header.size(), "");
  // CUPTI evaluates the duration in nanoseconds (its dimension unit), everything else in base units.
  for (std::size_t i = 0; i < raw.header.size(); ++i)
    if (raw.header[i] == "gpu__time_duration.sum") raw.units[i] = "ns";
  std::vector<const Merged*> kept;
  for (const std::string& key : order) {
    const Merged& m = merged.at(key);
    const RangeRun::Region& r = *m.head;
    if (r.launches == 0) continue;          // a region that launched no kernel has nothing to plot
    if (r.name.empty() && named) continue;  // docs/roofline.md#regions: work outside the regions is dropped
    if (static_cast<std::size_t>(m.groups) < runs.size())
      warnings.push_back(
          fmt::format("{}: region {} occurrence {} is in {} of the {} pass groups' runs (the program does "
                      "not repeat itself "
                      "exactly); the figures of the others are left empty",
                      executable, r.name, r.number, m.groups, runs.size()));
    if (!r.closed)
      warnings.push_back(fmt::format(
          "{}: region {} (occurrence {}) was never closed: its row runs until the program ended; close it "
          "with nvtxRangePop or nvtxRangeEnd",
          executable, r.name, r.number));
    std::vector<std::string> fields = {std::to_string(raw.rows.size() + 1), r.kernel};
    for (const auto& w : wanted) {
      const auto it = m.values.find(range_name_of(w));
      fields.push_back(it == m.values.end() || std::isnan(it->second) ? "n/a"
                                                                      : fmt::format("{}", it->second));
    }
    raw.rows.push_back(std::move(fields));
    raw.row_lines.push_back(static_cast<long>(raw.rows.size()));
    kept.push_back(&m);
  }
  if (!named && !kept.empty())
    warnings.push_back(executable +
                       ": the program marks no NVTX region, so its whole run is one row; mark regions with "
                       "nvtxRangePush/Pop (torch.cuda.nvtx.range_push/pop) for one row each");
  std::vector<Row> rows = rows_from_export(raw, executable, executable + " (range profiler)");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const RangeRun::Region& r = *kept[i]->head;
    rows[i].region = r.name;
    rows[i].launches = r.launches;
    rows[i].gpu = first.gpu;
    rows[i].profiler = Profiler::range;
    rows[i].caches = kCachesProgram;  // docs/roofline.md#dram-bytes-and-the-cache-flush
  }
  return rows;
}

}  // namespace diescope::roofline
