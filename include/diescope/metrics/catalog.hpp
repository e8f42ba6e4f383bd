// The catalog: every metric name diescope reads or derives, with its type, unit, peak and scope.
// It is the single source of names: unit tables, collectors and renderers look names up here, and
// docs/metrics.md's table is generated from it (a test keeps them equal).
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "diescope/metrics/descriptor.hpp"
#include "diescope/metrics/expected.hpp"

namespace diescope::metrics {

enum class Source {
  cupti,    // CUPTI PM sampling, device-wide chip counters
  nvml,     // NVML readings
  procfs,   // host probes: /proc and /sys
  derived,  // computed by diescope from other catalog metrics (e.g. the mean of the FMA pipe's halves)
};
std::string_view to_string(Source source);

// How a metric's peak is known. Host peaks depend on the machine, so some are resolved at run time.
struct PeakRule {
  enum class Kind { none, fixed, per_cpu, metric };
  Kind kind = Kind::none;
  double value = 0;         // fixed: the peak; per_cpu: the peak per logical CPU
  std::string_view metric;  // metric: the catalog name whose reading is the peak
  std::string_view reason;  // none: why there is no peak

  static constexpr PeakRule fixed_at(double v) { return {Kind::fixed, v, {}, {}}; }
  static constexpr PeakRule per_logical_cpu(double v) { return {Kind::per_cpu, v, {}, {}}; }
  static constexpr PeakRule from_metric(std::string_view m) { return {Kind::metric, 0, m, {}}; }
  static constexpr PeakRule unknown(std::string_view why) { return {Kind::none, 0, {}, why}; }
};
std::string describe(
    const PeakRule& rule);  // "100", "100 per logical CPU", "mem__capacity_bytes", "none: ..."

struct CatalogEntry {
  std::string_view name;  // full name in the grammar of name.hpp
  MetricType type;
  Unit unit;
  Scope::Kind scope;  // the kind of scope its values come with
  Source source;
  PeakRule peak;
  std::string_view label;  // what people call it: "FP32 (FMA pipe)", "GPU-Util"
  std::string_view note;   // what it measures, and what a reader must know
};

std::span<const CatalogEntry> catalog();

// nullptr when the name is not in the catalog.
const CatalogEntry* find_metric(std::string_view name);

// The entry, or why not: the parse error for a malformed name, or "unknown"; either way followed by
// the closest known names when some are near.
Expected<const CatalogEntry*> lookup_metric(std::string_view name);

// Up to `limit` catalog names nearest to `name` by edit distance, nearest first; only names within
// half of `name`'s length, so an unrelated name gets no hint.
std::vector<std::string_view> closest_metric_names(std::string_view name, std::size_t limit = 3);

// What resolving a host-dependent peak needs.
struct PeakInputs {
  int logical_cpus = 0;                                 // 0: unknown
  std::map<std::string, double, std::less<>> readings;  // latest value by name, e.g. mem__capacity_bytes
};

// The descriptor for one series of a catalog metric. Refuses unknown names and a scope of the wrong
// kind (a per-process metric needs Scope::process). A peak that cannot be resolved is absent with
// the reason, never 0.
Expected<MetricDescriptor> describe_metric(std::string_view name, const Scope& scope,
                                           const PeakInputs& inputs = {});

// Markdown table of the whole catalog, as docs/metrics.md carries it.
std::string catalog_markdown_table();

}  // namespace diescope::metrics
