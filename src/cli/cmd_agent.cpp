// `diescope agent`: a long-running monitor of every GPU with duty-cycled counters, records in an
// embedded SQLite store (and NDJSON on request) and a Prometheus /metrics endpoint. docs/agent.md.
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fmt/core.h>
#include <memory>
#include <optional>
#include <unistd.h>

#include "agent_captures.hpp"
#include "command.hpp"
#include "options.hpp"
#include "diescope/agent/agent.hpp"
#include "diescope/collect/live_collection.hpp"
#include "diescope/agent/replay_feed.hpp"
#include "diescope/agent/runner.hpp"
#include "diescope/attribution/agent_hook.hpp"
#include "diescope/attribution/labels.hpp"
#include "diescope/core/error.hpp"
#include "diescope/core/signals.hpp"

namespace diescope::cli {
namespace {

struct AgentArgs {
  std::vector<std::string> replay;
  double replay_speed = 1.0;
  bool replay_loop = false;
  bool linger = false;
  double poll_ms = 0;  // --drain-ms; this and the other shared defaults come from options.hpp
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
  std::string kubelet_socket = attribution::kKubeletSocket;
  std::string rules;  // --rules FILE: triggered captures (docs/agent.md#triggered-captures)
};

std::filesystem::path default_db_path() {
  return agent::default_store_path();
}

void log_line(const std::string& line) {
  std::fprintf(stderr, "diescope agent: %s\n", line.c_str());
}

int run(const AgentArgs& a) {
  agent::AgentSettings settings;
  settings.poll_ms = a.poll_ms;
  settings.duty_on_ms = a.duty_on_ms;
  settings.duty_period_ms = a.duty_period_ms;
  agent::validate_settings(settings);
  // Replay and live alike (run and bench refuse the same values).
  check_range(kIntervalMs, a.interval_ms);
  check_range(kHostIntervalMs, a.host_interval_ms);
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
  std::optional<agent::ListenAddress> listen;
  if (!a.no_listen) listen = agent::parse_listen_address(a.listen);
  if (!a.replay.empty() && !a.labels_file.empty())
    throw core::UsageError("--labels-file is for live monitoring: a replay has no processes to label",
                           "drop --labels-file, or drop --replay");
  // Labels are checked before anything is switched on (docs/attribution.md#user-labels).
  attribution::LabelSet labels;
  if (!a.labels_file.empty()) labels = attribution::read_labels_file(a.labels_file);
  std::optional<agent::CaptureRules> rules;
  if (!a.rules.empty()) rules = agent::read_capture_rules(a.rules);

  // The store first: a bad path fails before any counter is switched on.
  std::unique_ptr<agent::RecordStore> store;
  if (!a.no_db) {
    const std::filesystem::path path = a.db.empty() ? default_db_path() : std::filesystem::path(a.db);
    store = std::make_unique<agent::RecordStore>(path, a.db.empty());
    log_line("records go to " + path.string());
  }

  // SIGTERM and SIGINT stop the agent cleanly (counters off, last records written); a scraper
  // that hangs up must not kill it (SIGPIPE ignored).
  core::SignalSelfPipe stop_signals({SIGTERM, SIGINT}, {SIGPIPE});

  core::SystemClock clock;
  std::unique_ptr<collect::Feed> source;
  if (!a.replay.empty()) {
    agent::ReplayOptions options;
    for (const auto& f : a.replay) options.files.emplace_back(f);
    options.speed = a.replay_speed;
    options.loop = a.replay_loop;
    source = std::make_unique<agent::ReplayFeed>(options, clock.read());
    log_line(fmt::format("replaying {} recording(s) at {}x{}", a.replay.size(), a.replay_speed,
                         a.replay_loop ? ", looping" : ""));
  } else {
    collect::LiveSessionOptions options;
    options.interval_ms = a.interval_ms;
    options.poll_ms = a.poll_ms;
    options.sampler_executable = a.sampler;
    options.sampler_extra_args = a.sampler_args;
    options.gpus = a.gpus;
    options.chip.source = collect::chip_source_setting_from_name(a.source).value_or(collect::ChipSourceSetting::automatic);
    options.log = log_line;
    source = collect::open_live_session(options);
    log_line(fmt::format("monitoring {} GPU(s)", source->gpu_count()));
  }
  log_line(fmt::format("counters on {} ms of every {} ms; drain every {} ms",
                       std::min(a.duty_on_ms, a.duty_period_ms), a.duty_period_ms, a.poll_ms));

  // The host probes read this host, so only a live agent runs them (docs/agent.md#host-metrics).
  std::unique_ptr<agent::HostMetrics> host;
  if (a.replay.empty() && a.host_interval_ms > 0) {
    host = std::make_unique<agent::HostMetrics>();
    log_line(fmt::format("host probes every {} ms, on /metrics as diescope_host_metric", a.host_interval_ms));
  }

  // Who holds each GPU, on attribution's own thread (docs/attribution.md#in-the-agent).
  std::unique_ptr<attribution::AgentAttribution> attrib;
  if (a.replay.empty() && !a.no_attribution) {
    attribution::WatchSettings ws;
    ws.gpus = a.gpus;
    ws.poll_ms = a.poll_ms;
    ws.kubelet_socket = a.kubelet_socket;
    ws.labels = labels.labels;
    ws.label_notes = labels.notes;
    std::unique_ptr<attribution::JobStore> jobs;
    if (store) jobs = std::make_unique<attribution::JobStore>(store->path(), true);
    attrib = std::make_unique<attribution::AgentAttribution>(
        std::make_unique<attribution::Watcher>(collect::Nvml::load(), ws), std::move(jobs),
        a.ndjson ? stdout : nullptr, log_line);
    log_line("attribution on: holders of each GPU in every record, a job record when one leaves");
  }

  AgentCaptures captures;
  if (rules) {
    check_captures(*rules, *source);
    tee_batches(captures, settings);
  }
  agent::Agent core(*source, clock, settings);
  agent::RunnerOptions run_options;
  run_options.host = host.get();
  run_options.host_interval_ms = a.host_interval_ms;
  run_options.store = store.get();
  run_options.retention_days = a.retention_days;
  run_options.ndjson = a.ndjson ? stdout : nullptr;
  run_options.listen = listen;
  run_options.linger = a.linger;
  run_options.stop_fd = stop_signals.fd();
  run_options.stop_reason = [&stop_signals] {
    const auto caught = stop_signals.next();
    return caught ? core::signal_name(caught->number) : std::string("stop requested");
  };
  run_options.log = log_line;
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
