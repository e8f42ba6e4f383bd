// What enabling the counters costs the measured work (docs/method.md#measurement-cost). An agent
// record carries an estimate only for a GPU model, sampling interval and duty setting the table
// holds; every other record carries the reason there is none. The figures live in
// src/agent/cost_table.cpp beside the GPU model, interval and method they were measured with.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "diescope/agent/power_source.hpp"
#include "diescope/collect/run.hpp"

namespace diescope::agent {

// How a row's rounds were timed (docs/agent.md#cost-rows-a-record-cites).
enum class CostTiming {
  workload_throughput,  // the workload's own rate over rounds of seconds (training steps per second)
  cuda_events,          // CUDA events around a fixed number of launches of a workload of stable throughput
};

// One measured setting: the 95% t-interval of the mean slowdown of a real workload, in percent.
struct CostEntry {
  std::string gpu_model;   // NVML's name, e.g. "NVIDIA H200"
  double interval_ms = 0;  // chip sampling interval the counters ran at
  double duty_on_ms = 0;   // 0 and 0: counters always on
  double duty_period_ms = 0;
  double slowdown_lo_pct = 0;  // lower end of the 95% interval
  double slowdown_hi_pct = 0;  // upper end
  int rounds = 0;              // interleaved rounds per setting (after a discarded warm-up)
  double round_s = 0;          // length of one round
  std::string workload;        // what ran, e.g. "ResNet-50 AMP training"
  std::string measured;        // where the raw rounds are (bench/results/...) and when
  // The chip source that ran: CUPTI PM sampling or NVML GPM.
  collect::ChipSource source = collect::ChipSource::pm;
  CostTiming timing = CostTiming::workload_throughput;
  // An interval that includes zero cannot be told apart from run-to-run noise.
  bool within_noise() const { return slowdown_lo_pct <= 0 && slowdown_hi_pct >= 0; }
};

// The table. Empty of figures until a measurement on the named GPU lands
// (docs/agent.md#cost-rows-a-record-cites).
const std::vector<CostEntry>& cost_table();

struct CostVerdict {
  std::optional<CostEntry> estimate;
  std::string reason;  // why there is no estimate; empty when there is one
};

// The estimate for a record at this GPU model, setting and chip source, or the reason there is none.
// A duty setting of on >= period (or 0/0) means counters always on. Where several rows match, the
// rows timed by CUDA events on workloads of stable throughput (CostTiming::cuda_events) come first,
// because only they resolve a cost of a fraction of a percent; rows timed by a workload's own
// throughput answer only a setting no such row covers. Among the rows that answer, the one with the
// highest upper end is the record's estimate: the most the counters were seen to cost
// (docs/agent.md#cost-rows-a-record-cites). `table` defaults to cost_table(). Every row was measured on mains
// power, so a record on battery, whose power source changed, or whose source could not be read gets
// no estimate (docs/method.md#measurement-cost).
CostVerdict cost_for(const std::string& gpu_model, double interval_ms, double duty_on_ms,
                     double duty_period_ms, PowerOverPeriod power,
                     const std::vector<CostEntry>* table = nullptr,
                     collect::ChipSource source = collect::ChipSource::pm);

}  // namespace diescope::agent
