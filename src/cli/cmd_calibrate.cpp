// `diescope calibrate [--quick] [--gpus N] [--output PATH] [--json]`: runs work of known size on the
// GPU, checks each unit's counter against it, measures the ceilings, fits the device model and
// writes a calibration file that `run` and `report` look up (docs/calibration.md).
//
// The kernels run in diescope-workload (`calibrate --plan FILE`), under the run machinery
// (collect/run.hpp): the sampler child reads the chip's counters over the whole calibration and
// the recording keeps them with NVML's clocks. The workload prints one JSON line per step and
// sweep (calibrate/device_protocol.hpp); those lines drive the progress line and, with the
// recording's samples, become the measured steps that run_calibration judges.
#include <fcntl.h>
#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "command.hpp"
#include "diescope/calibrate/calibration_file.hpp"
#include "diescope/calibrate/device_protocol.hpp"
#include "diescope/calibrate/steps.hpp"
#include "diescope/collect/nvml.hpp"
#include "diescope/collect/run.hpp"
#include "diescope/core/atomic_file.hpp"
#include "diescope/core/error.hpp"
#include "diescope/recording/reader.hpp"
#include "diescope/workloads/launcher.hpp"

namespace diescope::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct CalibrateCliOptions {
  bool quick = false;
  int gpu = 0;
  std::string output;
  bool json = false;
  bool keep = false;  // keep the recording and the workload's lines (for people checking a calibration)
};

// A scratch folder removed at the end unless kept.
struct Scratch {
  fs::path dir;
  bool keep = false;
  Scratch() {
    std::string tmpl = (fs::temp_directory_path() / "diescope-calibrate-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr)
      throw Error("cannot create a scratch folder under " + fs::temp_directory_path().string(),
                  "set TMPDIR to a writable folder", kExitInput);
    dir = tmpl;
  }
  ~Scratch() {
    std::error_code ec;
    if (!keep) fs::remove_all(dir, ec);
  }
};

// Runs `options` under the run machinery on its own thread while this thread reads the command's
// stdout line by line. Exceptions from either side are rethrown here after both have finished.
collect::RunOutcome run_reading_lines(collect::RunOptions options, const collect::Nvml& nvml,
                                      const std::function<void(const std::string&)>& on_line) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw Error("cannot create a pipe", "check ulimit -n", kExitInternal);
  options.stdout_fd = fds[1];
  collect::RunOutcome outcome;
  std::exception_ptr run_error, line_error;
  std::thread runner([&] {
    try {
      outcome = collect::record_run(options, nvml);
    } catch (...) {
      run_error = std::current_exception();
    }
    close(fds[1]);
  });
  std::string buffer;
  char chunk[65536];
  for (;;) {
    const ssize_t got = read(fds[0], chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    buffer.append(chunk, static_cast<std::size_t>(got));
    std::size_t start = 0;
    for (std::size_t nl; (nl = buffer.find('\n', start)) != std::string::npos; start = nl + 1) {
      if (line_error) continue;  // keep draining so the command never blocks on a full pipe
      try {
        on_line(buffer.substr(start, nl - start));
      } catch (...) {
        line_error = std::current_exception();
      }
    }
    buffer.erase(0, start);
  }
  runner.join();
  close(fds[0]);
  if (run_error) std::rethrow_exception(run_error);
  if (line_error) std::rethrow_exception(line_error);
  return outcome;
}

// The counters must be readable: a calibration without them is no calibration.
void require_counters(const collect::RunOutcome& outcome) {
  if (outcome.recordings.empty())
    throw DeviceError("the run recorded no GPU", "check that nvidia-smi lists the GPU given with --gpus");
  const collect::GpuRecording& rec = outcome.recordings.front();
  if (rec.counters) return;
  std::string cause = rec.counters_why, fix = "run `diescope calibrate` again once the counters are free";
  if (const auto semi = cause.find("; "); semi != std::string::npos) {
    fix = cause.substr(semi + 2);
    cause = cause.substr(0, semi);
  }
  // The run's fix ends by saying what its report will hold; a calibration simply stops.
  if (const auto until = fix.find("; until then"); until != std::string::npos) {
    fix = fix.substr(0, until);
    const std::string again = " and run again";
    if (fix.size() >= again.size() && fix.compare(fix.size() - again.size(), again.size(), again) == 0)
      fix.resize(fix.size() - again.size());
    fix += " and run `diescope calibrate` again";
  }
  throw DeviceError("cannot calibrate: the chip's counters could not be read: " + cause, fix);
}

void require_exit(const collect::RunOutcome& outcome) {
  if (outcome.exit_code == 0) return;
  throw DeviceError("the calibration kernels (diescope-workload calibrate) " +
                        (outcome.how == "exited" ? "exited with code " + std::to_string(outcome.exit_code) : "ended by " + outcome.how) +
                        "; their message is above",
                    "follow the fix it gives; check the GPU with nvidia-smi");
}

std::string utc_now() {
  return calibrate::format_utc_date(static_cast<std::int64_t>(std::time(nullptr)));
}

int calibrate_command(const CalibrateCliOptions& cli) {
  std::unique_ptr<collect::Nvml> nvml = collect::Nvml::load();  // no driver: DeviceError with the fix
  if (cli.gpu < 0 || cli.gpu >= nvml->device_count())
    throw UsageError(fmt::format("--gpus {}: this machine has {} GPU{}", cli.gpu, nvml->device_count(),
                                 nvml->device_count() == 1 ? "" : "s"),
                     "give one GPU index as nvidia-smi numbers them (default 0)");
  const fs::path workload = workloads::find_workload_binary(workloads::current_executable());
  // CUDA numbers GPUs as nvidia-smi does only in PCI order; the workload must run on the GPU sampled.
  setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", 1);
  const bool terminal = isatty(STDERR_FILENO) != 0;
  Scratch scratch;
  scratch.keep = cli.keep;

  collect::RunOptions base;
  base.gpus = std::vector<int>{cli.gpu};
  base.end_wait_ms = 0;
  base.run_type = "single";

  // 1. Probe: the workload opens the GPU and reports it while the sampler starts on it. This finds a
  // missing GPU, no permission and counters held by another profiler before the long part.
  std::cerr << "diescope: calibrate: checking the GPU and its counters\n";
  json device;
  collect::RunOptions probe = base;
  probe.command = {workload.string(), "calibrate", "--probe", "--device", std::to_string(cli.gpu)};
  probe.output_dir = scratch.dir / "probe";
  const collect::RunOutcome probed = run_reading_lines(probe, *nvml, [&device](const std::string& line) {
    const json j = json::parse(line, nullptr, false);
    if (j.is_object() && j.value("calibrate", "") == "device") device = j.at("device");
  });
  require_exit(probed);
  require_counters(probed);
  const auto probe_source = open_recording(probed.recordings.front().path);
  calibrate::DeviceFacts facts;
  facts.gpu = probe_source->meta().gpu;
  facts.unit_table = probe_source->meta().unit_table;
  facts.units = probe_source->meta().units;
  if (device.is_object()) {
    if (device.contains("sm_count") && device["sm_count"].is_number_integer()) facts.gpu.sm_count = device["sm_count"];
    if (device.contains("l2_bytes") && device["l2_bytes"].is_number_integer()) facts.gpu.l2_bytes = device["l2_bytes"];
  }
  if (facts.gpu.sm_count <= 0) throw DeviceError("the GPU's SM count could not be read", "check the GPU with nvidia-smi");

  // 2. The plan and the run.
  calibrate::CalibrationPlan plan = calibrate::plan_calibration(facts, cli.quick);
  if (plan.steps.empty())
    throw DeviceError("unit table " + facts.unit_table + " has no unit that calibrate can check",
                      "calibrate a GPU whose unit table reads FP32 or DRAM");
  const fs::path plan_path = scratch.dir / "plan.json";
  write_file_atomically(plan_path, calibrate::plan_request_json(plan).dump(2));
  const std::vector<std::string> names = calibrate::planned_names(plan);
  const int total = static_cast<int>(names.size());
  std::cerr << fmt::format("diescope: calibrate: {} {} on {} ({} SMs), {} steps and sweeps, about {}\n",
                           cli.quick ? "quick check" : "full calibration", facts.unit_table, facts.gpu.model,
                           facts.gpu.sm_count, total,
                           calibrate::format_time_left([&] {
                             double t = 0;
                             for (int i = 1; i <= total; ++i) t += calibrate::planned_seconds(plan, i);
                             return t;
                           }()));

  collect::RunOptions run = base;
  run.command = {workload.string(), "calibrate", "--plan", plan_path.string(), "--device", std::to_string(cli.gpu)};
  run.output_dir = scratch.dir / "run";
  std::vector<calibrate::WorkloadStep> steps;
  calibrate::RecordedStepRunner runner;
  std::vector<calibrate::WorkingSetPoint> reread;
  std::FILE* lines_out = cli.keep ? std::fopen((scratch.dir / "workload.jsonl").c_str(), "w") : nullptr;
  const auto started = std::chrono::steady_clock::now();
  const collect::RunOutcome outcome = run_reading_lines(run, *nvml, [&](const std::string& line) {
    if (lines_out != nullptr) std::fprintf(lines_out, "%s\n", line.c_str());
    const json j = json::parse(line, nullptr, false);
    if (!j.is_object() || !j.contains("calibrate")) return;
    const std::string kind = j.value("calibrate", "");
    if (kind == "begin") {
      calibrate::Progress p;
      p.index = j.value("index", 0);
      p.total = total;
      p.name = j.value("name", "");
      for (int i = p.index; i <= total; ++i) p.seconds_left += calibrate::planned_seconds(plan, i);
      if (terminal)
        std::cerr << "\r\033[K" << calibrate::progress_text(p, true) << std::flush;
      else
        std::cerr << calibrate::progress_text(p, false) << "\n";
    } else if (kind == "step") {
      steps.push_back(calibrate::parse_workload_step(j));
    } else if (kind == "stream") {
      runner.stream = calibrate::parse_stream_timings(j);
    } else if (kind == "working_set") {
      runner.working_set = calibrate::parse_working_set(j);
    } else if (kind == "reread") {
      reread = calibrate::parse_working_set(j);
    } else if (kind == "issue") {
      runner.issue = calibrate::parse_issue_points(j);
    } else if (kind == "launch") {
      runner.launch = calibrate::parse_launch_points(j);
    }
  });
  if (lines_out != nullptr) std::fclose(lines_out);
  if (terminal) std::cerr << "\r\033[K";
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::cerr << fmt::format("diescope: calibrate: the device part took {:.1f} s\n", took);
  require_counters(outcome);
  require_exit(outcome);

  // 3. Each step's counter window and reading, from the recording.
  const auto source = open_recording(outcome.recordings.front().path);
  const RecordingMeta& meta = source->meta();
  std::map<std::string, std::size_t> unit_column;
  for (std::size_t i = 0; i < meta.units.size(); ++i) unit_column[meta.units[i].key] = i;
  std::optional<std::size_t> bytes_column;
  for (std::size_t i = 0; i < meta.counts.size(); ++i)
    if (meta.counts[i].key == "dram_bytes") bytes_column = i;
  std::map<std::string, std::vector<calibrate::CounterSample>> samples;
  {
    auto stream = source->chip_samples();
    ChipSample s;
    while (stream->next(s)) {
      const double bytes = bytes_column && *bytes_column < s.counts.size() ? s.counts[*bytes_column] : std::nan("");
      for (const auto& [key, column] : unit_column)
        if (column < s.units.size()) samples[key].push_back({s.start_ns, s.end_ns, s.units[column], key == "dram" ? bytes : std::nan("")});
    }
  }
  std::vector<calibrate::MemClockReading> clocks;
  {
    auto stream = source->clocks();
    ClockReading c;
    while (stream->next(c)) clocks.push_back({c.ts_ns, c.mem_mhz});
  }
  for (const calibrate::WorkloadStep& step : steps) {
    const auto plan_step = std::find_if(plan.steps.begin(), plan.steps.end(),
                                        [&step](const calibrate::StepPlan& p) { return p.name == step.name; });
    const calibrate::StepRole role = plan_step != plan.steps.end() ? plan_step->role : calibrate::StepRole::reported;
    runner.steps.push_back(calibrate::measure_step(step, samples[step.unit], clocks, role));
  }

  // 4. Judge, fit, write.
  facts.gpu.chip = meta.gpu.chip.empty() ? facts.gpu.chip : meta.gpu.chip;
  facts.units = meta.units;
  calibrate::CalibrationFile file =
      calibrate::run_calibration(runner, facts, plan, calibrate::RunInfo{utc_now(), calibrate::build_commit()});
  if (!reread.empty()) {
    std::optional<double> dram;
    const json& stream = file.device_model["stream"];
    if (stream.contains("bandwidth_bytes_per_s") && stream["bandwidth_bytes_per_s"].is_number())
      dram = stream["bandwidth_bytes_per_s"].get<double>();
    file.device_model["cache_reread"] = calibrate::reread_cache_json(reread, dram);
  }
  fs::path written;
  if (!cli.output.empty() && fs::path(cli.output).extension() == ".json" && !fs::is_directory(cli.output)) {
    written = cli.output;
    if (fs::exists(written))
      throw UsageError("--output " + cli.output + " exists", "name a new file, or a folder to write into");
    if (written.has_parent_path()) fs::create_directories(written.parent_path());
    write_file_atomically(written, calibrate::dump_calibration(file));
  } else {
    fs::path dir;
    if (!cli.output.empty()) {
      dir = cli.output;
    } else if (const auto d = calibrate::default_calibration_dir()) {
      dir = *d;
    } else {
      throw UsageError("no folder for calibration files: neither XDG_DATA_HOME nor HOME is set",
                       "give --output PATH, or set HOME");
    }
    written = calibrate::write_calibration(file, dir);
  }
  if (cli.keep) std::cerr << "diescope: calibrate: kept the recording and the workload's lines in " << scratch.dir.string() << "\n";

  if (cli.json) {
    std::cout << calibrate::dump_calibration(file);
  } else {
    std::cout << calibrate::summary_text(file);
    std::cout << "\ncalibration file " << written.string() << "\n";
    if (file.quick) std::cout << "A quick check is a setup check, not a calibration: reports stay unvalidated.\n";
  }
  return 0;
}

std::function<int()> setup_calibrate(CLI::App& sub) {
  auto opt = std::make_shared<CalibrateCliOptions>();
  sub.add_flag("--quick", opt->quick,
               "a setup check in under a minute: every SM and a quarter for 2 s per unit, STREAM with 3 repeats, no "
               "sweeps; reports treat it as unvalidated");
  sub.add_option("--gpus", opt->gpu, "the GPU to calibrate, as nvidia-smi numbers it (default 0)");
  sub.add_option("--output", opt->output,
                 "a .json file to write, or a folder (default $XDG_DATA_HOME/diescope/calibrations or "
                 "~/.local/share/diescope/calibrations)");
  sub.add_flag("--json", opt->json, "print the calibration file on stdout instead of the summary");
  sub.add_flag("--keep", opt->keep, "keep the counter recording and the kernels' own lines in a scratch folder");
  sub.footer(
      "Runs kernels whose work is known (FFMA, integer multiply-add, STREAM triad, bf16 tensor MMAs (wgmma on\n"
      "Hopper), DFMA, L1-hit global loads, L2 reads) on every SM and on fewer while the chip's counters are\n"
      "sampled, judges each unit (pass, fail, inconclusive) against that work, records each unit's reading at\n"
      "full load, times STREAM (and prints it against the DRAM peak the counter implies) and the\n"
      "device-model sweeps, and writes a calibration file that `diescope run` and `diescope report` find.\n"
      "Needs the GPU to itself: stop other profilers (ncu, nsys, DCGM profiling) first.\n\n"
      "Example: diescope calibrate --quick\n");
  return [opt]() { return calibrate_command(*opt); };
}

const CommandRegistrar registrar{Command{
    "calibrate", 40, setup_calibrate,
    "check each unit's counter against known work, measure the ceilings, fit the device model"}};

}  // namespace
}  // namespace diescope::cli
