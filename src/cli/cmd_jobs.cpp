// `diescope jobs`: the agent's job records, most wasteful first (docs/attribution.md#diescope-jobs).
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "command.hpp"
#include "diescope/agent/store.hpp"
#include "diescope/attribution/job_store.hpp"
#include "diescope/core/clock.hpp"
#include "diescope/core/error.hpp"

namespace diescope::cli {
namespace {

struct JobsArgs {
  std::string db;
  std::string since;
  std::string formats = "terminal";
};

int run(const JobsArgs& a) {
  std::vector<std::string> formats;
  std::stringstream list(a.formats);
  std::string f;
  while (std::getline(list, f, ',')) {
    if (f != "terminal" && f != "json" && f != "csv")
      throw core::UsageError("--format " + f + " is not a jobs format",
                             "give terminal, json or csv (or a list: terminal,csv)");
    formats.push_back(f);
  }
  if (formats.empty()) throw core::UsageError("--format is empty", "give terminal, json or csv");
  const recording::TimeNs since =
      a.since.empty() ? 0 : attribution::parse_since(a.since, core::realtime_ns());
  const std::filesystem::path path = a.db.empty() ? agent::default_store_path() : std::filesystem::path(a.db);
  const attribution::JobStore store(path, false);
  const std::vector<attribution::JobRecord> jobs = store.list(since);
  for (const std::string& format : formats) {
    if (format == "terminal")
      std::cout << attribution::jobs_terminal(jobs);
    else if (format == "json")
      std::cout << attribution::jobs_json(jobs);
    else
      std::cout << attribution::jobs_csv(jobs);
  }
  return 0;
}

std::function<int()> setup_jobs(Args sub) {
  auto args = std::make_shared<JobsArgs>();
  sub.text("--db", args->db,
           "the agent's record store (default: the agent's, as `diescope agent --help` says)")
      .type_name("PATH");
  sub.text("--since", args->since,
           "only jobs that ended since T: a duration ago (24h, 7d) or a UTC time (2026-12-02T14:00:00Z)")
      .type_name("T");
  sub.text("--format", args->formats, "terminal, json or csv, or a list of them (default terminal)")
      .type_name("LIST");
  return [args] { return run(*args); };
}

const CommandRegistrar registrar{
    Command{"jobs", 62, setup_jobs, "list the agent's job records (who held each GPU), most wasteful first"}};

}  // namespace
}  // namespace diescope::cli
