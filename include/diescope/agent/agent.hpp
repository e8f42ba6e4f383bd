// The agent's core: duty cycles, periods and records for every GPU of a source. Deterministic:
// each step() reads the injected clock once, so tests drive it with a fake clock and no sleeping.
//
// Each GPU's time is cut into periods of duty_period_ms, counted from the agent's start. The
// counters go on at the start of each period and off duty_on_ms later (always on when
// duty_on_ms >= duty_period_ms). When a period ends, its records become one MemoryRecording whose
// steady window (marks) is the chip window, from the counters' confirmed start to the agent's stop;
// analyze() turns it into the record. A wall-clock step or a suspend abandons every GPU's period
// and starts afresh, and the next record says why (docs/method.md#known-limits).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "diescope/core/clock.hpp"
#include "diescope/agent/record.hpp"
#include "diescope/collect/feed.hpp"

namespace diescope::agent {

struct AgentSettings {
  double poll_ms = 1000;          // NVML reads and counter drains
  double duty_on_ms = 2000;       // counters on this long ...
  double duty_period_ms = 60000;  // ... at the start of every period (one record per period per GPU)
  const std::vector<CostEntry>* cost_table = nullptr;  // nullptr: the built-in table
  // Reads the host's power source once per poll; empty: read_power_source() (tests pass their own).
  std::function<PowerSource()> read_power;
  // Sees each GPU's batch as it arrives, before the period takes it (a capture's tee:
  // docs/agent.md#triggered-captures). Empty: none.
  std::function<void(std::size_t gpu, const collect::GpuBatch& batch)> on_batch;
};

// One chip window's figures, made once its counters stopped (or its period closed), so that capture
// rules can act on a window a period before its record is written (docs/agent.md#triggered-captures).
struct WindowFigures {
  long seq = 0;  // counts the GPU's windows observed so far; a new window has a higher one
  recording::TimeNs start_ns = 0;
  recording::TimeNs end_ns = 0;
  double die_util_pct = analysis::kNaN;
  double gpu_util_pct = analysis::kNaN;
  double gap_pct = analysis::kNaN;
  double stranded_pct = analysis::kNaN;
  double stranded_idle_pct = analysis::kNaN;
};

// Folds runs of back-to-back chip samples shorter than half of `interval_ns` into spans of at least
// `interval_ns`: units and diagnostics as time-weighted means of their finite values (NaN where none
// is), counts summed. Samples at the interval, and a sample after a gap, are left as they are
// (docs/agent.md#what-a-capture-holds). Pure.
void fold_short_samples(std::vector<recording::OwnedChipSample>& samples, recording::TimeNs interval_ns);

// Throws UsageError for settings the agent cannot run with (the fix names the flag).
void validate_settings(const AgentSettings& settings);

// What /metrics shows beside the latest record.
struct GpuStatus {
  int index = -1;
  std::string uuid;
  std::string model;
  std::string hostname;                // the recording's host: this host, live
  std::string pci_bus_id;              // empty when unknown (a recording that does not say)
  std::vector<std::string> unit_keys;  // the unit table's units, in order
  std::vector<std::string> unit_labels;
  std::optional<AgentRecord> last;  // the latest record
  long records = 0;
  long clock_restarts = 0;  // records abandoned after a wall-clock step or suspend
  long sampler_restarts = 0;
  double counters_on_total_s = 0;  // measured on-time over every closed record
  // Energy over every closed record with a figure, and the part stranded (docs/energy.md#in-the-agent).
  double energy_total_j = 0;
  double stranded_energy_total_j = 0;
  bool counters_on = false;                  // now
  std::optional<WindowFigures> last_window;  // the latest chip window's figures
};

class Agent {
 public:
  Agent(collect::Feed& source, core::Clock& clock, AgentSettings settings);
  ~Agent();
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  // One poll: check the clocks, collect from the source, close every period that has ended, and
  // switch the counters as the schedule says. Returns the records closed in this step.
  std::vector<AgentRecord> step();
  // Stops: disables the counters (waiting for them to confirm) and closes the current periods at
  // now. A period whose counters never came on gives no record. `why` goes into the last records.
  std::vector<AgentRecord> finish(const std::string& why);

  // Keeps GPU `gpu`'s counters on until `until_ns` (source time) whatever the duty cycle says, for a
  // capture; its records' chip windows are unchanged (docs/agent.md#triggered-captures).
  void hold_counters(std::size_t gpu, recording::TimeNs until_ns);

  // Samples GPU `gpu`'s chip counters every `interval_ms` from now on, for a capture; the source's
  // own interval (meta().interval_ms) again ends it. Records keep the source's interval: chip samples
  // shorter than half of it are folded into spans of it before a period takes them, and a sampler
  // restarted for the change counts as on throughout (docs/agent.md#what-a-capture-holds). False where
  // the source cannot change it (a replay, GPM) or the agent has stopped.
  bool sample_interval(std::size_t gpu, double interval_ms);

  // The source time of the next thing due (a poll, the end of a chip window or of a period).
  recording::TimeNs next_due_ns() const;
  // Source time of the latest step.
  recording::TimeNs now_ns() const { return now_ns_; }
  // Replay only: the recording is over and its last period has been closed.
  bool ended() const { return ended_; }
  const std::vector<GpuStatus>& status() const { return status_; }
  const AgentSettings& settings() const { return settings_; }
  collect::Feed& source() { return source_; }

 private:
  struct GpuState;
  void start_period(GpuState& g, recording::TimeNs start);
  void absorb(GpuState& g, collect::GpuBatch& batch);
  std::optional<AgentRecord> close_period(GpuState& g, recording::TimeNs end,
                                          const std::vector<std::string>& extra_notes);
  void restart_all(const core::ClockEvent& event, recording::TimeNs now);
  void schedule(GpuState& g, recording::TimeNs now);
  void switch_columns(GpuState& g, recording::TimeNs at, const std::string& why,
                      std::vector<AgentRecord>& records);
  bool always_on() const;
  void read_power();
  void observe_window(GpuState& g);

  collect::Feed& source_;
  core::Clock& clock_;
  AgentSettings settings_;
  core::ClockWatch watch_;
  std::vector<std::unique_ptr<GpuState>> gpus_;
  std::vector<GpuStatus> status_;
  std::vector<collect::GpuBatch> batches_;
  recording::TimeNs now_ns_ = 0;
  recording::TimeNs next_poll_ns_ = 0;
  bool ended_ = false;
  std::optional<PowerSource> last_power_;            // the latest read of the host's power source
  std::unique_ptr<PowerSourceReader> power_reader_;  // made at the first read (docs/agent.md#wake-ups)
};

}  // namespace diescope::agent
