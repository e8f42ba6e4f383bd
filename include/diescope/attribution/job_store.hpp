// Job records in the agent's SQLite file, table `jobs` (docs/attribution.md#the-jobs-table), and
// their JSON, CSV, terminal and Prometheus forms.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "diescope/attribution/jobs.hpp"

struct sqlite3;

namespace diescope::attribution {

class JobStore {
 public:
  // Opens (creating the table when `create`) the store. Throws InputError naming the path.
  JobStore(const std::filesystem::path& path, bool create);
  ~JobStore();
  JobStore(const JobStore&) = delete;
  JobStore& operator=(const JobStore&) = delete;
  void add(std::vector<JobRecord>& jobs);  // one transaction; sets ids
  // Jobs that ended at or after `since_ns`, most wasteful first.
  std::vector<JobRecord> list(recording::TimeNs since_ns) const;

 private:
  std::filesystem::path path_;
  sqlite3* db_ = nullptr;
};

nlohmann::json job_to_json(const JobRecord& job);
JobRecord job_from_json(const nlohmann::json& j);
std::string job_to_ndjson(const JobRecord& job);

// `diescope jobs --since T`: a duration ago ("90s", "30m", "24h", "7d") or a UTC time
// ("2026-12-02", "2026-12-02T14:00:00Z"). Throws UsageError naming the text and the forms.
recording::TimeNs parse_since(const std::string& text, recording::TimeNs now_ns);

// `diescope jobs` output (docs/attribution.md#diescope-jobs).
std::string jobs_terminal(const std::vector<JobRecord>& jobs);
std::string jobs_json(const std::vector<JobRecord>& jobs);
std::string jobs_csv(const std::vector<JobRecord>& jobs);

// Per-job /metrics families for the last finished jobs (at most kJobsOnMetrics), labelled with
// dcgm-exporter's names (docs/attribution.md#prometheus-labels). `openmetrics` adds UNIT lines.
inline constexpr std::size_t kJobsOnMetrics = 20;
std::string jobs_metrics(const std::vector<JobRecord>& last_finished, bool openmetrics);

}  // namespace diescope::attribution
