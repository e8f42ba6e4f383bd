// `diescope agent`'s set-up from its options (docs/agent.md): the checks that refuse contradicting
// options before anything is switched on, the record store, the feed (the live session or a replay),
// the host probes and the runner's options. The command line parses the flags into AgentCommand and
// adds what other parts bring (attribution, triggered captures).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "diescope/agent/agent.hpp"
#include "diescope/agent/host_metrics.hpp"
#include "diescope/agent/http_server.hpp"
#include "diescope/agent/runner.hpp"
#include "diescope/agent/store.hpp"
#include "diescope/collect/feed.hpp"
#include "diescope/core/clock.hpp"

namespace diescope::agent {

// What `diescope agent`'s flags set (their help: the command line).
struct AgentCommand {
  std::vector<std::string> replay;
  double replay_speed = 1.0;
  bool replay_loop = false;
  bool linger = false;
  double poll_ms = 0;  // --drain-ms; this and the other shared defaults come from the command line's rules
  double duty_on_ms = 2000;
  double duty_period_ms = 60000;
  double interval_ms = 0;
  std::string db;
  bool no_db = false;
  double retention_days = 30;
  bool ndjson = false;
  std::string listen = "127.0.0.1:9402";
  bool no_listen = false;
  bool db_given = false;      // --db was on the command line (even as "")
  bool listen_given = false;  // --listen was on the command line
  std::string sampler;
  std::vector<std::string> sampler_args;
  std::vector<int> gpus;
  std::string source = "auto";
  double host_interval_ms = 0;
  std::string labels_file;
  bool no_attribution = false;
  std::string kubelet_socket;
  std::string rules;  // --rules FILE: triggered captures (docs/agent.md#triggered-captures)
};

using Log = std::function<void(const std::string&)>;

// The agent's duty and drain settings, checked (validate_settings).
AgentSettings agent_settings(const AgentCommand& command);
// Refuses options that contradict each other or need another (UsageError); returns where /metrics
// is served, nullopt with --no-listen.
std::optional<ListenAddress> check_agent_command(const AgentCommand& command);
// The record store (null with --no-db); a bad path fails here, before any counter is switched on.
std::unique_ptr<RecordStore> open_agent_store(const AgentCommand& command, const Log& log);
// The replay of --replay, or this host's live session; says which, and the duty cycle, in the log.
std::unique_ptr<collect::Feed> open_agent_feed(const AgentCommand& command, const core::ClockReadings& now,
                                               const Log& log);
// The host probes (docs/agent.md#host-metrics): a live agent only; null when off.
std::unique_ptr<HostMetrics> open_agent_host_metrics(const AgentCommand& command, const Log& log);
// The runner's options the flags set; the caller adds how it is stopped and what other parts add.
RunnerOptions agent_runner_options(const AgentCommand& command, HostMetrics* host, RecordStore* store,
                                   const std::optional<ListenAddress>& listen, const Log& log);

}  // namespace diescope::agent
