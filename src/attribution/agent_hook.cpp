// docs/attribution.md#in-the-agent and #prometheus-labels
#include "diescope/attribution/agent_hook.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "diescope/agent/metrics.hpp"

namespace diescope::attribution {

AgentAttribution::AgentAttribution(std::unique_ptr<Watcher> watcher, std::unique_ptr<JobStore> store,
                                   std::FILE* ndjson, std::function<void(const std::string&)> log)
    : watcher_(std::move(watcher)), store_(std::move(store)), ndjson_(ndjson), log_(std::move(log)) {
  watcher_->start();
}

AgentAttribution::~AgentAttribution() {
  watcher_->stop();
}

void AgentAttribution::annotate(std::vector<agent::AgentRecord>& records) {
  if (!records.empty()) watcher_->annotate(records);
  // Notes (the kubelet's state, label changes, MIG) are logged once each.
  for (const std::string& note : watcher_->snapshot().notes) {
    if (std::find(said_.begin(), said_.end(), note) != said_.end()) continue;
    said_.push_back(note);
    if (log_) log_("attribution: " + note);
  }
}

void AgentAttribution::write_jobs(recording::TimeNs now, bool stopping) {
  if (stopping) watcher_->stop();  // its last poll is in; nothing more will come
  std::vector<JobRecord> jobs = watcher_->take_finished(now, stopping);
  if (jobs.empty()) return;
  if (store_) {
    try {
      store_->add(jobs);
    } catch (const std::exception& e) {
      if (log_) log_(std::string("job records: ") + e.what() + " (they still go to /metrics and NDJSON)");
    }
  }
  if (ndjson_) {
    for (const JobRecord& j : jobs) {
      const std::string line = job_to_ndjson(j) + "\n";
      std::fwrite(line.data(), 1, line.size(), ndjson_);
    }
    std::fflush(ndjson_);
  }
  std::lock_guard lock(mutex_);
  for (JobRecord& j : jobs) {
    last_.push_back(std::move(j));
    if (last_.size() > kJobsOnMetrics) last_.pop_front();
  }
}

std::string AgentAttribution::metrics(bool openmetrics) const {
  std::vector<JobRecord> last;
  {
    std::lock_guard lock(mutex_);
    last.assign(last_.begin(), last_.end());
  }
  return snapshot_metrics(watcher_->snapshot(), openmetrics) + jobs_metrics(last, openmetrics);
}

std::string snapshot_metrics(const WatchSnapshot& snap, bool openmetrics) {
  if (snap.gpus.empty()) return {};
  std::string out =
      "# HELP diescope_gpu_holders Holders (pods, Slurm jobs, containers, processes) on the GPU at the "
      "latest poll.\n"
      "# TYPE diescope_gpu_holders gauge\n";
  std::string mig;
  for (const GpuHolders& g : snap.gpus) {
    std::string labels =
        fmt::format("gpu=\"{}\",UUID=\"{}\"", g.gpu_index, agent::escape_label_value(g.uuid));
    if (g.gpu_instance_id)
      labels += fmt::format(",GPU_I_ID=\"{}\",GPU_I_PROFILE=\"{}\"", *g.gpu_instance_id,
                            agent::escape_label_value(g.gpu_instance_profile));
    out += fmt::format("diescope_gpu_holders{{{}}} {}\n", labels, g.holders.size());
    for (const collect::GpmUnitReading& u : g.instance_units)
      mig += fmt::format("diescope_gpu_instance_unit_percent{{{},unit=\"{}\"}} {}\n", labels,
                         agent::escape_label_value(u.key),
                         std::isfinite(u.pct) ? fmt::format("{}", u.pct) : "NaN");
  }
  if (!mig.empty()) {
    out +=
        "# HELP diescope_gpu_instance_unit_percent A MIG GPU instance's unit busy percent, from GPM's MIG "
        "sampling.\n"
        "# TYPE diescope_gpu_instance_unit_percent gauge\n";
    if (openmetrics) out += "# UNIT diescope_gpu_instance_unit_percent percent\n";
    out += mig;
  }
  return out;
}

}  // namespace diescope::attribution
