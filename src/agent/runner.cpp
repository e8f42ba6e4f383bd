#include "diescope/agent/runner.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <mutex>
#include <vector>

#include "diescope/agent/metrics.hpp"
#include "diescope/collect/live_driver.hpp"
#include "diescope/core/clock.hpp"

namespace diescope::agent {

namespace {

constexpr recording::TimeNs kRetentionEveryNs = 3600 * recording::kNsPerSecond;

}  // namespace

int run_agent(Agent& agent, const RunnerOptions& options) {
  auto log = [&](const std::string& line) {
    if (options.log) options.log(line);
  };
  AgentInfo info;
  info.source = agent.source().kind();
  info.duty_on_ms = std::min(agent.settings().duty_on_ms, agent.settings().duty_period_ms);
  info.duty_period_ms = agent.settings().duty_period_ms;
  info.poll_ms = agent.settings().poll_ms;

  std::vector<HostFigure> host_snapshot;
  const recording::TimeNs host_step_ns =
      options.host
          ? std::max<recording::TimeNs>(recording::kNsPerMs, std::llround(options.host_interval_ms * 1e6))
          : 0;
  recording::TimeNs next_host_mono = core::monotonic_ns();
  recording::TimeNs next_host_publish_mono = next_host_mono;
  // Host probes when due; their figures go through the pipeline once a poll (docs/agent.md#host-metrics).
  auto read_host = [&] {
    if (!options.host) return;
    const recording::TimeNs mono = core::monotonic_ns();
    if (mono < next_host_mono) return;
    options.host->read(core::realtime_ns(), mono);
    next_host_mono += host_step_ns;
    if (next_host_mono <= mono) next_host_mono = mono + host_step_ns;  // behind: skip, never burst
  };

  // /metrics is rendered once per change of the figures, not once per scrape
  // (docs/agent.md#metrics-under-load): each format's bytes are kept with the generation of the
  // figures they show; the loop renders again, when it publishes, each format scraped since its last
  // publish, and a format nobody asked for is rendered by the first scrape that asks.
  struct Exposition {
    std::mutex mutex;  // guards the rest; held while a scrape renders a stale format
    std::vector<GpuStatus> gpus;
    std::vector<HostFigure> host;
    long generation = 0;
    struct Slot {
      long generation = -1;
      std::shared_ptr<const std::string> body;
      bool asked = false;
    };
    Slot slots[2];
  } exposition;
  exposition.gpus = agent.status();
  auto render = [&](const std::vector<GpuStatus>& gpus, const std::vector<HostFigure>& host,
                    ExpositionFormat format) {
    std::string body = render_metrics(gpus, info, format, host);
    if (options.extra_metrics) body = append_families(std::move(body), options.extra_metrics(format));
    return std::make_shared<const std::string>(std::move(body));
  };
  auto slot_of = [](ExpositionFormat format) { return format == ExpositionFormat::openmetrics ? 1 : 0; };
  auto publish = [&] {
    const bool host_due = options.host && core::monotonic_ns() >= next_host_publish_mono;
    if (host_due) {
      host_snapshot = options.host->publish(core::realtime_ns());
      next_host_publish_mono = core::monotonic_ns() + std::llround(agent.settings().poll_ms * 1e6);
    }
    const std::vector<GpuStatus>& gpus = agent.status();
    bool asked[2] = {false, false};
    {
      std::lock_guard lock(exposition.mutex);
      for (int i = 0; i < 2; ++i) asked[i] = exposition.slots[i].asked;
    }
    // Rendered outside the lock, so scrapes meanwhile get the previous figures whole.
    std::shared_ptr<const std::string> fresh[2];
    for (int i = 0; i < 2; ++i)
      if (asked[i])
        fresh[i] = render(gpus, host_snapshot,
                          i == 1 ? ExpositionFormat::openmetrics : ExpositionFormat::prometheus_text);
    std::lock_guard lock(exposition.mutex);
    exposition.gpus = gpus;
    exposition.host = host_snapshot;
    ++exposition.generation;
    for (int i = 0; i < 2; ++i) {
      if (!fresh[i]) continue;
      exposition.slots[i] = {exposition.generation, std::move(fresh[i]), false};
    }
  };

  std::optional<MetricsServer> server;
  if (options.listen) {
    server.emplace(
        *options.listen,
        [&](const std::string& accept) {
          const ExpositionFormat format = format_for_accept(accept);
          std::shared_ptr<const std::string> body;
          {
            std::lock_guard lock(exposition.mutex);
            auto& slot = exposition.slots[slot_of(format)];
            slot.asked = true;
            if (slot.generation != exposition.generation) {
              slot.body = render(exposition.gpus, exposition.host, format);
              slot.generation = exposition.generation;
            }
            body = slot.body;
          }
          HttpReply reply{
              200,
              format == ExpositionFormat::openmetrics ? kOpenMetricsContentType : kPrometheusContentType,
              {},
              std::move(body)};
          return reply;
        },
        options.post);
    log("serving /metrics on http://" + server->address() + "/metrics");
    if (options.on_listening) options.on_listening(server->address());
  }

  recording::TimeNs last_retention_mono = 0;
  auto apply_retention = [&] {
    if (!options.store || !(options.retention_days > 0)) return;
    // Against the source's timeline: a replayed recording's records are as old as the recording.
    const recording::TimeNs cutoff =
        agent.now_ns() - static_cast<recording::TimeNs>(std::llround(options.retention_days * 86400.0 * 1e9));
    try {
      const long deleted = options.store->delete_before(cutoff);
      if (deleted > 0)
        log("retention: deleted " + std::to_string(deleted) + " record(s) older than " +
            std::to_string(options.retention_days) + " days");
    } catch (const std::exception& e) {
      log(std::string("retention failed: ") + e.what());
    }
    last_retention_mono = core::monotonic_ns();
  };

  auto write = [&](std::vector<AgentRecord>& records) {
    if (options.annotate) options.annotate(records);
    if (records.empty()) return;
    if (options.store) {
      try {
        options.store->add(records);
      } catch (const std::exception& e) {
        log(std::string("record store: ") + e.what() + " (the records still go to /metrics and NDJSON)");
      }
    }
    if (options.ndjson) {
      for (const AgentRecord& r : records) {
        const std::string line = record_to_ndjson(r) + "\n";
        std::fwrite(line.data(), 1, line.size(), options.ndjson);
      }
      std::fflush(options.ndjson);
    }
  };

  apply_retention();
  std::string stopped_by;
  const double speed = agent.source().speed();
  const recording::TimeNs poll_wall_ns = static_cast<recording::TimeNs>(agent.settings().poll_ms * 1e6);
  // The agent is the live driver's reader (docs/live-collection.md#the-driver), which wakes only when
  // something is due (docs/agent.md#wake-ups): the agent's next poll, duty edge, window or hold
  // (next_due_ns), the feed's own due time, a host probe, a sampler child's message, a capture
  // request, or a stop. A wake for a host probe alone reads the probe and steps nothing.
  recording::TimeNs agent_due_mono = -1;
  recording::TimeNs step_mono = 0;  // the monotonic clock after the last step, where agent.now_ns() was
  // Reads the host probes when due and, when `step_due`, steps the agent and publishes; false: the
  // replay ended and the agent does not linger.
  auto handle = [&](bool step_due) {
    read_host();
    if (!step_due) return true;
    std::vector<AgentRecord> records = agent.step();
    write(records);
    if (options.after_write) options.after_write(agent.now_ns(), false);
    if (options.after_step) options.after_step();
    publish();
    if (core::monotonic_ns() - last_retention_mono >= kRetentionEveryNs) apply_retention();
    if (agent.ended() && !options.linger) return false;
    // When the agent is next due, on the monotonic clock; -1: never (a replay that ended, lingering).
    // Taken after a step only: a wake for a host probe alone leaves it where it was.
    step_mono = core::monotonic_ns();
    agent_due_mono = -1;
    if (!agent.ended()) {
      const recording::TimeNs until_due = agent.next_due_ns() - agent.now_ns();
      agent_due_mono = step_mono + std::clamp<recording::TimeNs>(
                                       static_cast<recording::TimeNs>(static_cast<double>(until_due) / speed),
                                       0, poll_wall_ns);
    }
    return true;
  };
  collect::DriverReader reader;
  reader.policy = [&] {
    collect::DriverWait wait;
    wait.due_mono = agent_due_mono;
    if (options.host)
      wait.due_mono = wait.due_mono < 0 ? next_host_mono : std::min(wait.due_mono, next_host_mono);
    if (options.stop_fd >= 0) wait.own_fds.push_back(options.stop_fd);
    wait.own_fds.insert(wait.own_fds.end(), options.wake_fds.begin(), options.wake_fds.end());
    // An ended replay has nothing more to wake for.
    if (!agent.ended()) collect::watch_feed(agent.source(), agent.now_ns(), step_mono, wait);
    return wait;
  };
  reader.sink = [&](const collect::DriverWake& wake) {
    if (wake.error != 0) return false;
    if (options.stop_fd >= 0 && wake.woke(options.stop_fd)) {
      stopped_by = options.stop_reason ? options.stop_reason() : "stop requested";
      return false;
    }
    return handle(wake.any_fd() || wake.interrupted || wake.feed_due ||
                  (agent_due_mono >= 0 && wake.mono >= agent_due_mono));
  };
  if (handle(true)) collect::LiveDriver().drive(reader);
  if (!stopped_by.empty()) {
    log("stopping (" + stopped_by + "): disabling the counters");
    std::vector<AgentRecord> last = agent.finish(stopped_by);
    write(last);
    if (options.on_stop) options.on_stop(stopped_by);
    if (options.after_write) options.after_write(agent.now_ns(), true);
    publish();
    log("stopped; counters disabled");
  } else {
    if (options.on_stop) options.on_stop("the replay ended");
    if (options.after_write) options.after_write(agent.now_ns(), true);
    log("the replay ended; stopping");
  }
  return 0;
}

}  // namespace diescope::agent
