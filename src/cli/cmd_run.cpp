// `diescope run [opts] -- CMD ARGS`: runs a command, records every GPU it may use (chip counters by
// PM sampling in a child process, NVML, the command's window markers), then analyses each
// recording, prints the headline and writes the report. Exits with the command's exit code.
#include <fmt/core.h>

#include <ctime>
#include <tuple>
#include <utility>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "command.hpp"
#include "options.hpp"
#include "diescope/analysis/analyze.hpp"
#include "diescope/calibrate/lookup.hpp"
#include "diescope/collect/nvml.hpp"
#include "diescope/collect/run.hpp"
#include "diescope/core/atomic_file.hpp"
#include "diescope/core/error.hpp"
#include "diescope/recording/reader.hpp"
#include "diescope/report/gpus_summary.hpp"
#include "diescope/report/renderer.hpp"
#include "diescope/report/report.hpp"
#include "diescope/report/wording.hpp"

namespace diescope::cli {
namespace {

namespace fs = std::filesystem;

struct RunCliOptions {
  std::vector<std::string> command;
  double interval_ms = 10;
  double drain_ms = 1000;
  double host_interval_ms = 100;
  std::string window = "none";
  std::string report_dir;
  std::vector<int> gpus;
  std::string calibration;
  std::string source = "auto";
  std::string duty;  // ON/PERIOD in ms, empty: counters on throughout
};

// `--duty ON/PERIOD` (docs/method.md#duty-cycles-in-run): two numbers of milliseconds. run's loop
// switches the counters at its 100 ms ticks, so each part of the period must be at least one tick.
std::pair<double, double> parse_duty(const std::string& text, double poll_ms) {
  const std::string example = "--duty 2000/10000 (counters on 2 s of every 10 s)";
  const auto slash = text.find('/');
  if (slash == std::string::npos)
    throw core::UsageError("--duty '" + text + "' is not ON/PERIOD",
                           "give two numbers of ms, e.g. " + example);
  const double on = parse_number("--duty's ON", text.substr(0, slash), example);
  const double period = parse_number("--duty's PERIOD", text.substr(slash + 1), example);
  if (!(on >= poll_ms))
    throw core::UsageError(
        fmt::format("--duty {}: the counters' on-time {:g} ms is shorter than run's {:g} ms "
                    "loop, which switches them",
                    text, on, poll_ms),
        "give an on-time of at least " + fmt::format("{:g}", poll_ms) + " ms, e.g. " + example);
  if (!(period - on >= poll_ms))
    throw core::UsageError(
        fmt::format("--duty {}: the period leaves the counters off for {:g} ms, under run's {:g} ms loop",
                    text, period - on, poll_ms),
        "make the period at least " + fmt::format("{:g}", poll_ms) +
            " ms longer than the on-time, or leave --duty out for counters on throughout");
  return {on, period};
}

std::string default_report_dir() {
  std::time_t t = std::time(nullptr);
  std::tm local{};
  localtime_r(&t, &local);
  char name[64];
  std::strftime(name, sizeof name, "diescope-run-%Y%m%d-%H%M%S", &local);
  return name;
}

// Analyses one recording and writes its report beside it; prints the headline. Returns the figures
// the summary of several GPUs compares (docs/method.md#several-gpus).
report::GpuFigures report_one(const collect::GpuRecording& rec, analysis::WindowMode window, bool several,
                              const std::optional<fs::path>& calibration_path) {
  std::unique_ptr<recording::Recording> source = recording::open_recording(rec.path);
  analysis::AnalysisOptions options;
  options.window = window;
  const analysis::Analysis analysis = analyze(*source, options);
  report::ReportContext context{rec.path.string(), source->side().end};
  // The calibration that fits this GPU model, driver, method and unit recipes (docs/calibration.md).
  context.calibration = calibrate::calibration_block_json(
      calibrate::find_calibration(analysis.meta, analysis.method, calibration_path));
  const nlohmann::json report = build_report(analysis, context);
  const fs::path out = fs::path(rec.path.string() + ".report");
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec)
    throw core::Error("cannot create the report folder " + out.string() + ": " + ec.message(),
                      "choose another --output folder", core::kExitInput);
  if (several) std::cout << "\nGPU " << rec.index << "\n";
  report::MultiRenderer renderers;
  renderers.add(std::make_unique<report::TerminalRenderer>(std::cout));
  renderers.add(std::make_unique<report::JsonRenderer>(out / "report.json"));
  renderers.add(std::make_unique<report::CsvRenderer>(out / "samples.csv"));
  renderers.render(report::ReportInput{report, source.get(), &analysis});
  std::cout << "recording " << rec.path.string() << ", report " << (out / "report.json").string() << "\n";
  return report::gpu_figures(report, (out / "report.json").string());
}

int run_command(const RunCliOptions& cli) {
  if (!(cli.interval_ms >= 0.1 && cli.interval_ms <= 10'000))
    throw core::UsageError(fmt::format("--interval-ms {} is out of range", cli.interval_ms),
                           "give a sample interval from 0.1 to 10000 ms (default 10)");
  if (!(cli.drain_ms >= 10 && cli.drain_ms <= 60'000))
    throw core::UsageError(fmt::format("--drain-ms {} is out of range", cli.drain_ms),
                           "give a drain period from 10 to 60000 ms (default 1000)");
  if (!(cli.host_interval_ms == 0 || (cli.host_interval_ms >= 1 && cli.host_interval_ms <= 60'000)))
    throw core::UsageError(
        fmt::format("--host-interval-ms {} is out of range", cli.host_interval_ms),
        "give a host probe interval from 1 to 60000 ms, or 0 for no host probes (default 100)");
  // A missing or unreadable calibration file is refused before anything is measured, as `report`
  // refuses it (docs/calibration.md#how-a-report-finds-its-calibration).
  if (!cli.calibration.empty()) calibrate::check_calibration_path(cli.calibration);

  collect::RunOptions options;
  if (!cli.duty.empty())
    std::tie(options.duty_on_ms, options.duty_period_ms) = parse_duty(cli.duty, options.poll_ms);
  options.command = cli.command;
  options.interval_ms = cli.interval_ms;
  options.drain_ms = cli.drain_ms;
  options.source = collect::chip_source_from_name(cli.source).value_or(collect::ChipSource::automatic);
  options.host_interval_ms = cli.host_interval_ms;
  if (!cli.gpus.empty()) options.gpus = cli.gpus;
  options.output_dir = cli.report_dir.empty() ? fs::path(default_report_dir()) : fs::path(cli.report_dir);

  std::unique_ptr<collect::Nvml> nvml = collect::Nvml::load();
  const collect::RunOutcome outcome = collect::record_run(options, *nvml);
  std::cout.flush();

  std::cerr << "\ndiescope: the command " << report::run_ending_words(outcome.ending, outcome.exit_code)
            << (outcome.interrupted ? " (interrupted)" : "") << "\n";
  for (const auto& warning : outcome.warnings) std::cerr << "diescope: warning: " << warning << "\n";

  const bool several = outcome.recordings.size() > 1;
  std::vector<report::GpuFigures> figures;
  for (const auto& rec : outcome.recordings)
    figures.push_back(
        report_one(rec, *analysis::window_mode_from_name(cli.window), several,
                   cli.calibration.empty() ? std::nullopt : std::optional<fs::path>(cli.calibration)));
  // Several GPUs: side by side, the least used, the gap between them, which were busy
  // (docs/method.md#several-gpus); gpus.json beside the recordings.
  if (several) {
    const report::GpusSummary summary = report::summarise_gpus(std::move(figures));
    std::cout << report::gpus_summary_text(summary);
    const fs::path file = options.output_dir / "gpus.json";
    core::write_file_atomically(file, report::gpus_summary_json(summary).dump(2) + "\n");
    std::cout << "summary " << file.string() << "\n";
  }
  return outcome.exit_code;
}

std::function<int()> setup_run(CLI::App& sub) {
  auto opt = std::make_shared<RunCliOptions>();
  add_number(sub, "--interval-ms", opt->interval_ms, "chip counter sample interval in ms (default 10)");
  add_number(sub, "--drain-ms", opt->drain_ms,
             "how often the counter buffer is decoded, in ms (default 1000)", {"--poll-ms"});
  add_number(sub, "--host-interval-ms", opt->host_interval_ms,
             "how often the host probes read CPU, memory, disks and the command's processes, in ms; 0: "
             "none (default 100)");
  sub.add_option(
         "--window", opt->window,
         "markers: also summarise the steady window between the lines 'diescope: measure start' and "
         "'diescope: measure stop' that the command prints, or the one a line 'diescope: measure window "
         "START STOP' (Unix seconds) or 'diescope: measure last SECONDS' gives (default none)")
      ->check(CLI::IsMember({"markers", "none"}));
  add_text(sub, "--output", opt->report_dir,
           "folder for the recordings (gpu<N>.dsrec) and their reports (default diescope-run-<date>-<time> "
           "in the current folder)",
           {"--report"})
      ->type_name("DIR");
  add_gpu_list(sub, opt->gpus, "GPU indexes to measure, as nvidia-smi numbers them (default: every GPU)");
  add_text(
      sub, "--duty", opt->duty,
      "counters on for ON ms of every PERIOD ms from the command's start, off between; coverage is gated "
      "against their scheduled time (default: on throughout)")
      ->type_name("ON/PERIOD");
  sub.add_option("--calibration", opt->calibration, "a calibration file or folder from `diescope calibrate`")
      ->type_name("PATH");
  sub.add_option("--source", opt->source,
                 "where chip samples come from: pm (CUPTI PM sampling), gpm (NVML GPM, every 100 ms or more; "
                 "no L1, L2 or load/store), auto (PM sampling, GPM when PM sampling cannot start; default)")
      ->check(CLI::IsMember({"pm", "gpm", "auto"}));
  sub.add_option("command", opt->command, "the command to measure, after --")->required();
  sub.footer("Example: diescope run --window markers -- diescope workload ffma\n");
  return [opt]() { return run_command(*opt); };
}

const CommandRegistrar registrar{
    Command{"run", 10, setup_run,
            "run a command and measure every GPU: GPU-Util beside DIE-Util, the gap, the report"}};

}  // namespace
}  // namespace diescope::cli
