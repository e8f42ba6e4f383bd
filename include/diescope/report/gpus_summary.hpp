// Several GPUs measured by one run: the figures of each GPU's report side by side, the least-used
// GPU, the gap between GPUs, which GPUs were busy, and NVLink traffic where the recording counted
// it (docs/method.md#several-gpus). Built from the per-GPU report.json documents only, so it reads
// the same figures the per-GPU headlines print.
#pragma once

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace diescope::report {

// A GPU counts as busy when its GPU-Util over the summarised span is at least this (DIE-Util when
// GPU-Util is not available); docs/method.md#several-gpus.
inline constexpr double kBusyMinPct = 5.0;

struct GpuFigures {
  int index = -1;
  std::string uuid;
  std::string model;
  std::string span;    // "window" (the steady window was found) or "run"
  std::string report;  // where its report.json is, for the reader
  // One decimal, as the GPU's headline prints them; NaN when the headline has none.
  double gpu_util_pct = std::numeric_limits<double>::quiet_NaN();
  double die_util_pct = std::numeric_limits<double>::quiet_NaN();
  std::string limiting_unit;  // label; empty when none
  // Counted bytes per second over the span; NaN with the reason when the recording has no count.
  double nvlink_tx_bytes_per_s = std::numeric_limits<double>::quiet_NaN();
  double nvlink_rx_bytes_per_s = std::numeric_limits<double>::quiet_NaN();
  std::string nvlink_reason;
};

struct GpusSummary {
  std::vector<GpuFigures> gpus;   // by index
  std::optional<int> least_used;  // index of the lowest DIE-Util (ties: the lowest index)
  std::optional<int> most_used;   // index of the highest DIE-Util (ties: the lowest index)
  std::string least_used_reason;  // when least_used is empty
  double gap_points = std::numeric_limits<double>::quiet_NaN();  // highest DIE-Util - lowest, one decimal
  std::vector<int> busy;     // GPU-Util (or DIE-Util) at least kBusyMinPct
  std::vector<int> idle;     // below it
  std::vector<int> unknown;  // neither figure available
  std::string busy_wording;  // "every GPU was busy", "only GPU 0 was busy (...)", ...
};

// The figures of one GPU's report (a report.json document as build_report makes it).
GpuFigures gpu_figures(const nlohmann::json& report, const std::string& report_path);

// The rules of docs/method.md#several-gpus over the GPUs of one run.
GpusSummary summarise_gpus(std::vector<GpuFigures> gpus);

// gpus.json: the summary as data (nulls with reasons, never NaN), and the text `run` prints.
nlohmann::json gpus_summary_json(const GpusSummary& summary);
std::string gpus_summary_text(const GpusSummary& summary);

}  // namespace diescope::report
