// `diescope run [opts] -- CMD ARGS`: runs a command, records every GPU it may use (chip counters by
// PM sampling in a child process, NVML, the command's window markers), then analyses each
// recording, prints the headline and writes the report. Exits with the command's exit code.
#include <ctime>
#include <tuple>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "command.hpp"
#include "options.hpp"
#include "diescope/calibrate/lookup.hpp"
#include "diescope/collect/nvml.hpp"
#include "diescope/collect/run.hpp"
#include "diescope/attribution/labels.hpp"
#include "diescope/attribution/watcher.hpp"
#include "diescope/core/error.hpp"
#include "diescope/report/run_report.hpp"
#include "diescope/report/wording.hpp"

namespace diescope::cli {
namespace {

namespace fs = std::filesystem;

struct RunCliOptions {
  std::vector<std::string> command;
  double interval_ms = 0;  // the defaults come from the rules (options.hpp)
  double drain_ms = 0;
  double host_interval_ms = 0;
  std::string window = "none";
  std::string report_dir;
  std::vector<int> gpus;
  std::string calibration;
  std::string source = "auto";
  std::string duty;                 // ON/PERIOD in ms, empty: counters on throughout
  std::vector<std::string> labels;  // --label KEY=VALUE
  bool no_attribution = false;
};

std::string default_report_dir() {
  std::time_t t = std::time(nullptr);
  std::tm local{};
  localtime_r(&t, &local);
  char name[64];
  std::strftime(name, sizeof name, "diescope-run-%Y%m%d-%H%M%S", &local);
  return name;
}

int run_command(const RunCliOptions& cli) {
  check_range(kIntervalMs, cli.interval_ms);
  check_range(kDrainMs, cli.drain_ms);
  check_range(kHostIntervalMs, cli.host_interval_ms);
  // A missing or unreadable calibration file is refused before anything is measured, as `report`
  // refuses it (docs/calibration.md#how-a-report-finds-its-calibration).
  if (!cli.calibration.empty()) calibrate::check_calibration_path(cli.calibration);

  collect::RunOptions options;
  if (!cli.duty.empty())
    std::tie(options.duty_on_ms, options.duty_period_ms) = parse_duty(cli.duty, options.poll_ms);
  options.command = cli.command;
  options.interval_ms = cli.interval_ms;
  options.drain_ms = cli.drain_ms;
  options.source =
      collect::chip_source_setting_from_name(cli.source).value_or(collect::ChipSourceSetting::automatic);
  options.host_interval_ms = cli.host_interval_ms;
  if (!cli.gpus.empty()) options.gpus = cli.gpus;
  options.output_dir = cli.report_dir.empty() ? fs::path(default_report_dir()) : fs::path(cli.report_dir);

  const attribution::LabelSet labels = attribution::parse_labels(cli.labels);
  // One NVML for the run and its watcher, as the agent shares its session's (NVML may be called from
  // several threads).
  const std::shared_ptr<const collect::Nvml> nvml = collect::Nvml::load();
  // Who holds each GPU, on attribution's own thread beside the run (docs/attribution.md#in-run).
  std::unique_ptr<attribution::Watcher> watcher;
  if (!cli.no_attribution) {
    attribution::WatchSettings ws;
    ws.gpus = cli.gpus;
    ws.labels = labels.labels;
    ws.label_notes = labels.notes;
    watcher = std::make_unique<attribution::Watcher>(nvml, ws);
    watcher->start();
  }
  const collect::RunOutcome outcome = collect::record_run(options, *nvml);
  std::vector<attribution::GpuHolders> seen;
  std::vector<std::string> attribution_notes;
  if (watcher) {
    watcher->stop();
    seen = watcher->seen();
    attribution_notes = watcher->snapshot().notes;
  }
  std::cout.flush();

  std::cerr << "\ndiescope: the command " << report::run_ending_words(outcome.ending, outcome.exit_code)
            << (outcome.interrupted ? " (interrupted)" : "") << "\n";
  for (const auto& warning : outcome.warnings) std::cerr << "diescope: warning: " << warning << "\n";

  // The calibration that fits each GPU model, driver, method and unit recipes (docs/calibration.md).
  const std::optional<fs::path> calibration =
      cli.calibration.empty() ? std::nullopt : std::optional<fs::path>(cli.calibration);
  report::RunReportSettings settings;
  settings.window = *analysis::window_mode_from_name(cli.window);
  settings.calibration = [&calibration](const analysis::Analysis& analysis) {
    return calibrate::calibration_block_json(
        calibrate::find_calibration(analysis.meta, analysis.method, calibration));
  };
  if (watcher)
    settings.holders = [&](int index) {
      return std::optional<report::RunHolders>(report::RunHolders{
          attribution::holders_json(seen, index, attribution_notes), attribution::holders_line(seen, index)});
    };
  settings.output_dir = options.output_dir;
  std::vector<report::RunRecordingRef> recordings;
  recordings.reserve(outcome.recordings.size());
  for (const auto& rec : outcome.recordings) recordings.push_back({rec.index, rec.path});
  report::report_run(recordings, settings, std::cout);
  return outcome.exit_code;
}

std::function<int()> setup_run(Args sub) {
  auto opt = std::make_shared<RunCliOptions>();
  sub.number(kIntervalMs, opt->interval_ms);
  sub.number(kDrainMs, opt->drain_ms, {}, {"--poll-ms"});
  sub.number(kHostIntervalMs, opt->host_interval_ms);
  sub.option("--window", opt->window,
             "markers: also summarise the steady window between the lines 'diescope: measure start' and "
             "'diescope: measure stop' that the command prints, or the one a line 'diescope: measure window "
             "START STOP' (Unix seconds) or 'diescope: measure last SECONDS' gives (default none)")
      .choices({"markers", "none"});
  sub.text("--output", opt->report_dir,
           "folder for the recordings (gpu<N>.dsrec) and their reports (default diescope-run-<date>-<time> "
           "in the current folder)",
           {"--report"})
      .type_name("DIR");
  sub.gpu_list(opt->gpus, "GPU indexes to measure, as nvidia-smi numbers them (default: every GPU)");
  sub.text(
         "--duty", opt->duty,
         "counters on for ON ms of every PERIOD ms from the command's start, off between; coverage is gated "
         "against their scheduled time (default: on throughout)")
      .type_name("ON/PERIOD");
  sub.option("--calibration", opt->calibration, "a calibration file or folder from `diescope calibrate`")
      .type_name("PATH");
  sub.option("--source", opt->source,
             "where chip samples come from: pm (CUPTI PM sampling), gpm (NVML GPM, every 100 ms or more; "
             "no L1, L2 or load/store), auto (PM sampling, GPM when PM sampling cannot start; default)")
      .choices({"pm", "gpm", "auto"});
  sub.option("--label", opt->labels, "a label for the command's holders in the report, KEY=VALUE (repeat)")
      .type_name("KEY=VALUE");
  sub.flag("--no-attribution", opt->no_attribution, "do not name who holds each GPU in the report");
  sub.option("command", opt->command, "the command to measure, after --").required();
  sub.footer("Example: diescope run --window markers -- diescope workload ffma\n");
  return [opt]() { return run_command(*opt); };
}

const CommandRegistrar registrar{
    Command{"run", 10, setup_run,
            "run a command and measure every GPU: GPU-Util beside DIE-Util, the gap, the report"}};

}  // namespace
}  // namespace diescope::cli
