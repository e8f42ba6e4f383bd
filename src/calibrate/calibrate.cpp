// calibrate_gpu: the probe, the plan, the workload's run under the run machinery, the measurement
// from its recording, build_calibration and the file (docs/calibration.md#how-a-calibration-runs-on-the-gpu).
#include "diescope/calibrate/calibrate.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <fstream>
#include <functional>
#include <thread>
#include <vector>

#include <fmt/core.h>

#include "diescope/calibrate/device_protocol.hpp"
#include "diescope/collect/nvml.hpp"
#include "diescope/collect/run.hpp"
#include "diescope/core/atomic_file.hpp"
#include "diescope/core/clock.hpp"
#include "diescope/core/error.hpp"
#include "diescope/core/unique_fd.hpp"
#include "diescope/recording/reader.hpp"
#include "diescope/report/wording.hpp"
#include "diescope/workloads/launcher.hpp"

namespace diescope::calibrate {
namespace {

namespace fs = std::filesystem;

// A scratch folder for the plan and the recordings, removed at the end unless kept.
class Scratch {
 public:
  explicit Scratch(bool keep) : keep_(keep) {
    std::string pattern = (fs::temp_directory_path() / "diescope-calibrate-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr)
      throw core::Error("cannot create a scratch folder under " + fs::temp_directory_path().string(),
                        "set TMPDIR to a writable folder", core::kExitInput);
    dir_ = pattern;
  }
  ~Scratch() {
    std::error_code ec;
    if (!keep_) fs::remove_all(dir_, ec);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  const fs::path& dir() const { return dir_; }

 private:
  fs::path dir_;
  bool keep_;
};

// The one place calibrate starts the workload: `options.command` under the run machinery on its
// own thread, while this thread hands the command's stdout to `on_line` line by line. Exceptions
// from either side are rethrown here after both have finished.
collect::RunOutcome run_reading_lines(collect::RunOptions options, const collect::Nvml& nvml,
                                      const std::function<void(const std::string&)>& on_line) {
  core::Pipe pipe = core::make_pipe("the calibration workload's output");
  options.stdout_fd = pipe.write.get();
  collect::RunOutcome outcome;
  std::exception_ptr run_error, line_error;
  std::thread runner([&] {
    try {
      outcome = collect::record_run(options, nvml);
    } catch (...) {
      run_error = std::current_exception();
    }
    pipe.write.reset();  // the reader below sees the end of the output
  });
  std::string buffer;
  char chunk[65536];
  for (;;) {
    const ssize_t got = ::read(pipe.read.get(), chunk, sizeof chunk);
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
  if (run_error) std::rethrow_exception(run_error);
  if (line_error) std::rethrow_exception(line_error);
  return outcome;
}

// The counters must be readable: a calibration without them is no calibration.
void require_counters(const collect::RunOutcome& outcome) {
  if (outcome.recordings.empty())
    throw core::DeviceError("the run recorded no GPU",
                            "check that nvidia-smi lists the GPU given with --gpus");
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
  throw core::DeviceError("cannot calibrate: the chip's counters could not be read: " + cause, fix);
}

void require_exit(const collect::RunOutcome& outcome) {
  if (outcome.exit_code == 0) return;
  throw core::DeviceError("the calibration kernels (diescope-workload calibrate) " +
                              report::run_ending_words(outcome.ending, outcome.exit_code) +
                              "; their message is above",
                          "follow the fix it gives; check the GPU with nvidia-smi");
}

}  // namespace

CalibrateResult calibrate_gpu(const CalibrateOptions& options, const collect::Nvml& nvml,
                              CalibrateListener& listener) {
  if (options.gpu < 0 || options.gpu >= nvml.device_count())
    throw core::UsageError(fmt::format("--gpus {}: this machine has {} GPU{}", options.gpu,
                                       nvml.device_count(), nvml.device_count() == 1 ? "" : "s"),
                           "give one GPU index as nvidia-smi numbers them (default 0)");
  const fs::path workload = !options.workload.empty()
                                ? options.workload
                                : workloads::find_workload_binary(workloads::current_executable());
  // CUDA numbers GPUs as nvidia-smi does only in PCI order; the workload must run on the GPU sampled.
  ::setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", 1);
  const Scratch scratch(options.keep);
  const std::string device_index = std::to_string(options.gpu);

  collect::RunOptions base;
  base.gpus = std::vector<int>{options.gpu};
  base.end_wait_ms = 0;
  base.run_type = "single";

  // 1. Probe: the workload opens the GPU and reports it while the sampler starts on it. This finds a
  // missing GPU, no permission and counters held by another profiler before the long part.
  listener.probing();
  WorkloadLines probe_lines;
  collect::RunOptions probe = base;
  probe.command = {workload.string(), "calibrate", "--probe", "--device", device_index};
  probe.output_dir = scratch.dir() / "probe";
  const collect::RunOutcome probed =
      run_reading_lines(probe, nvml, [&probe_lines](const std::string& line) { probe_lines.read(line); });
  require_exit(probed);
  require_counters(probed);
  DeviceFacts facts =
      device_facts(recording::open_recording(probed.recordings.front().path)->meta(), probe_lines.device);
  if (facts.gpu.sm_count <= 0)
    throw core::DeviceError("the GPU's SM count could not be read", "check the GPU with nvidia-smi");

  // 2. The plan and the run.
  const CalibrationPlan plan = plan_calibration(facts, options.quick);
  if (plan.steps.empty())
    throw core::DeviceError("unit table " + facts.unit_table + " has no unit that calibrate can check",
                            "calibrate a GPU whose unit table reads FP32 or DRAM");
  const fs::path plan_path = scratch.dir() / "plan.json";
  core::write_file_atomically(plan_path, plan_request_json(plan).dump(2));
  listener.planned(facts, plan);

  collect::RunOptions run = base;
  run.command = {workload.string(), "calibrate", "--plan", plan_path.string(), "--device", device_index};
  run.output_dir = scratch.dir() / "run";
  WorkloadLines lines;
  std::ofstream lines_kept;  // the workload's own lines, for people checking a calibration
  if (options.keep) lines_kept.open(scratch.dir() / "workload.jsonl");
  const std::int64_t started_ns = core::monotonic_ns();
  const collect::RunOutcome outcome = run_reading_lines(run, nvml, [&](const std::string& line) {
    if (lines_kept.is_open()) lines_kept << line << '\n';
    if (const auto begin = lines.read(line)) listener.began(progress_at(plan, begin->index, begin->name));
  });
  lines_kept.close();
  listener.device_done(static_cast<double>(core::monotonic_ns() - started_ns) / 1e9);
  require_counters(outcome);
  require_exit(outcome);

  // 3. Each step's counter window and reading, from the recording; then judge, fit and write.
  const auto recording = recording::open_recording(outcome.recordings.front().path);
  const recording::RecordingMeta& meta = recording->meta();
  DeviceAnswers answers = std::move(lines.sweeps);
  answers.steps = measure_recorded_steps(*recording, lines.steps, plan);
  facts.gpu.chip = meta.gpu.chip.empty() ? facts.gpu.chip : meta.gpu.chip;
  facts.units = meta.units;
  const RunInfo info{format_utc_date(static_cast<std::int64_t>(std::time(nullptr))), build_commit()};

  CalibrateResult result;
  result.file = build_calibration(facts, plan, answers, info);
  result.written = write_calibration_output(result.file, options.output);
  if (options.keep) result.kept = scratch.dir();
  return result;
}

fs::path write_calibration_output(const CalibrationFile& file, const std::string& output) {
  if (!output.empty() && fs::path(output).extension() == ".json" && !fs::is_directory(output)) {
    fs::path path = output;
    if (fs::exists(path))
      throw core::UsageError("--output " + output + " exists", "name a new file, or a folder to write into");
    if (path.has_parent_path()) fs::create_directories(path.parent_path());
    core::write_file_atomically(path, dump_calibration(file));
    return path;
  }
  if (!output.empty()) return write_calibration(file, output);
  const std::optional<fs::path> dir = default_calibration_dir();
  if (!dir)
    throw core::UsageError("no folder for calibration files: neither XDG_DATA_HOME nor HOME is set",
                           "give --output PATH, or set HOME");
  return write_calibration(file, *dir);
}

}  // namespace diescope::calibrate
