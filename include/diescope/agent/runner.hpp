// The agent's outer loop: steps the Agent on time, stores and prints its records, serves /metrics,
// applies retention, and stops cleanly (counters disabled) when its stop descriptor turns readable
// (the CLI's SIGTERM/SIGINT handler writes to it).
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "diescope/agent/agent.hpp"
#include "diescope/agent/host_metrics.hpp"
#include "diescope/agent/http_server.hpp"
#include "diescope/agent/metrics.hpp"
#include "diescope/agent/store.hpp"

namespace diescope::agent {

struct RunnerOptions {
  RecordStore* store = nullptr;              // nullptr: records are not stored
  double retention_days = 30;                // records whose period ended longer ago are deleted; 0 keeps all
  std::FILE* ndjson = nullptr;               // one JSON line per record, written after the store commits
  std::optional<ListenAddress> listen;       // nullopt: no /metrics
  bool linger = false;                       // replay: keep serving after the recording ends, until stopped
  int stop_fd = -1;                          // readable: stop (a byte names the signal, see below)
  std::function<std::string()> stop_reason;  // e.g. "SIGTERM"; asked once the stop fd is readable
  std::function<void(const std::string&)> log;           // one line each, no newline
  std::function<void(const std::string&)> on_listening;  // the bound address, once serving
  // The host probes (docs/agent.md#host-metrics): read every host_interval_ms, published on /metrics
  // at each poll. nullptr: none.
  HostMetrics* host = nullptr;
  double host_interval_ms = recording::kDefaultHostIntervalMs;
  // Attribution (docs/attribution.md#in-the-agent), each empty when off: `annotate` adds who held each
  // GPU to the records before they are stored; `after_write` writes the job records finished by `now`
  // (every one when stopping); `extra_metrics` adds families to /metrics (called on the loop's thread or a
  // serving thread, whenever the exposition is rendered: docs/agent.md#metrics-under-load).
  // None may block: they copy what attribution's own thread gathered.
  std::function<void(std::vector<AgentRecord>&)> annotate;
  std::function<void(recording::TimeNs now, bool stopping)> after_write;
  std::function<std::string(ExpositionFormat)> extra_metrics;
  // Triggered captures (docs/agent.md#triggered-captures), each empty when off: `after_step` runs after
  // each step's records are written, `wake_fds` wake the loop (a request or SIGUSR1 waits), `on_stop`
  // runs after the last records when stopping, `post` serves POST /capture.
  std::function<void()> after_step;
  std::vector<int> wake_fds;
  std::function<void(const std::string& why)> on_stop;
  MetricsServer::PostHandler post;
};

// Runs until the source ends (replay without linger) or the stop fd turns readable. Returns 0.
// Store failures are logged and the agent keeps going (the records still reach /metrics and NDJSON).
int run_agent(Agent& agent, const RunnerOptions& options);

}  // namespace diescope::agent
