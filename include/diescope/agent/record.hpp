// One agent record: one GPU over one duty period (docs/agent.md#duty-cycles-and-records).
// Built from the analysis of that period's records, with the chip window (the time the counters
// were on) as the analysed span. Plain data plus its JSON form (the NDJSON line and the store's
// record_json column; docs/agent.md documents every field).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "diescope/agent/cost_table.hpp"
#include "diescope/analysis/result.hpp"

namespace diescope::agent {

// The agent record's own format version (changes with its fields, not with the method).
inline constexpr int kAgentRecordSchema = 2;

struct UnitFigure {
  std::string key;
  std::string label;
  double mean_pct = analysis::kNaN;
  double availability_pct = analysis::kNaN;
  std::vector<std::string> flags;  // stand_in_counter, different_measure
};

// Why the previous record was abandoned and this one started afresh.
struct Restart {
  std::string kind;  // "wall_clock_step", "suspend"
  recording::TimeNs step_ns = 0;
  recording::TimeNs at_ns = 0;  // when the agent noticed it (wall clock after the step)
  std::string text;
};

// Who held the GPU during the period (docs/attribution.md#labels-everywhere): filled by attribution.
struct RecordHolder {
  std::string kind;  // "pod", "slurm_job", "container", "process"
  std::string key;
  std::string name;
  std::vector<std::pair<std::string, std::string>> labels;
  std::vector<unsigned> pids;
};

struct AgentRecord {
  std::int64_t id = 0;  // the store's row id; 0 before it is stored
  // Which GPU.
  int gpu_index = -1;
  std::string gpu_uuid;
  std::string gpu_model;
  std::string chip;
  std::string unit_table;
  std::string source;  // "live" or "replay"

  // The period and its chip window (ns, CLOCK_REALTIME or the recording's timeline in replay).
  recording::TimeNs period_start_ns = 0;
  recording::TimeNs period_end_ns = 0;
  std::optional<recording::TimeNs> window_start_ns;  // nullopt: the counters were never on in this period
  std::optional<recording::TimeNs> window_end_ns;
  double counters_on_s = 0;  // measured: from asking for the counters to their confirmed stop

  // Settings.
  double duty_on_ms = 0;  // 0 and 0: always on
  double duty_period_ms = 0;
  double interval_ms = recording::kDefaultIntervalMs;
  double poll_ms = 1000;

  // The chip window's results.
  double die_util_pct = analysis::kNaN;
  std::string die_util_reason;
  std::vector<UnitFigure> units;
  std::optional<std::string> limiting_unit;
  std::string limiting_reason;
  double chip_coverage_pct = analysis::kNaN;
  double chip_scheduled_s = analysis::kNaN;
  analysis::CoverageGate chip_coverage_gate = analysis::CoverageGate::pass;
  std::string partial_wording;
  std::int64_t samples_read = 0;
  std::int64_t samples_used = 0;

  // GPU-Util over the same time, and the headline (whole tenths turned back into percent).
  double gpu_util_pct = analysis::kNaN;
  double gpu_util_coverage_pct = analysis::kNaN;
  std::string gpu_util_reason;
  std::string gpu_util_source;
  double gap_pct = analysis::kNaN;
  double stranded_pct = analysis::kNaN;
  double stranded_idle_pct = analysis::kNaN;
  double stranded_active_pct = analysis::kNaN;
  bool gap_within_noise_floor = false;
  std::string gap_reason;
  std::string split_reason;

  // Hardware over the chip window.
  analysis::ClockStats sm_clock;
  analysis::ClockStats mem_clock;
  std::optional<std::vector<std::string>> throttle_reasons;
  double power_limit_min_w = analysis::kNaN;
  double power_limit_max_w = analysis::kNaN;

  // Energy (docs/energy.md): over the whole period, from NVML's counter or the power draw
  // (energy_source, "none" with energy_reason when neither); stranded over the chip window's usable
  // samples whose DIE-Util was under the threshold.
  double energy_j = analysis::kNaN;
  std::string energy_source = "none";
  std::string energy_reason;
  double mean_power_w = analysis::kNaN;
  double stranded_energy_j = analysis::kNaN;
  double stranded_energy_pct = analysis::kNaN;

  // Cost: the estimate or the reason there is none.
  std::optional<CostEntry> cost;
  std::string cost_reason;

  std::optional<Restart> restart;     // this record starts afresh after a clock event
  std::vector<std::string> notes;     // sampler crashes and restarts, analysis notes
  std::vector<RecordHolder> holders;  // empty without attribution, or when nothing held the GPU

  int method = 0;
  int schema = kAgentRecordSchema;
  std::string tool_version;
};

struct RecordContext {
  double counters_on_s = 0;
  double poll_ms = 1000;
  std::string source;
  std::optional<Restart> restart;
  std::vector<std::string> extra_notes;
  const std::vector<CostEntry>* cost_table = nullptr;  // nullptr: the built-in table
  // The host's power source over the period; an estimate needs mains (docs/method.md#measurement-cost).
  PowerOverPeriod power = PowerOverPeriod::unreadable;
};

// Builds the record from the analysis of one period whose chip window is the analysis's steady
// window (marks at the counters' on and off); without a window it takes the whole period.
AgentRecord make_record(const analysis::Analysis& analysis, const RecordContext& context);

nlohmann::json record_to_json(const AgentRecord& record);
// One line, no newline.
std::string record_to_ndjson(const AgentRecord& record);

}  // namespace diescope::agent
