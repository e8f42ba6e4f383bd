#include "diescope/agent/command.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "diescope/agent/replay_feed.hpp"
#include "diescope/collect/live_collection.hpp"
#include "diescope/core/error.hpp"

namespace diescope::agent {

AgentSettings agent_settings(const AgentCommand& a) {
  AgentSettings settings;
  settings.poll_ms = a.poll_ms;
  settings.duty_on_ms = a.duty_on_ms;
  settings.duty_period_ms = a.duty_period_ms;
  validate_settings(settings);
  return settings;
}

std::optional<ListenAddress> check_agent_command(const AgentCommand& a) {
  if (a.db_given && a.db.empty())
    throw core::UsageError(
        "--db was given an empty path",
        "name the record store's file, e.g. --db /var/lib/diescope/agent.db; leave --db out for "
        "the default, or use --no-db to keep no store");
  if (a.no_db && a.db_given)
    throw core::UsageError("--no-db and --db " + a.db + " contradict each other", "keep one of them");
  if (a.no_listen && a.listen_given)
    throw core::UsageError("--no-listen and --listen " + a.listen + " contradict each other",
                           "keep one of them");
  if (!(a.retention_days >= 0)) {
    throw core::UsageError("--retention-days must be 0 (keep everything) or more",
                           "e.g. --retention-days 30");
  }
  if (!a.replay.empty() && (a.sampler.size() || !a.sampler_args.empty() || !a.gpus.empty())) {
    throw core::UsageError("--sampler, --sampler-arg and --gpus are for live monitoring, not --replay",
                           "drop them, or drop --replay to monitor this host's GPUs");
  }
  if (a.replay.empty() && (a.replay_loop || a.linger || a.replay_speed != 1.0)) {
    throw core::UsageError("--replay-speed, --replay-loop and --linger need --replay FILE",
                           "add --replay FILE");
  }
  std::optional<ListenAddress> listen;
  if (!a.no_listen) listen = parse_listen_address(a.listen);
  if (!a.replay.empty() && !a.labels_file.empty())
    throw core::UsageError("--labels-file is for live monitoring: a replay has no processes to label",
                           "drop --labels-file, or drop --replay");
  return listen;
}

std::unique_ptr<RecordStore> open_agent_store(const AgentCommand& a, const Log& log) {
  if (a.no_db) return nullptr;
  const std::filesystem::path path = a.db.empty() ? default_store_path() : std::filesystem::path(a.db);
  auto store = std::make_unique<RecordStore>(path, a.db.empty());
  log("records go to " + path.string());
  return store;
}

std::unique_ptr<collect::Feed> open_agent_feed(const AgentCommand& a, const core::ClockReadings& now,
                                               const Log& log) {
  std::unique_ptr<collect::Feed> feed;
  if (!a.replay.empty()) {
    ReplayOptions options;
    for (const auto& f : a.replay) options.files.emplace_back(f);
    options.speed = a.replay_speed;
    options.loop = a.replay_loop;
    feed = std::make_unique<ReplayFeed>(options, now);
    log(fmt::format("replaying {} recording(s) at {}x{}", a.replay.size(), a.replay_speed,
                    a.replay_loop ? ", looping" : ""));
  } else {
    collect::LiveSessionOptions options;
    options.interval_ms = a.interval_ms;
    options.poll_ms = a.poll_ms;
    options.power_reads = collect::PowerReads::when_due;  // docs/agent.md#nvml-reads
    options.sampler_executable = a.sampler;
    options.sampler_extra_args = a.sampler_args;
    options.gpus = a.gpus;
    options.chip.source =
        collect::chip_source_setting_from_name(a.source).value_or(collect::ChipSourceSetting::automatic);
    options.log = log;
    feed = collect::open_live_session(options);
    log(fmt::format("monitoring {} GPU(s)", feed->gpu_count()));
  }
  log(fmt::format("counters on {} ms of every {} ms; drain every {} ms",
                  std::min(a.duty_on_ms, a.duty_period_ms), a.duty_period_ms, a.poll_ms));
  return feed;
}

std::unique_ptr<HostMetrics> open_agent_host_metrics(const AgentCommand& a, const Log& log) {
  // The host probes read this host, so only a live agent runs them (docs/agent.md#host-metrics).
  if (!a.replay.empty() || !(a.host_interval_ms > 0)) return nullptr;
  auto host = std::make_unique<HostMetrics>();
  log(fmt::format("host probes every {} ms, on /metrics as diescope_host_metric", a.host_interval_ms));
  return host;
}

RunnerOptions agent_runner_options(const AgentCommand& a, HostMetrics* host, RecordStore* store,
                                   const std::optional<ListenAddress>& listen, const Log& log) {
  RunnerOptions options;
  options.host = host;
  options.host_interval_ms = a.host_interval_ms;
  options.store = store;
  options.retention_days = a.retention_days;
  options.ndjson = a.ndjson ? stdout : nullptr;
  options.listen = listen;
  options.linger = a.linger;
  options.log = log;
  return options;
}

}  // namespace diescope::agent
