// Attribution in the agent (docs/attribution.md#in-the-agent): who held each GPU goes into every
// record, a job record is written when a holder leaves, and /metrics gets the per-job families and a
// row per MIG GPU instance. The agent's loop calls the three functions below; each only copies what
// the watcher's own thread gathered, so none of them waits on /proc, NVML's process lists or the kubelet.
#pragma once

#include <cstdio>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "diescope/agent/record.hpp"
#include "diescope/attribution/job_store.hpp"
#include "diescope/attribution/watcher.hpp"

namespace diescope::attribution {

class AgentAttribution {
 public:
  // `store` and `ndjson` may be null (no store, no NDJSON). Starts the watcher's thread.
  AgentAttribution(std::unique_ptr<Watcher> watcher, std::unique_ptr<JobStore> store, std::FILE* ndjson,
                   std::function<void(const std::string&)> log);
  ~AgentAttribution();

  void annotate(std::vector<agent::AgentRecord>& records);
  // Writes the jobs finished by `now` (every open one when `stopping`) to the store, NDJSON and /metrics.
  void write_jobs(recording::TimeNs now, bool stopping);
  // Per-job families (the last kJobsOnMetrics finished jobs), holders per GPU and MIG instance rows.
  std::string metrics(bool openmetrics) const;
  Watcher& watcher() { return *watcher_; }

 private:
  std::unique_ptr<Watcher> watcher_;
  std::unique_ptr<JobStore> store_;
  std::FILE* ndjson_;
  std::function<void(const std::string&)> log_;
  mutable std::mutex mutex_;
  std::deque<JobRecord> last_;
  std::vector<std::string> said_;  // notes already logged
};

// The holders and MIG rows of a snapshot as /metrics families (no job labels: one series per GPU and
// per GPU instance and unit).
std::string snapshot_metrics(const WatchSnapshot& snapshot, bool openmetrics);

}  // namespace diescope::attribution
