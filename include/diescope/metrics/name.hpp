// Metric names in CUPTI's grammar, extended to host metrics (docs/metrics.md):
//
//   [GROUP.][Pass.]<entity>__<counter>[.<rollup>][.<submetric>]
//
// e.g. "dram__bytes.sum.per_second", "smsp__average_warps_active_per_cycle_active.ratio",
// "TPC.TriageCompute.sm__inst_executed_pipe_fma_realtime.avg.pct_of_peak_sustained_elapsed".
// Parsing checks the syntax; which rollups and submetrics are legal depends on the metric's type,
// which the name alone does not always decide (".avg.pct_of_peak_sustained_elapsed" suits a counter
// and a throughput), so that check takes the type.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "diescope/metrics/expected.hpp"

namespace diescope::metrics {

enum class MetricType { counter, ratio, throughput };
enum class Rollup { sum, avg, min, max };  // aggregation across the entity's instances

std::string_view to_string(MetricType type);
std::string_view to_string(Rollup rollup);

struct MetricName {
  std::string group;    // CUPTI counter group, "TPC"; empty when absent
  std::string pass;     // CUPTI pass qualifier, "TriageCompute"; empty when absent
  std::string entity;   // hardware or host unit: "sm", "dram", "cpu", "proc"
  std::string counter;  // the event: "cycles_active", "rss_bytes"
  std::optional<Rollup> rollup;
  std::string submetric;  // "per_second", "pct", "peak_sustained_active.per_second"; empty when absent

  std::string base() const;  // qualifiers and entity__counter, without rollup or submetric
  std::string full() const;  // the whole name; parse(full()) gives this name back
  bool operator==(const MetricName&) const = default;
};

// Syntax only: parts present, characters legal, "__" once, rollup known, submetric known to some type.
Expected<MetricName> parse_metric_name(std::string_view text);

// The type rules (docs/metrics.md#types-and-their-legal-suffixes, checked against CUPTI's host API
// lists): counters take a rollup and then
// an optional transform; ratios take no rollup and one of ratio/pct/max_rate; throughputs take a rollup
// and a pct_of_peak_* submetric. Empty when legal, else the reason.
std::optional<MetricError> check_suffix(const MetricName& name, MetricType type);

// parse_metric_name followed by check_suffix.
Expected<MetricName> parse_metric_name(std::string_view text, MetricType type);

// The types under which the name's suffix is legal (in counter, ratio, throughput order).
std::vector<MetricType> types_allowing(const MetricName& name);

// Submetrics that express the value as a percent of a peak (pct, pct_of_peak_*).
bool is_percent_submetric(std::string_view submetric);

}  // namespace diescope::metrics
