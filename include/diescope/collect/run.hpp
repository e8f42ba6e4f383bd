// `diescope run`'s collector: starts the counter sampler for each chosen GPU, runs the measured
// command with its stdout teed through, and streams everything into one recording per GPU while a
// 100 ms loop watches the command, signals, clocks and throttle reasons, once a second the power
// line, the video engines and the process lists, and every 5 s NVML's GPU-Util samples
// (docs/live-collection.md#policies). Analysis and the report come
// after (cmd_run.cpp).
//
// Order of a run:
//   1. samplers start on every chosen GPU and are waited for until they sample (or fail: no
//      permission stops the run before the command starts; counters held by another profiler, an
//      unsupported GPU or a crash leave that GPU GPU-Util-only, with a note saying why). With
//      ChipSourceSetting::automatic such a GPU (no permission included) reads NVML GPM instead, and
//      with ChipSourceSetting::gpm every GPU does; GPM is sampled from the loop below;
//   2. the command starts (start_ns); its stdout lines "diescope: measure start|stop" become marks,
//      timed when they reach us, and a window line (PrintedWindow) becomes a start and a stop mark
//      at the times it gives; with a duty cycle the samplers stop and start again each period;
//   2b. every host_interval_ms the host probes read /proc (CPU, memory, disks, the command's process
//      tree) into every recording;
//   3. when the command ends, the counters are stopped and disabled at once; the loop waits up to
//      1 s for an NVML GPU-Util sample at or after the end, then writes the run's end.
// SIGINT and SIGTERM sent to diescope are forwarded to the command (a terminal's Ctrl-C already
// reaches it directly and is not sent twice); the run then ends as the command does and the
// recordings are complete.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "diescope/collect/chip_source.hpp"
#include "diescope/recording/format.hpp"
#include "diescope/recording/records.hpp"

namespace diescope::collect {

class Nvml;

struct RunOptions {
  std::vector<std::string> command;  // argv of the measured command
  // chip sample interval (GPM: at least kGpmMinIntervalMs)
  double interval_ms = recording::kDefaultIntervalMs;
  ChipSourceSetting source = ChipSourceSetting::pm;
  double drain_ms = 1000;                // how often the sampler decodes its buffer
  std::optional<std::vector<int>> gpus;  // NVML indexes; nullopt: every GPU
  std::filesystem::path output_dir;      // gpu<N>.dsrec go here (created if missing)
  std::string sampler_executable;        // empty: find_sampler_executable()
  std::vector<std::string> sampler_leading_args = {"sample"};
  std::vector<std::string> sampler_extra_args;  // tests: {"--fake", ...}
  double poll_ms = 100;                         // the NVML / command loop
  // host probes (docs/method.md#host-probes); 0: none
  double host_interval_ms = recording::kDefaultHostIntervalMs;
  double end_wait_ms = 1000;  // wait for a GPU-Util sample at or after the end
  double sampler_start_timeout_ms = 60'000;
  int stdout_fd = 1;                // where the command's stdout is copied
  std::string run_type = "single";  // each recording's meta.run_type: "single", or "round" (bench)
  // Duty cycle (docs/method.md#duty-cycles-in-run): counters on for duty_on_ms of every
  // duty_period_ms from the command's start; both 0 (or on >= period) keep them on throughout.
  double duty_on_ms = 0;
  double duty_period_ms = 0;
  // Measure this process instead of a command (the Python module's measure(), docs/python.md#measure):
  // `command` stays empty and no child is started; what is written to attach_fd's other end is read
  // as the command's stdout (window markers, not copied anywhere) and the run ends when it reaches
  // end of file. This process stands for the command in the holders and the host probes, and its
  // SIGINT and SIGTERM stay its own. record_run() takes ownership of the descriptor.
  int attach_fd = -1;
  // Called from record_run() once the samplers sample, when the command (or the attached part) starts.
  std::function<void(recording::TimeNs start_ns)> on_start;
};

struct GpuRecording {
  int index = -1;
  std::filesystem::path path;
  bool counters = false;                  // chip samples were recorded
  std::optional<ChipSource> chip_source;  // pm or gpm; nullopt when there were no chip samples
  std::string counters_why;               // why not, or why they stopped early
  long samples = 0;
};

struct RunOutcome {
  int exit_code = 0;            // the command's; 128+N when a signal N ended it
  recording::RunEnding ending;  // exited, or the signal that ended it
  bool interrupted = false;     // diescope received SIGINT or SIGTERM
  recording::TimeNs start_ns = 0;
  recording::TimeNs end_ns = 0;
  std::vector<GpuRecording> recordings;
  std::vector<std::string> warnings;  // for the user: counters unavailable, sampler crashed, ...
};

// Runs options.command and records the chosen GPUs through `nvml`. Throws UsageError for a GPU
// index that does not exist, DeviceError when the counters may not be read (no permission) or
// the sampler cannot be run, and Error with exit code 127 (126) when the command cannot be found
// (run). Every other failure is recorded as a note and the run goes on.
RunOutcome record_run(const RunOptions& options, const Nvml& nvml);

// A window the command learns afterwards and prints (docs/method.md#a-window-printed-afterwards):
//   "diescope: measure window START STOP"  START and STOP in seconds since the Unix epoch
//                                          (CLOCK_REALTIME, Python's time.time()), as printed
//   "diescope: measure last SECONDS"       the SECONDS before the line reached diescope
// A line that starts with either prefix and cannot be read keeps the reason in `error`.
struct PrintedWindow {
  enum class Form { times, last };
  Form form = Form::times;
  recording::TimeNs start_ns = 0;   // times: as printed
  recording::TimeNs stop_ns = 0;    // times: as printed
  recording::TimeNs length_ns = 0;  // last: how long before the line's arrival the window began
  std::string line;                 // the line as printed, for notes
  std::string error;                // non-empty: the line could not be read, and why
};

// Reads the text after "diescope: measure " of a window line; nullopt when it is not one.
std::optional<PrintedWindow> parse_printed_window(std::string_view line);

// The FLOPs the command did, printed on its stdout (docs/energy.md#telling-diescope-the-flops):
//   "diescope: measure flops FLOPS"         the work between its window markers (the steady window)
//   "diescope: measure flops FLOPS run"     the work of the whole run
// FLOPS is a number above 0 ("2.2e13"). A line that starts with the prefix and cannot be read keeps
// the reason in `error`. This is the one place such a line is read.
struct PrintedFlops {
  recording::FlopsNote note;
  std::string line;   // the line as printed, for notes
  std::string error;  // non-empty: the line could not be read, and why
};
std::optional<PrintedFlops> parse_printed_flops(std::string_view line);

// Finds the window markers in a stream of bytes split anywhere. A marker is a whole line (a '\r'
// before the '\n' is ignored) saying "diescope: measure start" or "diescope: measure stop"; a
// window line is one PrintedWindow reads.
class MarkerScanner {
 public:
  // Feeds bytes; calls `on_mark` for each complete marker line, `on_window` (when given) for each
  // complete window line and `on_flops` (when given) for each complete FLOPs line.
  void feed(std::string_view bytes, const std::function<void(recording::MarkKind)>& on_mark,
            const std::function<void(const PrintedWindow&)>& on_window = {},
            const std::function<void(const PrintedFlops&)>& on_flops = {});

 private:
  std::string line_;
  bool overlong_ = false;  // the current line outgrew any marker: skip to its end
};

}  // namespace diescope::collect
