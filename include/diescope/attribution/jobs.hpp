// A record per job (docs/attribution.md#job-records): when a holder leaves a GPU, its time on the GPU,
// the GPU's figures over that time (from the agent's records), the capacity it stranded and the energy
// it drew. Deterministic: tests feed observations and records and check each figure by hand.
#pragma once

#include <deque>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "diescope/agent/record.hpp"
#include "diescope/attribution/holder.hpp"

namespace diescope::attribution {

inline constexpr int kJobRecordSchema = 1;
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

enum class ChipSourceSeen { none, pm, gpm, both };
std::string_view to_string(ChipSourceSeen source);

struct JobRecord {
  std::int64_t id = 0;  // the store's row id
  Holder holder;
  int gpu_index = -1;
  std::string gpu_uuid;
  std::optional<unsigned> gpu_instance_id;  // MIG
  std::string gpu_instance_profile;
  recording::TimeNs start_ns = 0;
  recording::TimeNs end_ns = 0;
  double gpu_seconds = 0;      // held time times its share of the GPU
  bool shared = false;         // another holder was on the GPU at some poll: the split is approximate
  double mean_share = 1;       // GPU-seconds over held seconds
  double gpu_util_pct = kNaN;  // the GPU's, over the records that overlap the job
  double die_util_pct = kNaN;
  double gap_pct = kNaN;
  std::string limiting_unit;  // the unit limiting for the longest time; empty when none
  double stranded_gpu_seconds = kNaN;
  double energy_j = kNaN;
  std::string energy_reason;  // why energy is NaN
  // Energy spent while DIE-Util was low, from the agent's records (docs/energy.md#in-job-records).
  double stranded_energy_j = kNaN;
  double coverage_pct = 0;  // of the job's time, the share with a chip figure (DIE-Util)
  ChipSourceSeen chip_source = ChipSourceSeen::none;
  std::vector<std::string> notes;
  // Capture folders of the agent's triggered captures on this GPU while the job held it
  // (docs/agent.md#triggered-captures).
  std::vector<std::string> captures;
  int schema = kJobRecordSchema;
};

// One holder on one GPU at one poll, with its share of the GPU since the previous poll.
struct HolderShare {
  Holder holder;
  double share = 1;
};

class JobTracker {
 public:
  // How long a finished job waits for the agent's record that covers its end, after which it is
  // written with the records it has (docs/attribution.md#job-records).
  explicit JobTracker(recording::TimeNs wait_for_records_ns);

  // Every poll, per GPU (or MIG instance): who holds it now, and NVML's energy counter (mJ; NaN when
  // unreadable). A holder absent from this poll has left: its job ends at the last poll that listed it.
  void observe(int gpu_index, const std::string& gpu_uuid, std::optional<unsigned> gpu_instance,
               const std::string& instance_profile, recording::TimeNs now_ns,
               const std::vector<HolderShare>& holders, double energy_mj,
               const std::string& energy_reason = {});
  // The agent's records, as they close.
  void add_record(const agent::AgentRecord& record);
  // Jobs whose figures are complete (or whose wait is over); `all` ends and returns every job (the
  // agent is stopping).
  std::vector<JobRecord> take_finished(recording::TimeNs now_ns, bool all = false);
  std::size_t open_jobs() const;
  // A capture started on GPU `gpu_index` at `start_ns` into `folder`: every job open on that GPU, and
  // every one that ended at or after the start but is not written yet, links to it.
  void link_capture(int gpu_index, recording::TimeNs start_ns, const std::string& folder);

 private:
  struct Open {
    JobRecord job;
    recording::TimeNs last_seen_ns = 0;
    double held_s = 0;
  };
  struct Slot {  // one GPU or MIG instance
    std::map<std::string, Open> open;
    bool polled = false;
    recording::TimeNs last_poll_ns = 0;
    double last_energy_mj = kNaN;
  };
  void finish_figures(JobRecord& job) const;
  recording::TimeNs wait_ns_;
  std::map<std::string, Slot> slots_;                           // "gpu<N>" or "gpu<N>/gi<M>"
  std::map<int, std::deque<agent::AgentRecord>> records_;       // per GPU index, recent, bounded
  std::vector<std::pair<recording::TimeNs, JobRecord>> ended_;  // waiting for records
};

// Most wasteful first: GPU-seconds stranded, descending; NaN last; then the later end first.
void sort_most_wasteful(std::vector<JobRecord>& jobs);

}  // namespace diescope::attribution
