// `diescope run`'s collector loop (see run.hpp for the order of a run).
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <memory>
#include <optional>
#include <poll.h>
#include <sys/resource.h>
#include <ctime>
#include <unistd.h>

#include <fmt/format.h>

#include "diescope/collect/duty.hpp"
#include "diescope/collect/gpm.hpp"
#include "diescope/collect/host_probes.hpp"
#include "diescope/collect/live_collection.hpp"
#include "diescope/collect/live_driver.hpp"
#include "diescope/collect/nvml.hpp"
#include "diescope/collect/run.hpp"
#include "diescope/collect/sampler.hpp"
#include "diescope/collect/unit_tables.hpp"
#include "diescope/core/child_process.hpp"
#include "diescope/core/clock.hpp"
#include "diescope/core/error.hpp"
#include "diescope/core/signals.hpp"
#include "diescope/core/version.hpp"
#include "diescope/recording/writer.hpp"
#include "run_clocks.hpp"

namespace diescope::collect {

namespace m = sampler_msg;

namespace {

constexpr recording::TimeNs kSamplerStopTimeoutNs = 10 * recording::kNsPerSecond;
constexpr std::size_t kMaxMarkerLine = 256;

std::string ms_text(recording::TimeNs ns) {
  return fmt::format("{:.1f} ms", static_cast<double>(ns) / 1e6);
}

std::string one_word(std::string topic) {
  for (char& c : topic)
    if (c == ' ' || c == '\t' || c == '\n') c = '_';
  return topic.empty() ? "sampler" : topic;
}

std::string last_line(const std::string& text) {
  auto end = text.find_last_not_of("\n\r ");
  if (end == std::string::npos) return {};
  auto begin = text.find_last_of('\n', end);
  return text.substr(begin == std::string::npos ? 0 : begin + 1,
                     end + 1 - (begin == std::string::npos ? 0 : begin + 1));
}

// What run keeps for one GPU beside the live session, which owns its sampler child, NVML, GPM and duty
// schedule (docs/live-collection.md#what-run-is-now): its sinks' state and its recording.
struct Gpu {
  Gpu(std::size_t place, recording::GpuIdentity gpu) : slot(place), identity(std::move(gpu)) {}

  std::size_t slot;  // the GPU's place in the session
  recording::GpuIdentity identity;
  const UnitTable* table = nullptr;
  std::vector<std::string> metrics;  // the order the sampler sends values in
  std::optional<ColumnEvaluator> evaluator;
  // Where the session hands the sampler child's messages: the start sink, then the recording sink.
  std::unique_ptr<SamplerSink> sink;
  bool sampling = false;  // the sampler said "on"
  // Start phase: the chip named another unit table (or none): the child is replaced once pumped.
  bool table_switch = false;
  const UnitTable* switch_to = nullptr;
  std::optional<SamplerExit> start_exit;  // a child that ended right after "on", before the recording
  bool counters_off_written = false;
  std::string counters_why;             // why the counters are missing or stopped early
  std::vector<SamplerMessage> pending;  // arrived before the recording was opened
  std::string gpm_why;   // why chip samples come from GPM (docs/live-collection.md#the-gpm-switch)
  std::string pm_cause;  // why PM sampling could not start, without its fix (for the GPM note)

  std::unique_ptr<recording::RecordingWriter> writer;
  ChipSampleCheck check;  // out of order, value count, infinity (docs/live-collection.md#sample-checks)
  ColumnValues values;
  long samples = 0;
  long blanked = 0;  // samples the sampler sent without values (split by a decode)
  recording::TimeNs last_sample_end = 0;
  bool overflow_warned = false;
  // Duty cycle (docs/method.md#duty-cycles-in-run): how many times the session's duty step started
  // the sampler again.
  int duty_restarts = 0;
};

class Runner {
 public:
  Runner(const RunOptions& options, const Nvml& nvml) : opt_(options), nvml_(nvml) {}
  RunOutcome run();

 private:
  // run's sinks for the sampler child's messages (docs/live-collection.md#who-reads-it): before the
  // recording opens they are kept (StartSink); after, they are written in run's words (RecordingSink).
  class StartSink;
  class RecordingSink;
  void choose_gpus();
  void start_samplers();
  void open_session(std::vector<SessionGpu> parts);
  void start_sampler(Gpu& gpu);
  void switch_table(Gpu& gpu);
  void start_gpm();
  void sample_gpm(recording::TimeNs now);
  double gpm_interval_ms() const { return GpmChipSource::interval_for(opt_.interval_ms); }
  void wait_for_samplers();
  void handle_start_message(Gpu& gpu, SamplerMessage& message);
  void open_recordings();
  void loop();
  void tick(recording::TimeNs now, bool ended);
  void read_nvml(Gpu& gpu, recording::TimeNs now, const NvmlReadSet& what);
  void read_engines(Gpu& gpu, recording::TimeNs now);
  void read_power(Gpu& gpu, recording::TimeNs now, bool asked);
  void read_host(recording::TimeNs now);
  void note_host_cost(recording::TimeNs now);
  void note_run_timing(recording::TimeNs now);
  void handle(Gpu& gpu, const SamplerMessage& message, recording::TimeNs now);
  void sampler_ended(Gpu& gpu, const SamplerExit& exit, recording::TimeNs now);
  void read_command_output(recording::TimeNs now);
  void printed_window(const PrintedWindow& window, recording::TimeNs now);
  void printed_flops(const PrintedFlops& flops, recording::TimeNs now);
  void handle_signals();
  DutyCycle duty() const { return DutyCycle{opt_.duty_on_ms, opt_.duty_period_ms}; }
  bool duty_cycled() const { return duty().cycles(); }
  void note(Gpu& gpu, recording::TimeNs now, const std::string& topic, const std::string& text);
  void note_all(recording::TimeNs now, const std::string& topic, const std::string& text);
  void warn(const std::string& text);
  recording::TimeNs stamp();  // host time that never goes backwards

  const RunOptions& opt_;
  const Nvml& nvml_;
  std::vector<int> indexes_;
  std::deque<Gpu> gpus_;                                // deque: the sinks keep a reference to their Gpu
  std::vector<std::unique_ptr<NvmlTelemetry>> opened_;  // each GPU's NVML, until the session takes it
  // Every GPU's live collection, with run's policy (docs/live-collection.md#what-run-is-now): no restart, GPM
  // for the whole run, NVML at run's cadence (clocks every tick, the power line every second and where
  // an energy figure asks, the rest every second), its --duty. After gpus_: it goes first.
  std::unique_ptr<LiveSession> session_;
  std::string sampler_path_;
  RunOutcome outcome_;

  // SIGINT and SIGTERM are forwarded to the command; SIGCHLD wakes the loop; a closed stdout must
  // not kill the run (SIGPIPE ignored). Set up when run() starts, before any child.
  std::optional<core::SignalSelfPipe> signals_;
  // Killed and reaped by its destructor if run() ends by an exception (a full disk under a writer).
  core::ChildProcess command_;
  bool command_running_ = false;
  // Attached (RunOptions::attach_fd): this process is the command, and attach_fd its stdout.
  bool attached_ = false;
  core::UniqueFd attached_out_;
  core::UniqueFd& command_out() { return attached_ ? attached_out_ : command_.stdout_pipe(); }
  std::int64_t command_pid() const {
    return !command_running_ ? 0 : attached_ ? static_cast<std::int64_t>(::getpid()) : command_.pid();
  }
  int signals_forwarded_ = 0;
  MarkerScanner markers_;
  recording::TimeNs last_mark_ns_ = 0;  // marks of one recording never go back in time
  bool stdout_broken_ = false;
  recording::TimeNs last_stamp_ = 0;
  core::ClockWatch clock_watch_;  // wall-clock steps and suspends (docs/method.md#known-limits)
  // Host probes (docs/method.md#host-probes); empty when host_interval_ms is 0.
  std::optional<HostProbes> host_;
  recording::TimeNs host_cpu_ns_ = 0;  // this thread's CPU time spent in the probes
  // run's own clocks, with DIESCOPE_RUN_TIMING=1 (docs/footprint.md#runs-own-parts).
  RunClocks clocks_;
  rusage usage_at_start_{};
  rusage thread_at_start_{};
  recording::TimeNs timing_start_ns_ = 0;
};

// Before the recordings open: each message is looked at for what it says about the start (a chip
// that needs another unit table, an error) and kept for the recording.
class Runner::StartSink final : public SamplerSink {
 public:
  StartSink(Runner& runner, Gpu& gpu) : runner_(runner), gpu_(gpu) {}
  void message(const SamplerMessage& message, recording::TimeNs /*now*/) override {
    if (gpu_.table_switch) return;  // the first child's messages describe a set no longer read
    SamplerMessage kept = message;
    runner_.handle_start_message(gpu_, kept);
  }
  void ended(const SamplerExit& exit, recording::TimeNs /*now*/) override {
    if (gpu_.table_switch) return;
    if (gpu_.sampling) {
      gpu_.start_exit = exit;  // said when the recording is open
      return;
    }
    if (!gpu_.counters_why.empty()) return;
    const std::string tail = last_line(exit.stderr_tail);
    gpu_.counters_why = "the counter sampler " + exit.describe() + " before it started sampling" +
                        (tail.empty() ? std::string{} : ": " + tail);
    runner_.warn("GPU " + std::to_string(gpu_.identity.index) + ": " + gpu_.counters_why);
  }
  void note(recording::Note /*note*/) override {}  // RestartRule::none: the supervisor throws instead

 private:
  Runner& runner_;
  Gpu& gpu_;
};

// run's recording sink: the sampler child's messages and its end, written into the GPU's recording
// in run's words (docs/live-collection.md#what-was-decided-for-run).
class Runner::RecordingSink final : public SamplerSink {
 public:
  RecordingSink(Runner& runner, Gpu& gpu) : runner_(runner), gpu_(gpu) {}
  void message(const SamplerMessage& message, recording::TimeNs now) override {
    const RunPartScope part(runner_.clocks_, RunPart::sampler_records);
    runner_.handle(gpu_, message, now);
  }
  void ended(const SamplerExit& exit, recording::TimeNs now) override {
    runner_.sampler_ended(gpu_, exit, now);
  }
  void note(recording::Note note) override { runner_.note(gpu_, note.ts_ns, note.topic, note.text); }
  // The session's duty step started a child for a new period: its counters are not on yet, and it
  // writes its own counters-off event.
  void started(recording::TimeNs /*now*/) override {
    gpu_.sampling = false;
    gpu_.counters_off_written = false;
    ++gpu_.duty_restarts;
  }

 private:
  Runner& runner_;
  Gpu& gpu_;
};

recording::TimeNs thread_cpu_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<recording::TimeNs>(ts.tv_sec) * recording::kNsPerSecond + ts.tv_nsec;
}

void Runner::read_host(recording::TimeNs now) {
  if (!host_) return;
  const RunPartScope part(clocks_, RunPart::host);
  const recording::TimeNs cpu0 = thread_cpu_ns();
  const HostBatch batch = host_->read(now, core::monotonic_ns(), command_pid());
  for (auto& gpu : gpus_) {
    for (const auto& s : batch.streams) gpu.writer->write(s);
    for (const auto& t : batch.tasks) gpu.writer->write(t);
    for (const auto& n : batch.notes) gpu.writer->write(n);
    if (!batch.sample.values.empty()) gpu.writer->write(batch.sample);
  }
  host_cpu_ns_ += thread_cpu_ns() - cpu0;
}

// What the probes cost, measured on this run: their own CPU time, and diescope's in all. Attached,
// the process is the measured program's, so diescope's own is the collector's thread.
void Runner::note_host_cost(recording::TimeNs now) {
  if (!host_) return;
  rusage self{};
  ::getrusage(attached_ ? RUSAGE_THREAD : RUSAGE_SELF, &self);
  const double self_s = static_cast<double>(self.ru_utime.tv_sec + self.ru_stime.tv_sec) +
                        static_cast<double>(self.ru_utime.tv_usec + self.ru_stime.tv_usec) / 1e6;
  const double run_s = static_cast<double>(std::max<recording::TimeNs>(1, now - outcome_.start_ns)) / 1e9;
  const double probes_s = static_cast<double>(host_cpu_ns_) / 1e9;
  note_all(now, "host_probes",
           fmt::format(
               "{} reads every {:g} ms over {:.1f} s: the probes used {:.3f} s of CPU ({:.2f}% of one core); "
               "diescope's own {} used {:.3f} s ({:.2f}% of one core)",
               host_->reads(), opt_.host_interval_ms, run_s, probes_s, probes_s / run_s * 100,
               attached_ ? "collector thread" : "process", self_s, self_s / run_s * 100));
}

// run's own parts (docs/footprint.md#runs-own-parts): the loop thread's CPU time in each, the
// process's CPU time and the loop thread's context switches over the same span.
void Runner::note_run_timing(recording::TimeNs now) {
  if (!clocks_.on()) return;
  clocks_.enter(static_cast<std::size_t>(RunPart::loop));  // the last stretch goes to the part it was in
  rusage self{};
  ::getrusage(attached_ ? RUSAGE_THREAD : RUSAGE_SELF, &self);
  rusage thread{};
  ::getrusage(RUSAGE_THREAD, &thread);
  auto us = [](const rusage& u) {
    return (static_cast<long>(u.ru_utime.tv_sec) + static_cast<long>(u.ru_stime.tv_sec)) * 1'000'000L +
           static_cast<long>(u.ru_utime.tv_usec) + static_cast<long>(u.ru_stime.tv_usec);
  };
  recording::TimeNs parts_ns = 0;
  for (std::size_t i = 0; i < kRunParts; ++i) parts_ns += clocks_.cpu_ns(i);
  // What one read of the thread's CPU clock costs, timed here over 1,000 reads.
  const recording::TimeNs t0 = loop_thread_cpu_ns();
  for (int i = 0; i < 999; ++i) (void)loop_thread_cpu_ns();
  const recording::TimeNs clock_read_ns = (loop_thread_cpu_ns() - t0) / 1000;
  note_all(
      now, "run-timing",
      fmt::format("seconds {:.3f} wakes {} process_cpu_us {} loop_cpu_us {} voluntary_switches {} "
                  "involuntary_switches {} clock_reads {} clock_read_ns {} {}",
                  static_cast<double>(core::monotonic_ns() - timing_start_ns_) / 1e9, clocks_.wakes(),
                  us(self) - us(usage_at_start_), parts_ns / 1000,
                  thread.ru_nvcsw - thread_at_start_.ru_nvcsw, thread.ru_nivcsw - thread_at_start_.ru_nivcsw,
                  clocks_.clock_reads(), clock_read_ns, clocks_.parts_text()));
}

recording::TimeNs Runner::stamp() {
  last_stamp_ = std::max(last_stamp_, core::realtime_ns());
  return last_stamp_;
}

void Runner::warn(const std::string& text) {
  if (std::find(outcome_.warnings.begin(), outcome_.warnings.end(), text) == outcome_.warnings.end())
    outcome_.warnings.push_back(text);
}

void Runner::note(Gpu& gpu, recording::TimeNs now, const std::string& topic, const std::string& text) {
  if (gpu.writer) gpu.writer->write(recording::Note{now, one_word(topic), text});
}

void Runner::note_all(recording::TimeNs now, const std::string& topic, const std::string& text) {
  for (auto& gpu : gpus_) note(gpu, now, topic, text);
}

void Runner::choose_gpus() {
  const int count = nvml_.device_count();
  if (count <= 0)
    throw core::DeviceError("the NVIDIA driver lists no GPU",
                            "check that nvidia-smi lists the GPU and its driver is loaded");
  if (opt_.gpus) {
    for (int index : *opt_.gpus) {
      if (index < 0 || index >= count) {
        throw core::UsageError("--gpus names GPU " + std::to_string(index) +
                                   ", which does not exist: this machine has " + std::to_string(count) +
                                   " GPU" + (count == 1 ? "" : "s") + " (index" +
                                   (count == 1 ? " 0" : "es 0 to " + std::to_string(count - 1)) + ")",
                               "pass indexes that nvidia-smi -L lists, e.g. --gpus 0");
      }
      if (std::find(indexes_.begin(), indexes_.end(), index) == indexes_.end()) indexes_.push_back(index);
    }
    if (indexes_.empty())
      throw core::UsageError("--gpus names no GPU", "pass one or more indexes, e.g. --gpus 0,1");
  } else {
    for (int i = 0; i < count; ++i) indexes_.push_back(i);
  }
  for (int index : indexes_) {
    opened_.push_back(std::make_unique<NvmlTelemetry>(nvml_, index, 0));
    gpus_.emplace_back(gpus_.size(), opened_.back()->identity());
  }
}

// Starts a sampler child for `gpu` through the session: run's policy is no restart
// (docs/live-collection.md#policies), and a child that cannot be run throws.
void Runner::start_sampler(Gpu& gpu) {
  session_->use_table(gpu.slot, gpu.table, gpu.metrics);
  session_->set_counters(gpu.slot, true, core::realtime_ns());
  gpu.sampling = false;
}

// The chip the sampler named needs another unit table than its compute capability chose: the first
// child ends unread and another starts with the chip's own table, or none is left.
void Runner::switch_table(Gpu& gpu) {
  gpu.table_switch = false;
  session_->discard(gpu.slot);
  gpu.pending.clear();  // the first sampler's messages describe a set no longer read
  if (gpu.switch_to) {
    gpu.table = gpu.switch_to;
    gpu.metrics = table_metrics(*gpu.table);
    start_sampler(gpu);
  } else {
    gpu.counters_why = "no unit table lists chip " + gpu.identity.chip + ": diescope reports GPU-Util only";
    warn("GPU " + std::to_string(gpu.identity.index) + ": " + gpu.counters_why);
  }
}

// Chooses each GPU's unit table, opens the session over every GPU (a sampler child where PM sampling
// can start) and starts the children.
void Runner::start_samplers() {
  sampler_path_ = opt_.sampler_executable.empty() ? find_sampler_executable() : opt_.sampler_executable;
  std::vector<SessionGpu> parts;
  std::vector<Gpu*> to_start;
  for (auto& gpu : gpus_) {
    SessionGpu& part = parts.emplace_back();
    part.telemetry = std::move(opened_.at(gpu.slot));
    gpu.sink = std::make_unique<StartSink>(*this, gpu);
    part.sink = gpu.sink.get();
    if (opt_.source == ChipSourceSetting::gpm) {
      gpu.counters_why = "--source gpm";
      continue;
    }
    gpu.table = unit_table_for_compute_capability(gpu.identity.compute_capability);
    if (!gpu.table) {
      gpu.counters_why = "no unit table for compute capability " +
                         std::to_string(gpu.identity.compute_capability / 10) + "." +
                         std::to_string(gpu.identity.compute_capability % 10) +
                         ": diescope does not know this GPU's counters, so it reports GPU-Util only";
      warn("GPU " + std::to_string(gpu.identity.index) + ": " + gpu.counters_why);
      continue;
    }
    if (sampler_path_.empty() && opt_.source == ChipSourceSetting::automatic) {
      gpu.counters_why = "diescope-cupti, the program that reads the chip counters, is not beside diescope";
      continue;
    }
    if (sampler_path_.empty()) {
      throw core::DeviceError(
          "diescope-cupti, the program that reads the chip counters, is not beside diescope",
          "reinstall diescope so that diescope-cupti sits in the same folder, or point DIESCOPE_CUPTI "
          "at it");
    }
    gpu.metrics = table_metrics(*gpu.table);
    part.table = gpu.table;
    part.sampler.executable = sampler_path_;
    part.sampler.leading_args = opt_.sampler_leading_args;
    part.sampler.device = gpu.identity.index;
    part.sampler.extra_args = opt_.sampler_extra_args;
    to_start.push_back(&gpu);
  }
  open_session(std::move(parts));
  for (Gpu* gpu : to_start) start_sampler(*gpu);
}

// The session over every GPU, with run's policy (docs/live-collection.md#policies): no restart (a child
// whose output closed is waited for 2 s), GPM for the whole run, NVML at run's cadence, its duty cycle.
void Runner::open_session(std::vector<SessionGpu> parts) {
  SupervisorTiming timing;
  timing.end_wait_ns = 2 * recording::kNsPerSecond;  // a child whose output closed has ended
  ChipSourcePolicy chip;
  chip.source = opt_.source;
  ReaderPolicy reader;
  reader.restart = RestartRule::none;
  reader.gpm_switch = GpmSwitch::whole_run;
  reader.cadence = NvmlCadence::run(static_cast<recording::TimeNs>(opt_.poll_ms * 1e6));
  reader.duty = duty();
  reader.drain_ms = opt_.drain_ms;
  session_ =
      std::make_unique<LiveSession>(std::move(parts), opt_.interval_ms, opt_.poll_ms, timing,
                                    std::function<void(const std::string&)>{}, std::move(chip), reader);
}

void Runner::handle_start_message(Gpu& gpu, SamplerMessage& message) {
  if (auto* device = std::get_if<m::Device>(&message)) {
    gpu.identity.chip = device->chip;
    if (device->sm_count > 0) gpu.identity.sm_count = device->sm_count;
    if (!device->uuid.empty() && !gpu.identity.uuid.empty() && device->uuid != gpu.identity.uuid) {
      gpu.pending.emplace_back(
          m::Note{"sampler", "CUDA device " + std::to_string(device->index) + " is " + device->uuid +
                                 " but NVML's GPU " + std::to_string(gpu.identity.index) + " is " +
                                 gpu.identity.uuid + ": the counters may be another GPU's"});
    }
    const auto& chips = gpu.table->chips;
    if (std::find(chips.begin(), chips.end(), device->chip) == chips.end()) {
      // The compute capability chose a table that does not list this chip: take the chip's own
      // (switch_table, once this pump is over).
      gpu.table_switch = true;
      gpu.switch_to = unit_table_for_chip(device->chip);
      return;
    }
  } else if (auto* error = std::get_if<m::Error>(&message)) {
    const ErrorText text = describe_error(*error, gpu.identity.index);
    if ((error->kind == m::ErrorKind::permission || error->kind == m::ErrorKind::no_driver) &&
        opt_.source == ChipSourceSetting::pm) {
      for (auto& other : gpus_) session_->set_counters(other.slot, false, core::realtime_ns());
      throw core::DeviceError(text.cause, text.fix);
    }
    gpu.counters_why = text.cause + "; " + text.fix;
    gpu.pm_cause = text.cause;
    // Under --source auto the warning comes with the switch to GPM (start_gpm).
    if (opt_.source == ChipSourceSetting::pm)
      warn(text.cause + " (" + text.fix +
           (error->kind == m::ErrorKind::busy ? "; or run with --source auto to read NVML GPM instead" : "") +
           ")");
  } else if (std::holds_alternative<m::On>(message)) {
    gpu.sampling = true;
  }
  gpu.pending.push_back(std::move(message));
}

// Until every sampler child samples or has ended, or the start timeout has passed, waiting through the
// session's driver (docs/live-collection.md#the-driver) for the children still starting and the signal
// pipe, due every 200 ms and at the timeout (the driver rounds up: it never wakes just short of it).
void Runner::wait_for_samplers() {
  const recording::TimeNs deadline =
      core::monotonic_ns() + static_cast<recording::TimeNs>(opt_.sampler_start_timeout_ms * 1e6);
  std::vector<int> fds;  // the signal pipe and the children still starting
  // One look at them: false when none is left to wait for or the deadline has passed.
  const auto pump = [&] {
    fds = {signals_->fd()};
    bool waiting = false;
    for (auto& gpu : gpus_) {
      if (!session_->sampler_running(gpu.slot) || gpu.sampling) continue;
      session_->pump(gpu.slot, core::realtime_ns());  // a child whose output closed is reaped here
      if (gpu.table_switch) {
        switch_table(gpu);  // restarted with another table, or given up
        waiting = waiting || session_->sampler_running(gpu.slot);
        continue;
      }
      if (!session_->sampler_running(gpu.slot) || gpu.sampling) continue;
      waiting = true;
      fds.push_back(session_->sampler_fd(gpu.slot));
    }
    if (!waiting) return false;
    // Interrupted before the command started: nothing to measure, so stop here.
    while (const auto caught = signals_->next()) {
      if (caught->number == SIGCHLD) continue;
      for (auto& gpu : gpus_)
        if (session_->sampler_running(gpu.slot)) session_->set_counters(gpu.slot, false, core::realtime_ns());
      throw core::Error("interrupted (" + core::signal_name(caught->number) +
                            ") while the counters were being set up; the command was not started",
                        "run again and let the setup finish (about a second)", 128 + caught->number);
    }
    if (deadline - core::monotonic_ns() > 0) return true;
    for (auto& gpu : gpus_) {
      if (!session_->sampler_running(gpu.slot) || gpu.sampling) continue;
      const SamplerExit exit = session_->discard(gpu.slot);
      gpu.counters_why = "the counter sampler did not start sampling within " +
                         std::to_string(static_cast<int>(opt_.sampler_start_timeout_ms / 1000)) + " s (it " +
                         exit.describe() + ")";
      warn("GPU " + std::to_string(gpu.identity.index) + ": " + gpu.counters_why);
    }
    return false;
  };
  const auto policy = [&] {
    DriverWait wait;
    wait.due_mono = std::min(core::monotonic_ns() + 200 * recording::kNsPerMs, deadline);
    wait.own_fds = fds;
    return wait;
  };
  if (pump()) LiveDriver().drive(DriverReader{policy, [&](const DriverWake& /*wake*/) { return pump(); }});
}

void Runner::open_recordings() {
  std::error_code ec;
  std::filesystem::create_directories(opt_.output_dir, ec);
  if (ec)
    throw core::Error("cannot create the folder " + opt_.output_dir.string() + ": " + ec.message(),
                      "choose another folder with --report", core::kExitInput);
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  for (auto& gpu : gpus_) {
    recording::RecordingMeta meta;
    meta.tool_version = core::kToolVersion;
    meta.method = core::kMethodVersion;
    meta.gpu = gpu.identity;
    // Without a CUPTI sampler (GPM, GPU-Util only) nothing named the chip: the compute capability's
    // table does when it lists one chip.
    if (meta.gpu.chip.empty()) meta.gpu.chip = chip_for_compute_capability(meta.gpu.compute_capability);
    meta.engines = session_->telemetry(gpu.slot).engine_columns();
    meta.interval_ms = opt_.interval_ms;
    GpmChipSource& gpm = session_->gpm(gpu.slot);
    meta.drain_ms = gpm.is_open() ? gpm_interval_ms() : opt_.drain_ms;
    if (gpm.is_open())
      gpm.columns(meta, gpm_interval_ms());
    else if (gpu.table)
      apply_unit_table(*gpu.table, meta);
    meta.start_ns = outcome_.start_ns;
    meta.run_type = opt_.run_type;
    if (duty_cycled()) {
      meta.duty_on_ms = opt_.duty_on_ms;
      meta.duty_period_ms = opt_.duty_period_ms;
    }
    meta.command = opt_.command;
    meta.host = host;
    if (host_) meta.host_interval_ms = opt_.host_interval_ms;
    const auto path = opt_.output_dir / ("gpu" + std::to_string(gpu.identity.index) + ".dsrec");
    gpu.writer = std::make_unique<recording::RecordingWriter>(path, meta);
    session_->restart_util(gpu.slot, outcome_.start_ns);
    outcome_.recordings.push_back(GpuRecording{gpu.identity.index, path, false, {}, {}, 0});
    // From here the sampler child's messages are written into the recording.
    gpu.sink = std::make_unique<RecordingSink>(*this, gpu);
    session_->set_sink(gpu.slot, gpu.sink.get());
    if (gpm.is_open()) {
      const recording::TimeNs now = stamp();
      note(gpu, now, "chip_source", gpu.gpm_why);
      if (!gpm.sampler().left_out().empty()) {
        std::string list;
        for (const auto& what : gpm.sampler().left_out()) list += (list.empty() ? "" : "; ") + what;
        note(gpu, now, "chip_source", "GPM metrics this GPU did not answer, left out of the table: " + list);
      }
      // Its first sample starts at the pair taken when it was opened.
      gpu.writer->write(gpm.start(outcome_.start_ns, false));
      gpu.sampling = true;
      continue;
    }
    if (gpu.table && !gpu.metrics.empty()) {
      try {
        gpu.evaluator.emplace(*gpu.table, gpu.metrics);
      } catch (const core::Error& e) {
        gpu.counters_why = std::string("the unit table cannot read the sampler's values: ") + e.what();
      }
    }
    const recording::TimeNs now = stamp();
    if (!gpu.counters_why.empty() && !gpu.sampling)
      note(gpu, now, "sampler", "no chip counters: " + gpu.counters_why);
    std::vector<SamplerMessage> pending;
    pending.swap(gpu.pending);
    for (const auto& message : pending) gpu.sink->message(message, now);
    if (gpu.start_exit) gpu.sink->ended(*gpu.start_exit, now);
    gpu.start_exit.reset();
  }
}

void Runner::handle(Gpu& gpu, const SamplerMessage& message, recording::TimeNs now) {
  std::visit(
      [&](const auto& msg) {
        using T = std::decay_t<decltype(msg)>;
        if constexpr (std::is_same_v<T, m::Hello>) {
          if (msg.version != kSamplerProtocolVersion)
            note(gpu, now, "sampler",
                 "the sampler speaks protocol " + std::to_string(msg.version) + ", diescope " +
                     std::to_string(kSamplerProtocolVersion));
        } else if constexpr (std::is_same_v<T, m::Metrics>) {
          if (msg.names != gpu.metrics && gpu.table) {
            gpu.metrics = msg.names;
            session_->use_table(gpu.slot, gpu.table, gpu.metrics);  // a duty period's next child too
            try {
              gpu.evaluator.emplace(*gpu.table, gpu.metrics);
            } catch (const core::Error& e) {
              gpu.evaluator.reset();
              gpu.counters_why = std::string("the sampler's metrics do not make the unit table: ") + e.what();
              note(gpu, now, "sampler", gpu.counters_why);
            }
          }
        } else if constexpr (std::is_same_v<T, m::Clock>) {
          note(gpu, now, "clock",
               "chip sample times: GPU timestamps moved onto CLOCK_REALTIME by " + msg.method + " (offset " +
                   std::to_string(msg.offset_ns) + " ns, within " + std::to_string(msg.uncertainty_ns) +
                   " ns)");
        } else if constexpr (std::is_same_v<T, m::On>) {
          gpu.sampling = true;
          gpu.writer->write(recording::CountersEvent{msg.ts_ns, true, ""});
        } else if constexpr (std::is_same_v<T, m::Sample>) {
          if (!gpu.evaluator) return;
          std::vector<double> values = msg.values;
          if (const auto refused = gpu.check.admit(values, msg.start_ns, gpu.metrics.size())) {
            note(gpu, now, refused->topic, refused->text);
            return;
          }
          gpu.evaluator->evaluate(values, gpu.values);
          gpu.writer->write(recording::OwnedChipSample{msg.start_ns, std::max(msg.end_ns, msg.start_ns),
                                                       gpu.values.units, gpu.values.diagnostics,
                                                       gpu.values.counts});
          gpu.last_sample_end = msg.end_ns;
          ++gpu.samples;
        } else if constexpr (std::is_same_v<T, m::Drain>) {
          gpu.blanked += msg.blanked;
          const RunPartScope part(clocks_, RunPart::write);
          gpu.writer->flush();
        } else if constexpr (std::is_same_v<T, m::Overflow>) {
          note(gpu, now, "sampler", msg.text);
          if (!gpu.overflow_warned) {
            gpu.overflow_warned = true;
            warn("GPU " + std::to_string(gpu.identity.index) + ": " + msg.text);
          }
        } else if constexpr (std::is_same_v<T, m::Gap>) {
          note(gpu, now, "sampler",
               "chip samples lost from " + std::to_string(msg.from_ns) + " to " + std::to_string(msg.to_ns) +
                   " ns (" + ms_text(msg.to_ns - msg.from_ns) + ")");
        } else if constexpr (std::is_same_v<T, m::Note>) {
          if (msg.topic != "timing") note(gpu, now, msg.topic, msg.text);
        } else if constexpr (std::is_same_v<T, m::Off>) {
          if (!gpu.counters_off_written) {
            gpu.writer->write(recording::CountersEvent{msg.ts_ns, false, msg.reason});
            gpu.counters_off_written = true;
          }
        } else if constexpr (std::is_same_v<T, m::Error>) {
          // An error before sampling began is already the recording's "no chip counters" note,
          // except for a sampler started again for a duty period.
          if (!gpu.sampling && gpu.duty_restarts == 0) return;
          const ErrorText text = describe_error(msg, gpu.identity.index);
          gpu.counters_why = text.cause;
          note(gpu, now, "sampler", text.cause + "; " + text.fix);
          warn("GPU " + std::to_string(gpu.identity.index) + ": " + text.cause);
        } else {
          // Device arrives before the recording opens; Bye needs nothing.
        }
      },
      message);
}

// The sampler child ended and was reaped, its last messages written (SamplerSupervisor::reap).
void Runner::sampler_ended(Gpu& gpu, const SamplerExit& exit, recording::TimeNs now) {
  if (exit.clean()) return;
  std::string tail = last_line(exit.stderr_tail);
  std::string why = "the counter sampler " + exit.describe();
  if (!exit.exited) why += " (NVIDIA's counter decoder runs inside it)";
  if (!tail.empty()) why += "; its last words: " + tail;
  if (gpu.counters_why.empty()) gpu.counters_why = why;
  const std::string where = gpu.samples > 0 ? "chip samples stop at " + std::to_string(gpu.last_sample_end) +
                                                  " ns, after " + std::to_string(gpu.samples) + " samples"
                                            : "no chip sample arrived";
  note(gpu, now, "sampler", why + "; " + where);
  if (!gpu.counters_off_written && gpu.sampling) {
    gpu.writer->write(recording::CountersEvent{now, false, why});
    gpu.counters_off_written = true;
  }
  warn("GPU " + std::to_string(gpu.identity.index) + ": " + why +
       "; the report covers the samples that arrived");
}

void Runner::start_gpm() {
  for (auto& gpu : gpus_) {
    // GPM for the whole run where PM sampling could not start, decided and opened by the session's
    // switch (docs/live-collection.md#what-was-decided-for-run, docs/live-collection.md#the-gpm-switch).
    const std::optional<bool> opened = session_->gpm_for_whole_run(gpu.slot, gpu.sampling, stamp());
    if (!opened) continue;
    const std::string gpu_name = "GPU " + std::to_string(gpu.identity.index);
    const std::string pm_why = gpu.pm_cause.empty() ? gpu.counters_why : gpu.pm_cause;
    if (!*opened) {
      gpu.counters_why = (pm_why == "--source gpm" ? std::string() : pm_why + "; ") +
                         "NVML GPM cannot stand in: " + session_->gpm(gpu.slot).error();
      warn(gpu_name + ": no chip counters: " + gpu.counters_why + "; the report has GPU-Util only");
      continue;
    }
    gpu.counters_why.clear();
    gpu.pending.clear();  // the PM sampler's messages: its error is in the note below
    gpu.table = nullptr;
    gpu.gpm_why = fmt::format(
        "chip samples come from NVML GPM every {:g} ms ({}); GPM does not see L1, L2 or load/store, so "
        "DIE-Util is the busiest of the units it has (docs/method.md#gpm-as-a-second-chip-source)",
        gpm_interval_ms(),
        pm_why == "--source gpm" ? "--source gpm" : "PM sampling could not start: " + pm_why);
    if (opt_.source == ChipSourceSetting::automatic) warn(gpu_name + ": " + gpu.gpm_why);
  }
}

void Runner::sample_gpm(recording::TimeNs now) {
  for (auto& gpu : gpus_) {
    GpmChipSource& gpm = session_->gpm(gpu.slot);
    if (!gpm.is_open() || !gpu.writer) continue;
    std::optional<GpmSample> sample = gpm.sampler().sample(now);
    if (!sample) {
      if (!gpm.sampler().last_error().empty())
        note(gpu, now, "chip_source", "a GPM sample could not be taken: " + gpm.sampler().last_error());
      continue;
    }
    if (!sample->unread.empty()) {
      std::string list;
      for (const auto& what : sample->unread) list += (list.empty() ? "" : "; ") + what;
      note(gpu, now, "chip_source", "GPM left columns unread in the sample ending now: " + list);
    }
    gpu.writer->write(recording::OwnedChipSample{sample->start_ns, sample->end_ns, sample->columns.units,
                                                 sample->columns.diagnostics, sample->columns.counts});
    gpu.check.kept(sample->start_ns);
    gpu.last_sample_end = sample->end_ns;
    ++gpu.samples;
  }
}

void Runner::read_command_output(recording::TimeNs now) {
  core::UniqueFd& command_stdout = command_out();
  if (!command_stdout) return;
  char chunk[65536];
  for (;;) {
    ssize_t n = ::read(command_stdout.get(), chunk, sizeof chunk);
    if (n > 0) {
      std::string_view bytes(chunk, static_cast<std::size_t>(n));
      if (!stdout_broken_) {
        std::size_t done = 0;
        while (done < bytes.size()) {
          ssize_t w = ::write(opt_.stdout_fd, bytes.data() + done, bytes.size() - done);
          if (w > 0) {
            done += static_cast<std::size_t>(w);
          } else if (w < 0 && errno == EINTR) {
            continue;
          } else if (w < 0 && errno == EAGAIN) {
            // Back-pressure from the user's stdout, not a live-collection wait: it stays outside the driver.
            pollfd out{opt_.stdout_fd, POLLOUT, 0};
            ::poll(&out, 1, 100);
          } else {
            stdout_broken_ = true;  // keep reading so the command never blocks on a full pipe
            break;
          }
        }
      }
      markers_.feed(
          bytes,
          [&](recording::MarkKind kind) {
            const recording::TimeNs at = std::max(now, last_mark_ns_);
            for (auto& gpu : gpus_) gpu.writer->write(recording::Mark{at, kind});
            last_mark_ns_ = at;
            // The window's energy starts and ends at a read of the counter (docs/energy.md#what-is-recorded).
            if (command_running_)
              for (auto& gpu : gpus_) read_power(gpu, at, true);
          },
          [&](const PrintedWindow& window) { printed_window(window, now); },
          [&](const PrintedFlops& flops) { printed_flops(flops, now); });
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    command_stdout.reset();  // EOF: the command (and anything it started) closed its stdout
    return;
  }
}

// A window the command printed: a start and a stop mark at its times, and a note saying where they
// came from (docs/method.md#a-window-printed-afterwards). A line that cannot be used is a note and a
// warning, and the run goes on.
void Runner::printed_window(const PrintedWindow& window, recording::TimeNs now) {
  recording::TimeNs start = window.start_ns;
  recording::TimeNs stop = window.stop_ns;
  if (window.form == PrintedWindow::Form::last) {
    start = now - window.length_ns;
    stop = now;
  }
  std::string why = window.error;
  if (why.empty() && stop > now)
    why = fmt::format(
        "its stop time is {} after the line reached diescope: the times must be CLOCK_REALTIME "
        "seconds of this machine",
        ms_text(stop - now));
  if (why.empty() && start < last_mark_ns_)
    why = "it starts before a window mark already recorded (marks are kept in time order)";
  if (!why.empty()) {
    const std::string text = fmt::format("the window line '{}' was left out: {}", window.line, why);
    note_all(now, "window", text);
    warn(text);
    return;
  }
  for (auto& gpu : gpus_) {
    gpu.writer->write(recording::Mark{start, recording::MarkKind::start});
    gpu.writer->write(recording::Mark{stop, recording::MarkKind::stop});
  }
  last_mark_ns_ = stop;
  note_all(
      now, "window",
      fmt::format("the command printed its window ('{}'): marks at {} and {} ns, {:.3f} s, the line arrived "
                  "{} after the stop",
                  window.line, start, stop, static_cast<double>(stop - start) * 1e-9, ms_text(now - stop)));
}

// The FLOPs the command printed (docs/energy.md#telling-diescope-the-flops): a flops note the
// analysis reads (docs/recording-format.md#flops-notes); a line that cannot be read is a note and a
// warning, and the run goes on.
void Runner::printed_flops(const PrintedFlops& flops, recording::TimeNs now) {
  if (!flops.error.empty()) {
    const std::string text = fmt::format("the FLOPs line '{}' was left out: {}", flops.line, flops.error);
    note_all(now, "flops_line", text);
    warn(text);
    return;
  }
  note_all(now, std::string(recording::kFlopsNoteTopic), recording::flops_note_text(flops.note));
}

void Runner::handle_signals() {
  while (const auto caught = signals_->next()) {
    const int sig = caught->number;
    // A terminal's Ctrl-C reaches the whole foreground group, the command too.
    const bool from_terminal = caught->from_kernel;
    if (sig == SIGCHLD) continue;  // the loop's try_wait sees it
    outcome_.interrupted = true;
    const recording::TimeNs now = stamp();
    if (!command_running_) continue;
    // The terminal already delivered it to the command; a third one ends the command for good.
    ++signals_forwarded_;
    const int send = signals_forwarded_ >= 3 ? SIGKILL : sig;
    if (!from_terminal || send == SIGKILL) command_.signal(send);
    note_all(now, "run",
             "diescope received " + core::signal_name(sig) +
                 (from_terminal ? " from the terminal (the command got it too)" : "") +
                 (send == SIGKILL ? "; the command was killed (SIGKILL) after the third"
                  : from_terminal ? ""
                                  : "; forwarded to the command"));
  }
}

void Runner::tick(recording::TimeNs now, bool ended) {
  // A wall-clock step or a suspend between two ticks is a jump, as the agent sees them.
  const core::ClockEvent clock_event = clock_watch_.check(core::SystemClock().read());
  if (clock_event.kind != core::ClockEvent::Kind::none)
    for (auto& gpu : gpus_) gpu.writer->write(recording::ClockJump{now, clock_event.step_ns});

  // Clocks and throttle reasons every tick: they move within a second and the analysis needs them
  // under each sample and step. The power line (with the energy counter, 3.4 to 3.8 ms of CPU a read
  // on the H200) once a second and at the window's marks and the command's end
  // (docs/energy.md#what-is-recorded). GPU-Util samples (2.2 ms a read) every 5 s: they wait in the
  // driver's buffer, which holds 14 s, and the recording gets every one (docs/live-collection.md#policies);
  // at every tick after the end, until one at or after it, and at every tick while polled (a read is
  // a sample). Engine and process lists once a second: they move slowly.
  // The session's cadence says what each GPU's read takes (after the end only GPU-Util is still awaited).
  const TickReads reads = session_->tick_reads(now, ended, command_pid());
  for (auto& gpu : gpus_) {
    read_nvml(gpu, now, reads.gpus.at(gpu.slot));
    // A drain of the sampler child flushes the recording; without a running child (GPM, GPU-Util
    // only) the slow tick does, so no recording is more than a second behind what was read
    // (docs/live-collection.md#policies).
    if (reads.slow && !session_->sampler_running(gpu.slot)) {
      const RunPartScope part(clocks_, RunPart::write);
      gpu.writer->flush();
    }
  }
}

// One read of a GPU's NVML through the session's telemetry, written into its recording.
void Runner::read_nvml(Gpu& gpu, recording::TimeNs now, const NvmlReadSet& what) {
  const RunPartScope part(clocks_, RunPart::nvml_records);
  GpuBatch batch;
  {
    const RunPartScope calls(clocks_, static_cast<std::size_t>(RunPart::nvml) +
                                          nvml_set(what.util, what.clocks, what.power, what.engines,
                                                   what.processes, what.holders_of.has_value()));
    session_->read(gpu.slot, now, what, batch);
  }
  for (const auto& sample : batch.list<recording::UtilSample>()) gpu.writer->write(sample);
  for (const auto& n : batch.notes) note(gpu, n.ts_ns, n.topic, n.text);
  for (const auto& clock : batch.list<recording::ClockReading>()) gpu.writer->write(clock);
  for (const auto& reasons : batch.list<recording::ThrottleReading>()) gpu.writer->write(reasons);
  for (const auto& power : batch.list<recording::PowerLimitReading>()) gpu.writer->write(power);
  for (const auto& engines : batch.list<recording::EngineReading>()) gpu.writer->write(engines);
  for (const auto& processes : batch.list<recording::ProcessReading>()) gpu.writer->write(processes);
  for (const auto& holder : batch.holders) gpu.writer->write(holder);
}

void Runner::read_power(Gpu& gpu, recording::TimeNs now, bool asked) {
  // The session's power rule (docs/live-collection.md#policies): once a second, and where an energy
  // figure asks for a read at `now` (a window mark, the command's end).
  if (!session_->power_due(gpu.slot, now, asked)) return;
  NvmlReadSet what;
  what.util = what.clocks = what.engines = what.processes = false;
  read_nvml(gpu, now, what);
}

// Engines are read once a second, so one more reading covers the command's last second.
void Runner::read_engines(Gpu& gpu, recording::TimeNs now) {
  NvmlReadSet what;
  what.util = what.clocks = what.power = what.processes = false;
  read_nvml(gpu, now, what);
}

// Waits through the session's driver, with no feed (docs/live-collection.md#the-driver): due at the next
// NVML tick, GPM sample or host probe; woken by a signal, the command's stdout or a sampler child.
void Runner::loop() {
  const recording::TimeNs start = core::monotonic_ns();
  DriverTimer tick_due{start, session_->cadence().fast_ns};
  DriverTimer host_due{start, static_cast<recording::TimeNs>(opt_.host_interval_ms * 1e6)};
  const auto gpm_ns = static_cast<recording::TimeNs>(gpm_interval_ms() * 1e6);
  std::optional<DriverTimer> gpm_due;  // where a GPU reads GPM
  for (const auto& gpu : gpus_)
    if (session_->gpm(gpu.slot).is_open()) gpm_due = DriverTimer{core::monotonic_ns() + gpm_ns, gpm_ns};
  recording::TimeNs end_mono = 0;  // when the command ended, on the monotonic clock
  const auto policy = [&] {
    DriverWait wait;  // output, a signal, or the next due time
    wait.own_fds.push_back(signals_->fd());
    if (command_out()) wait.own_fds.push_back(command_out().get());
    for (auto& gpu : gpus_)
      if (session_->sampler_running(gpu.slot)) wait.own_fds.push_back(session_->sampler_fd(gpu.slot));
    wait.due_by(tick_due.next_mono);
    if (gpm_due && command_running_) wait.due_by(gpm_due->next_mono);
    if (host_ && command_running_) wait.due_by(host_due.next_mono);
    return wait;
  };
  // Its sink; false once the command has ended and its samplers and GPU-Util samples are done.
  const auto body = [&](const DriverWake& /*wake*/) {
    clocks_.wake();  // the driver's wait since the last wake is run's `wait` part
    {
      const RunPartScope part(clocks_, RunPart::signals);
      handle_signals();
    }
    recording::TimeNs now = stamp();
    {
      const RunPartScope part(clocks_, RunPart::command_output);
      read_command_output(now);
    }
    for (auto& gpu : gpus_) {
      const RunPartScope part(clocks_, RunPart::sampler_pipe);
      if (session_->sampler_running(gpu.slot))
        session_->pump(gpu.slot, now);  // one whose output closed is reaped
    }
    if (gpm_due && command_running_ && gpm_due->due(core::monotonic_ns())) {
      const RunPartScope part(clocks_, RunPart::gpm);
      sample_gpm(stamp());
      gpm_due->served(core::monotonic_ns());
    }

    // Host probes while the command runs; the tree is read before its exit is reaped.
    if (host_ && command_running_ && host_due.due(core::monotonic_ns())) {
      read_host(stamp());
      host_due.served(core::monotonic_ns());
    }

    if (command_running_) {
      // Attached, the measured part ends when its pipe is closed (end of file).
      std::optional<core::ExitStatus> status;
      {
        const RunPartScope part(clocks_, RunPart::child_wait);
        status = !attached_      ? command_.try_wait()
                 : attached_out_ ? std::nullopt
                                 : std::optional<core::ExitStatus>(core::ExitStatus::from_wait_status(0));
      }
      if (status) {
        command_running_ = false;
        outcome_.end_ns = stamp();
        end_mono = core::monotonic_ns();
        // GPM's last sample ends with the command; then it is read no more.
        if (gpm_due) sample_gpm(outcome_.end_ns);
        // Counters off as soon as the command ends: each sampler stops, drains and disables.
        for (auto& gpu : gpus_)
          if (session_->sampler_running(gpu.slot))
            session_->set_counters(gpu.slot, false, core::realtime_ns());
        outcome_.exit_code = status->shell_code();
        outcome_.ending = status->exited() ? recording::RunEnding::exit()
                                           : recording::RunEnding::killed_by(status->signal());
        read_command_output(outcome_.end_ns);
        // Engines are read once a second, so one more reading covers the command's last second; the
        // power line too, so the run's energy ends at a read of the counter.
        for (auto& gpu : gpus_) {
          read_engines(gpu, outcome_.end_ns);
          read_power(gpu, outcome_.end_ns, true);
        }
      }
    }

    // The session's duty step (docs/method.md#duty-cycles-in-run): run's --duty, from the command's start,
    // at the driver's wakes, so each edge comes up to one poll late.
    if (command_running_ && duty_cycled()) session_->duty_step(stamp(), outcome_.start_ns);

    if (tick_due.due(core::monotonic_ns())) {
      const RunPartScope part(clocks_, RunPart::tick);
      tick(stamp(), !command_running_);
      tick_due.served(core::monotonic_ns());
    }

    if (command_running_) return true;
    const recording::TimeNs since_end = core::monotonic_ns() - end_mono;
    bool samplers_done = true;
    for (auto& gpu : gpus_) {
      if (!session_->sampler_running(gpu.slot)) continue;
      samplers_done = false;
      if (since_end > kSamplerStopTimeoutNs + static_cast<recording::TimeNs>(opt_.drain_ms * 1e6)) {
        session_->kill(gpu.slot);  // it did not stop: sampler_ended() says so
      }
    }
    if (!samplers_done) return true;
    if (since_end >= static_cast<recording::TimeNs>(opt_.end_wait_ms * 1e6)) return false;
    for (auto& gpu : gpus_)  // a GPU-Util sample at or after the end, unless polled
      if (!session_->util_reached(gpu.slot, outcome_.end_ns)) return true;
    return false;
  };
  LiveDriver().drive(DriverReader{policy, body});
  // Whatever the command (or what it left running) still wrote.
  read_command_output(stamp());
}

RunOutcome Runner::run() {
  attached_ = opt_.attach_fd >= 0;
  if (opt_.command.empty() && !attached_)
    throw core::UsageError("no command to run",
                           "put the command after --, e.g. diescope run -- python train.py");
  choose_gpus();
  // A missing command fails before any counter is switched on.
  if (!attached_) core::resolve_command(opt_.command[0]);
  // Attached, the program's own signals stay its own: the loop's ticks notice the sampler's end.
  if (attached_)
    signals_.emplace(std::initializer_list<int>{}, std::initializer_list<int>{});
  else
    signals_.emplace(std::initializer_list<int>{SIGINT, SIGTERM, SIGCHLD},
                     std::initializer_list<int>{SIGPIPE});
  start_samplers();
  wait_for_samplers();
  start_gpm();

  if (opt_.host_interval_ms > 0) host_.emplace();
  outcome_.start_ns = stamp();
  open_recordings();
  if (attached_) {
    attached_out_ = core::UniqueFd(opt_.attach_fd);
    stdout_broken_ = true;  // the program's own lines: scanned for markers, not copied anywhere
  } else {
    core::ChildSpec command;
    command.argv = opt_.command;
    command.out = core::Stdio::pipe();  // teed to opt_.stdout_fd and scanned for window markers
    command_ = core::ChildProcess(command);
  }
  command_running_ = true;
  if (opt_.on_start) opt_.on_start(outcome_.start_ns);
  if (const char* timing = std::getenv("DIESCOPE_RUN_TIMING"); timing && std::strcmp(timing, "1") == 0) {
    ::getrusage(attached_ ? RUSAGE_THREAD : RUSAGE_SELF, &usage_at_start_);
    ::getrusage(RUSAGE_THREAD, &thread_at_start_);
    timing_start_ns_ = core::monotonic_ns();
    clocks_.start();
  }
  loop();

  const recording::TimeNs now = stamp();
  note_host_cost(now);
  note_run_timing(now);
  for (auto& gpu : gpus_) {
    if (session_->sampler_running(gpu.slot)) session_->finish(gpu.slot, now);
    if (gpu.sampling && !gpu.counters_off_written) {
      gpu.writer->write(recording::CountersEvent{now, false, gpu.counters_why});
      gpu.counters_off_written = true;
    }
    if (outcome_.interrupted)
      note(gpu, now, "run", "the run was interrupted; the recording ends with the command");
    if (gpu.blanked > 0)
      note(gpu, now, "sampler",
           std::to_string(gpu.blanked) + " of " + std::to_string(gpu.samples) +
               " chip samples were split between two decodes and came without values; the "
               "analysis leaves them out");
    gpu.writer->write(recording::RunEnd{outcome_.end_ns, outcome_.exit_code, outcome_.ending});
    gpu.writer->close();
  }
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    auto& rec = outcome_.recordings[i];
    rec.samples = gpus_[i].samples;
    rec.counters = gpus_[i].samples > 0;
    if (rec.counters)
      rec.chip_source = session_->gpm(gpus_[i].slot).is_open() ? ChipSource::gpm : ChipSource::pm;
    rec.counters_why = gpus_[i].counters_why;
  }
  return outcome_;
}

}  // namespace

namespace {

// Seconds as printed, "S" or "S.F" with digits only, to whole nanoseconds (digits past the ninth
// decimal are dropped). nullopt: not such a number, or beyond the year 2262 in nanoseconds.
std::optional<recording::TimeNs> seconds_to_ns(std::string_view text) {
  const std::size_t dot = text.find('.');
  const std::string_view whole = text.substr(0, dot);
  const std::string_view fraction = dot == std::string_view::npos ? std::string_view{} : text.substr(dot + 1);
  if (whole.empty() || whole.size() > 10) return std::nullopt;
  if (dot != std::string_view::npos && fraction.empty()) return std::nullopt;
  recording::TimeNs ns = 0;
  for (char c : whole) {
    if (c < '0' || c > '9') return std::nullopt;
    ns = ns * 10 + (c - '0');
  }
  if (ns > std::numeric_limits<recording::TimeNs>::max() / recording::kNsPerSecond - 1) return std::nullopt;
  ns *= recording::kNsPerSecond;
  recording::TimeNs scale = recording::kNsPerSecond / 10;
  for (char c : fraction) {
    if (c < '0' || c > '9') return std::nullopt;
    ns += (c - '0') * scale;
    scale /= 10;
  }
  return ns;
}

std::vector<std::string_view> words_of(std::string_view text) {
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && text[i] == ' ') ++i;
    const std::size_t begin = i;
    while (i < text.size() && text[i] != ' ') ++i;
    if (i > begin) words.push_back(text.substr(begin, i - begin));
  }
  return words;
}

}  // namespace

std::optional<PrintedWindow> parse_printed_window(std::string_view line) {
  constexpr std::string_view kTimes = "diescope: measure window";
  constexpr std::string_view kLast = "diescope: measure last";
  PrintedWindow w;
  w.line = std::string(line);
  std::string_view rest;
  if (line.starts_with(kTimes) && (line.size() == kTimes.size() || line[kTimes.size()] == ' ')) {
    w.form = PrintedWindow::Form::times;
    rest = line.substr(kTimes.size());
  } else if (line.starts_with(kLast) && (line.size() == kLast.size() || line[kLast.size()] == ' ')) {
    w.form = PrintedWindow::Form::last;
    rest = line.substr(kLast.size());
  } else {
    return std::nullopt;
  }
  const std::vector<std::string_view> words = words_of(rest);
  if (w.form == PrintedWindow::Form::times) {
    const auto start = words.size() == 2 ? seconds_to_ns(words[0]) : std::nullopt;
    const auto stop = words.size() == 2 ? seconds_to_ns(words[1]) : std::nullopt;
    if (!start || !stop) {
      w.error =
          "it does not hold two times in seconds since the Unix epoch (e.g. 'diescope: measure window "
          "1796112000.250 1796112012.750')";
    } else if (*stop <= *start) {
      w.error = "its stop time is not after its start time";
    } else {
      w.start_ns = *start;
      w.stop_ns = *stop;
    }
  } else {
    const auto length = words.size() == 1 ? seconds_to_ns(words[0]) : std::nullopt;
    if (!length)
      w.error = "it does not hold one length in seconds (e.g. 'diescope: measure last 12.5')";
    else if (*length <= 0)
      w.error = "its length is not above 0 s";
    else
      w.length_ns = *length;
  }
  return w;
}

std::optional<PrintedFlops> parse_printed_flops(std::string_view line) {
  constexpr std::string_view kFlops = "diescope: measure flops";
  if (!line.starts_with(kFlops) || (line.size() != kFlops.size() && line[kFlops.size()] != ' '))
    return std::nullopt;
  PrintedFlops f;
  f.line = std::string(line);
  const std::vector<std::string_view> words = words_of(line.substr(kFlops.size()));
  const bool scope_ok =
      words.size() == 1 || (words.size() == 2 && (words[1] == "window" || words[1] == "run"));
  double flops = 0;
  bool number_ok = false;
  if (!words.empty()) {
    const auto [end, ec] = std::from_chars(words[0].data(), words[0].data() + words[0].size(), flops);
    number_ok = ec == std::errc() && end == words[0].data() + words[0].size() && std::isfinite(flops);
  }
  if (!number_ok || !scope_ok) {
    f.error =
        "it does not hold a number of FLOPs, optionally followed by 'window' or 'run' (e.g. 'diescope: "
        "measure flops 2.2e13')";
  } else if (!(flops > 0)) {
    f.error = "its FLOPs are not above 0";
  } else {
    f.note.flops = flops;
    f.note.scope =
        words.size() == 2 && words[1] == "run" ? recording::FlopsScope::run : recording::FlopsScope::window;
  }
  return f;
}

void MarkerScanner::feed(std::string_view bytes, const std::function<void(recording::MarkKind)>& on_mark,
                         const std::function<void(const PrintedWindow&)>& on_window,
                         const std::function<void(const PrintedFlops&)>& on_flops) {
  for (char c : bytes) {
    if (c != '\n') {
      if (overlong_) continue;
      if (line_.size() >= kMaxMarkerLine) {
        overlong_ = true;
        line_.clear();
        continue;
      }
      line_.push_back(c);
      continue;
    }
    if (!overlong_) {
      std::string_view line = line_;
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (line == "diescope: measure start") {
        on_mark(recording::MarkKind::start);
      } else if (line == "diescope: measure stop") {
        on_mark(recording::MarkKind::stop);
      } else if (const std::optional<PrintedFlops> flops = parse_printed_flops(line)) {
        if (on_flops) on_flops(*flops);
      } else if (on_window) {
        if (const std::optional<PrintedWindow> window = parse_printed_window(line)) on_window(*window);
      }
    }
    line_.clear();
    overlong_ = false;
  }
}

RunOutcome record_run(const RunOptions& options, const Nvml& nvml) {
  return Runner(options, nvml).run();
}

}  // namespace diescope::collect
