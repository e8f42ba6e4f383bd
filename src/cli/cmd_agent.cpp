// `diescope agent`: a long-running monitor of every GPU with duty-cycled counters, records in an
// embedded SQLite store (and NDJSON on request) and a Prometheus /metrics endpoint. docs/agent.md.
#include <csignal>
#include <cstdio>
#include <memory>
#include <optional>
#include <vector>

#include "agent_captures.hpp"
#include "command.hpp"
#include "options.hpp"
#include "diescope/agent/agent.hpp"
#include "diescope/agent/command.hpp"
#include "diescope/collect/live_collection.hpp"
#include "diescope/attribution/agent_hook.hpp"
#include "diescope/attribution/labels.hpp"
#include "diescope/core/error.hpp"
#include "diescope/core/signals.hpp"

namespace diescope::cli {
namespace {

using AgentArgs = agent::AgentCommand;

void log_line(const std::string& line) {
  std::fprintf(stderr, "diescope agent: %s\n", line.c_str());
}

int run(const AgentArgs& a) {
  agent::AgentSettings settings = agent::agent_settings(a);
  // Replay and live alike (run and bench refuse the same values).
  check_range(kIntervalMs, a.interval_ms);
  check_range(kHostIntervalMs, a.host_interval_ms);
  const std::optional<agent::ListenAddress> listen = agent::check_agent_command(a);
  // Labels are checked before anything is switched on (docs/attribution.md#user-labels).
  attribution::LabelSet labels;
  if (!a.labels_file.empty()) labels = attribution::read_labels_file(a.labels_file);
  std::optional<agent::CaptureRules> rules;
  if (!a.rules.empty()) rules = agent::read_capture_rules(a.rules);

  // The store first: a bad path fails before any counter is switched on.
  const std::unique_ptr<agent::RecordStore> store = agent::open_agent_store(a, log_line);
  // SIGTERM and SIGINT stop the agent cleanly (counters off, last records written); a scraper
  // that hangs up must not kill it (SIGPIPE ignored).
  core::SignalSelfPipe stop_signals({SIGTERM, SIGINT}, {SIGPIPE});
  core::SystemClock clock;
  const std::unique_ptr<collect::Feed> source = agent::open_agent_feed(a, clock.read(), log_line);
  const std::unique_ptr<agent::HostMetrics> host = agent::open_agent_host_metrics(a, log_line);

  // Who holds each GPU, on attribution's own thread, through the live session's NVML devices
  // (docs/attribution.md#in-the-agent, docs/live-collection.md#who-reads-it).
  std::unique_ptr<attribution::AgentAttribution> attrib;
  const auto* session = dynamic_cast<const collect::LiveSession*>(source.get());
  if (session != nullptr && !a.no_attribution) {
    std::vector<const collect::GpuTelemetry*> gpus;
    for (std::size_t i = 0; i < session->gpu_count(); ++i) gpus.push_back(&session->telemetry(i));
    attribution::WatchSettings ws;
    ws.poll_ms = a.poll_ms;
    ws.kubelet_socket = a.kubelet_socket;
    ws.labels = labels.labels;
    ws.label_notes = labels.notes;
    std::unique_ptr<attribution::JobStore> jobs;
    if (store) jobs = std::make_unique<attribution::JobStore>(store->path(), true);
    attrib = std::make_unique<attribution::AgentAttribution>(std::make_unique<attribution::Watcher>(gpus, ws),
                                                             std::move(jobs), a.ndjson ? stdout : nullptr,
                                                             log_line);
    log_line("attribution on: holders of each GPU in every record, a job record when one leaves");
  }

  AgentCaptures captures;
  if (rules) {
    check_captures(*rules, *source);
    tee_batches(captures, settings);
  }
  agent::Agent core(*source, clock, settings);
  agent::RunnerOptions run_options =
      agent::agent_runner_options(a, host.get(), store.get(), listen, log_line);
  run_options.stop_fd = stop_signals.fd();
  run_options.stop_reason = [&stop_signals] {
    const auto caught = stop_signals.next();
    return caught ? core::signal_name(caught->number) : std::string("stop requested");
  };
  if (attrib) {
    run_options.annotate = [&attrib](std::vector<agent::AgentRecord>& records) { attrib->annotate(records); };
    run_options.after_write = [&attrib](recording::TimeNs now, bool stopping) {
      attrib->write_jobs(now, stopping);
    };
    run_options.extra_metrics = [&attrib](agent::ExpositionFormat format) {
      return attrib->metrics(format == agent::ExpositionFormat::openmetrics);
    };
  }
  if (rules) {
    attach_captures(captures, std::move(*rules), core, attrib.get(), a.replay.empty(), run_options);
    log_line("captures: rules from " + a.rules);
  }
  return agent::run_agent(core, run_options);
}

std::function<int()> setup_agent(Args sub) {
  auto args = std::make_shared<AgentArgs>();
  args->kubelet_socket = attribution::kKubeletSocket;
  sub.option("--replay", args->replay, "play this recording instead of reading GPUs (repeat: one per GPU)");
  sub.number("--replay-speed", args->replay_speed, "recording seconds per second (default 1: its own pace)");
  sub.flag("--replay-loop", args->replay_loop, "start the recording over when it ends");
  sub.flag("--linger", args->linger, "after the replay ends, keep serving /metrics until stopped");
  sub.number(kDrainMs, args->poll_ms,
             "NVML reads and counter buffer decoding every this many ms (default {default})", {"--poll-ms"});
  sub.number("--duty-on-ms", args->duty_on_ms,
             "counters on this long at the start of each period (default 2000; = period: always on)");
  sub.number("--duty-period-ms", args->duty_period_ms, "one record per GPU per period (default 60000)");
  sub.number(kIntervalMs, args->interval_ms,
             "chip sampling interval while the counters are on (default {default})");
  Opt db = sub.text("--db", args->db,
                    "SQLite record store (default $DIESCOPE_AGENT_DB, /var/lib/diescope/agent.db as "
                    "root, else ~/.local/state/diescope/agent.db)");
  db.type_name("PATH");
  sub.flag("--no-db", args->no_db, "keep no record store");
  sub.number("--retention-days", args->retention_days,
             "delete records older than this (default 30; 0 keeps all)");
  sub.flag("--ndjson", args->ndjson, "also print each record as one JSON line on standard output");
  Opt listen = sub.text(
      "--listen", args->listen,
      "serve /metrics on ADDR:PORT (default 127.0.0.1:9402; :PORT alone binds 127.0.0.1 too: this host "
      "only, where Prometheus exporters usually bind every interface; 0.0.0.0:9402 serves every "
      "interface)");
  listen.type_name("ADDR:PORT");
  sub.flag("--no-listen", args->no_listen, "serve no /metrics endpoint");
  sub.option("--sampler", args->sampler,
             "counter sampler executable (default: diescope-cupti beside diescope)");
  sub.option("--sampler-arg", args->sampler_args, "extra argument for the sampler (repeat), e.g. --fake");
  sub.gpu_list(args->gpus, "monitor only these GPU indexes, as nvidia-smi numbers them (default: every GPU)");
  sub.option("--source", args->source,
             "where chip samples come from: pm (CUPTI PM sampling), gpm (NVML GPM), auto (PM sampling, "
             "and GPM whenever another profiler runs, so the agent never blocks one; default)")
      .choices({"pm", "gpm", "auto"});
  sub.number(
      kHostIntervalMs, args->host_interval_ms,
      "read the host's CPU, memory and disks every this many ms for /metrics (default {default}; 0: off; "
      "live only)");
  sub.text("--labels-file", args->labels_file,
           "labels for every holder of this host's GPUs: one KEY=VALUE a line (docs/attribution.md)")
      .type_name("PATH");
  sub.flag("--no-attribution", args->no_attribution,
           "do not name who holds each GPU (no holders in records, no job records)");
  sub.text("--kubelet-socket", args->kubelet_socket,
           "the kubelet's pod-resources socket (default /var/lib/kubelet/pod-resources/kubelet.sock)")
      .type_name("PATH");
  sub.text("--rules", args->rules,
           "triggered captures: a JSON file of rules (a gap held, DIE-Util low under high GPU-Util, POST "
           "/capture, SIGUSR1) and where captures go (docs/agent.md#triggered-captures)")
      .type_name("FILE");
  return [args, db, listen] {
    args->db_given = db.given();
    args->listen_given = listen.given();
    return run(*args);
  };
}

const CommandRegistrar registrar{
    Command{"agent", 60, setup_agent,
            "monitor every GPU continuously: duty-cycled counters, SQLite records, "
            "Prometheus /metrics"}};

}  // namespace
}  // namespace diescope::cli
