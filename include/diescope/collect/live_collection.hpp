// The live session (docs/live-collection.md): every GPU of the host through NVML (GPU-Util samples, clocks,
// clock-event reasons, power limit, engines, processes at each poll) and the CUPTI PM-sampling child
// (chip counters), one child per GPU, started when a reader wants the counters and stopped when it
// no longer does: stopping the child disables the counters (disable, never pause:
// docs/method.md#measurement-cost). With --source auto it reads NVML GPM instead while another
// profiler runs, and PM sampling again after.
//
// A child that crashes or reports an error is restarted with a backoff (1 s, doubling to 60 s),
// as long as its reader still wants counters; a child that ends cleanly resets the backoff.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "diescope/collect/profiler_watch.hpp"
#include "diescope/collect/duty.hpp"
#include "diescope/collect/feed.hpp"
#include "diescope/collect/gpm.hpp"
#include "diescope/collect/gpm_source.hpp"
#include "diescope/collect/nvml.hpp"
#include "diescope/collect/chip_source.hpp"
#include "diescope/collect/sampler.hpp"
#include "diescope/collect/unit_tables.hpp"

namespace diescope::collect {

class GpuHolderTracker;  // host_probes.hpp

// What one read of a GPU's NVML side takes: the reader's NvmlCadence decides
// (docs/live-collection.md#policies).
struct NvmlReadSet {
  bool util = true;       // GPU-Util samples (or a polled reading, once it polls)
  bool clocks = true;     // clocks and clock-event reasons
  bool power = true;      // the power line: limit, draw, energy counter
  bool engines = true;    // engine utilisations
  bool processes = true;  // the process lists' reading
  // Who holds the GPU, with the measured command's pid (`run`: docs/recording-format.md#gpu-holders);
  // nullopt: not read.
  std::optional<std::int64_t> holders_of;
  // The pids on NVML's process lists, into GpuBatch::process_ids (`top` shows them:
  // docs/top.md#sources).
  bool process_ids = false;
};

// The one place a live reader opens NVML GPM (docs/live-collection.md#who-reads-it): the session at a
// switch and `run` for a whole run (both through GpmChipSource and GpuTelemetry::open_gpm:
// docs/live-collection.md#the-gpm-switch), and attribution's watcher for each GPU instance under MIG
// (`gpu_instance`, docs/attribution.md#mig). Its first pair is taken at `now`; throws DeviceError
// when GPM cannot be read.
std::unique_ptr<collect::GpmSampler> open_gpm(const collect::NvmlDevice& device, recording::TimeNs now,
                                              std::optional<unsigned> gpu_instance = std::nullopt);

// One GPU's NVML side, read at every poll. An interface so tests can stand in for NVML.
class GpuTelemetry {
 public:
  virtual ~GpuTelemetry() = default;
  virtual recording::GpuIdentity identity() const = 0;
  virtual std::vector<recording::ColumnDef> engine_columns() const = 0;
  // Appends what is new since the previous read (GPU-Util samples, one clock, throttle, power,
  // engine and process reading) and notes (e.g. the switch to polled GPU-Util), as wanted() says.
  // The power line (limit, draw, energy counter) is read only when power_wanted() holds: the
  // reader's NvmlCadence decides (docs/live-collection.md#policies); a stand-in may read it anyway.
  virtual void read(recording::TimeNs now, GpuBatch& out) = 0;
  void want(const NvmlReadSet& what) { wanted_ = what; }
  const NvmlReadSet& wanted() const { return wanted_; }
  void want_power(bool wanted) { wanted_.power = wanted; }
  bool power_wanted() const { return wanted_.power; }
  void want_util(bool wanted) { wanted_.util = wanted; }
  void want_process_ids(bool wanted) { wanted_.process_ids = wanted; }
  // GPU-Util is polled (nvmlDeviceGetUtilizationRates) rather than read from NVML's sample buffer.
  virtual bool util_polling() const { return false; }
  // GPU-Util samples from 1 s before `util_start` on, from now (run's command starts after its GPUs
  // are chosen). A stand-in without a sample buffer ignores it.
  virtual void restart_util(recording::TimeNs /*util_start*/) {}
  // The newest GPU-Util sample's time; 0 while none was handed out.
  virtual recording::TimeNs last_util_ns() const { return 0; }
  // NVML GPM for this GPU, its first pair taken at `now`. Throws DeviceError when GPM cannot be
  // read (the default: a stand-in without GPM).
  virtual std::unique_ptr<collect::GpmSampler> open_gpm(recording::TimeNs now);
  // The GPU's NVML device, for a reader of the same GPU on another thread that makes NVML calls of
  // its own (attribution's watcher: process lists, MIG, energy, per-process utilisation;
  // docs/live-collection.md#who-reads-it). Null for a stand-in without NVML.
  virtual const collect::NvmlDevice* nvml_device() const { return nullptr; }

 private:
  NvmlReadSet wanted_;
};

// A GPU's NVML side through the driver: the session's, and `run`'s (docs/live-collection.md#what-it-owns).
// GPU-Util samples are handed out in time order (one older than the last handed out is left out).
class NvmlTelemetry final : public GpuTelemetry {
 public:
  // Borrows `nvml`, which must outlive it; GPU-Util samples from 1 s before `util_start` on.
  NvmlTelemetry(const collect::Nvml& nvml, int index, recording::TimeNs util_start);
  // Keeps `nvml` alive.
  NvmlTelemetry(std::shared_ptr<const collect::Nvml> nvml, int index, recording::TimeNs util_start);
  ~NvmlTelemetry() override;
  recording::GpuIdentity identity() const override { return identity_; }
  std::vector<recording::ColumnDef> engine_columns() const override { return engine_columns_; }
  void read(recording::TimeNs now, GpuBatch& out) override;
  std::unique_ptr<collect::GpmSampler> open_gpm(recording::TimeNs now) override;
  const collect::NvmlDevice* nvml_device() const override { return device_.get(); }
  void restart_util(recording::TimeNs util_start) override;
  bool util_polling() const override;
  recording::TimeNs last_util_ns() const override { return last_util_ns_; }

 private:
  std::shared_ptr<const collect::Nvml> keep_;
  std::unique_ptr<collect::NvmlDevice> device_;
  std::unique_ptr<collect::GpuUtilReader> util_;
  recording::TimeNs last_util_ns_ = 0;
  recording::GpuIdentity identity_;
  std::vector<collect::NvmlEngine> engines_;
  std::vector<recording::ColumnDef> engine_columns_;
  std::unique_ptr<collect::GpuHolderTracker> holders_;
};

struct SupervisorTiming {
  recording::TimeNs backoff_initial_ns = recording::kNsPerSecond;
  recording::TimeNs backoff_max_ns = 60 * recording::kNsPerSecond;
  recording::TimeNs stop_timeout_ns =
      5 * recording::kNsPerSecond;  // a child that does not stop by then is killed
  // A child whose output closed is waited for this long before it is killed and reaped.
  recording::TimeNs end_wait_ns = 5 * recording::kNsPerSecond;
};

// What a reader does when its sampler child ends without being asked to
// (docs/live-collection.md#policies): the session starts it again after a backoff; `run` does not
// (its report covers the samples that arrived).
enum class RestartRule { after_backoff, none };

// Which polls read the power line: limit, draw and NVML's energy counter, whose read costs 3.4 to
// 3.8 ms of CPU on the H200 (docs/live-collection.md#policies, docs/energy.md#what-is-recorded).
enum class PowerReads {
  every_read,      // at every read of the clocks (top)
  when_due,        // while the counters are wanted, and where an energy figure asks (the agent)
  every_power_ns,  // every NvmlCadence::power_ns, and where an energy figure asks (run)
};

// What the power rule looks at, for one GPU at one read.
struct PowerReadState {
  bool counters_wanted = false;  // the reader wants the chip counters now
  // An energy figure needs a read here: the first read, a period's end, the first read after the
  // counters went off (the agent); a window mark, the command's end (run).
  bool asked = false;
  bool last_failed = false;  // the counter's last read gave no number: the draw stands in, every read
  recording::TimeNs since_last_ns = std::numeric_limits<recording::TimeNs>::max();  // since the last read
};

// The longest wait between two reads of NVML's GPU-Util samples where no figure asks for them, the
// agent's and run's (docs/agent.md#nvml-reads, docs/live-collection.md#policies): well within the
// 14 s NVML's sample buffer holds on the H200.
inline constexpr recording::TimeNs kGpuUtilSamplesEveryNs = 5 * recording::kNsPerSecond;

// How often a reader reads NVML (docs/live-collection.md#policies), the one place that states it for
// every reader: clocks and clock-event reasons every `fast_ns`; GPU-Util samples, engines and
// processes every `slow_ns`; the power line as `power` says.
struct NvmlCadence {
  recording::TimeNs fast_ns = recording::kNsPerSecond;
  recording::TimeNs slow_ns = recording::kNsPerSecond;
  PowerReads power = PowerReads::every_read;
  recording::TimeNs power_ns = 0;  // PowerReads::every_power_ns: the power line this often
  // GPU-Util samples, where not every slow read: at the reads an energy figure asks for or the
  // counters are wanted (when a figure is made from them), and at least this often (NVML keeps them
  // in its buffer meanwhile); at every slow read once GPU-Util is polled. 0: every slow read.
  recording::TimeNs util_ns = 0;
  // The pids on NVML's process lists at every slow read (top shows them; NvmlReadSet::process_ids).
  bool process_ids = false;
  // run's power line once a second (docs/energy.md#what-is-recorded).
  static constexpr recording::TimeNs kRunPowerNs = recording::kNsPerSecond;

  // Whether a read of the clocks also reads the power line.
  bool reads_power(const PowerReadState& state) const;
  // Whether a slow read also reads GPU-Util samples, `since_util_ns` after the last that did.
  bool reads_util(const PowerReadState& state, recording::TimeNs since_util_ns, bool util_polling) const;
  // top's: everything once a poll, the pids on the process lists too.
  static NvmlCadence once_a_poll(recording::TimeNs poll_ns) {
    return {poll_ns, poll_ns, PowerReads::every_read, 0, 0, true};
  }
  // The agent's: everything once a poll, the power line and GPU-Util samples when due
  // (docs/agent.md#nvml-reads).
  static NvmlCadence agent(recording::TimeNs poll_ns) {
    return {poll_ns, poll_ns, PowerReads::when_due, 0, kGpuUtilSamplesEveryNs};
  }
  // `run`'s: clocks and reasons at every tick of its loop, the power line once a second and at the
  // window's marks and the command's end, GPU-Util samples every 5 s (NVML keeps them meanwhile), the
  // rest every second.
  static NvmlCadence run(recording::TimeNs tick_ns) {
    return {tick_ns, recording::kNsPerSecond, PowerReads::every_power_ns, kRunPowerNs,
            kGpuUtilSamplesEveryNs};
  }
};

// What a reader does with one sampler child's messages (docs/live-collection.md#who-reads-it): the
// session turns them into a GpuBatch's records; `run`'s recording sink writes them into a recording
// in its own words.
class SamplerSink {
 public:
  virtual ~SamplerSink() = default;
  virtual void message(const collect::SamplerMessage& message, recording::TimeNs now) = 0;
  // The child ended and was reaped; every message it wrote came before.
  virtual void ended(const collect::SamplerExit& exit, recording::TimeNs now) = 0;
  // The supervisor's own notes (a child that cannot be started, a restart).
  virtual void note(recording::Note note) = 0;
  // A child was started for this sink: whatever the reader keeps per child starts again (run: the
  // counters are not on yet, and a duty period's child may write its own counters-off event).
  virtual void started(recording::TimeNs /*now*/) {}
};

// The one owner of a GPU's sampler child, for every reader: it starts the child, drains its
// messages into a sink, asks it to stop, reaps it, and starts it again as the RestartRule says. Its
// own sink turns the messages into records (pump with a GpuBatch); a reader with its own wording
// passes a SamplerSink.
class SamplerSupervisor {
 public:
  // `table` may be null (no unit table for this GPU: the counters are never started).
  SamplerSupervisor(collect::SamplerConfig config, const collect::UnitTable* table, std::string expected_uuid,
                    SupervisorTiming timing = {}, RestartRule restart = RestartRule::after_backoff);
  ~SamplerSupervisor();
  SamplerSupervisor(const SamplerSupervisor&) = delete;
  SamplerSupervisor& operator=(const SamplerSupervisor&) = delete;

  // The agent wants the counters on (start a child now, or after a running one has stopped or the
  // backoff has passed) or off (ask the child to stop).
  void set_wanted(bool on, recording::TimeNs now, GpuBatch& out);
  // Reads the child's messages, notices its end, restarts it when due.
  void pump(recording::TimeNs now, GpuBatch& out);
  // Stops the child and waits (up to the stop timeout) for it to end.
  void stop_and_wait(recording::TimeNs now, GpuBatch& out);
  // Children started from now on sample every `interval_ms`; a running one is asked to stop, and
  // pump() starts the next at once while the counters are wanted.
  void set_interval(double interval_ms);
  double interval_ms() const { return config_.interval_ms; }

  // The same for a reader with its own sink. With RestartRule::none a child that cannot be run
  // throws DeviceError instead of waiting for a retry.
  void set_wanted(bool on, recording::TimeNs now, SamplerSink& sink);
  void pump(recording::TimeNs now, SamplerSink& sink);
  // Waits (up to the end wait) for a child that was asked to stop or closed its output, hands its
  // last messages to `sink` and reaps it. Nothing when no child runs.
  void finish(recording::TimeNs now, SamplerSink& sink);
  // Ends the child, its messages unread (what it measures is no longer wanted): asks it to stop,
  // waits up to the stop timeout (then kills it) and reaps it.
  collect::SamplerExit discard();
  // Asks the child to stop and wants none (no sink: nothing is said).
  void request_stop();
  // Whether a child it started said its counters came on ("on"), since it was built or the last
  // discard() (whose child's messages go unread): the duty step cycles only counters that came on.
  bool said_on() const { return said_on_; }
  // Kills a child that did not stop when asked; the next pump reaps it.
  void kill();
  // The next child reads `table` with `metrics` (empty: the table's own).
  void use_table(const collect::UnitTable* table, std::vector<std::string> metrics = {});

  int fd() const;  // the child's output, -1 when none
  bool wanted() const { return wanted_; }
  bool running() const { return child_ != nullptr; }
  long starts() const { return starts_; }
  long restarts() const { return restarts_; }  // starts after a failure
  // When the last child failed because another profiler held the counters; 0 when none did.
  recording::TimeNs busy_at_ns() const { return busy_at_ns_; }
  recording::TimeNs retry_at_ns() const { return retry_at_ns_; }

 private:
  class BatchSink;  // the session's: messages into a GpuBatch's records
  void start(recording::TimeNs now, SamplerSink& sink);
  void handle(const collect::SamplerMessage& message, recording::TimeNs now, GpuBatch& out);
  void reap(recording::TimeNs now, SamplerSink& sink);
  void deliver(recording::TimeNs now, SamplerSink& sink);  // messages_ into sink
  void after_exit(const collect::SamplerExit& exit, recording::TimeNs now, GpuBatch& out);

  collect::SamplerConfig config_;
  const collect::UnitTable* table_;
  std::string expected_uuid_;
  SupervisorTiming timing_;
  RestartRule restart_;
  std::unique_ptr<collect::SamplerProcess> child_;
  std::unique_ptr<collect::ColumnEvaluator> evaluator_;
  collect::ColumnValues values_;
  std::size_t metric_count_ = 0;  // values each sample carries, from the sampler's metrics
  ChipSampleCheck check_;         // docs/live-collection.md#sample-checks
  std::vector<collect::SamplerMessage> messages_;
  bool wanted_ = false;
  bool stopping_ = false;  // we asked the current child to stop
  bool saw_off_ = false;   // the current child said "off"
  bool saw_error_ = false;
  std::string last_error_;
  int failures_ = 0;  // consecutive failed children
  recording::TimeNs retry_at_ns_ = 0;
  long starts_ = 0;
  long restarts_ = 0;
  recording::TimeNs busy_at_ns_ = 0;
  bool said_on_ = false;
};

// Where the live session's chip samples come from (docs/agent.md#beside-other-profilers).
struct ChipSourcePolicy {
  collect::ChipSourceSetting source = collect::ChipSourceSetting::pm;
  std::filesystem::path proc_root = "/proc";  // where ProfilerWatch looks (tests give a fake tree)
  recording::TimeNs scan_ns = 200 * recording::kNsPerMs;  // how often it looks
  // Back to PM sampling once no other profiler has been seen for this long, and no sampler has
  // found the counters held for kBusyHoldNs.
  recording::TimeNs return_after_ns = 5 * recording::kNsPerSecond;
  static constexpr recording::TimeNs kBusyHoldNs = 60 * recording::kNsPerSecond;
};

// What differs between the session's readers (docs/live-collection.md#policies), passed in once: the
// agent and top take the defaults, run its own (NvmlCadence::run, no restart, GPM for the whole run,
// its --duty).
struct ReaderPolicy {
  RestartRule restart = RestartRule::after_backoff;
  collect::GpmSwitch gpm_switch = collect::GpmSwitch::follow_profilers;
  // The reader's NVML cadence for tick_reads() (run); nullopt: the session's own, once a poll
  // (set_cadence adjusts it).
  std::optional<NvmlCadence> cadence;
  // The duty schedule duty_step() follows (docs/live-collection.md#duty-phases); always on by default.
  collect::DutyCycle duty;
  // How often the sampler child decodes its buffer; nullopt: every poll.
  std::optional<double> drain_ms;
};

struct SessionGpu {
  std::unique_ptr<GpuTelemetry> telemetry;
  const collect::UnitTable* table = nullptr;  // chosen by compute capability; null: none fits
  collect::SamplerConfig sampler;             // executable empty: no sampler
  // Where the sampler child's messages go (run's sinks: docs/live-collection.md#what-run-is-now); null: the
  // session's own, into the GpuBatch that collect() hands out.
  SamplerSink* sink = nullptr;
};

// One tick's NVML reads at the reader's cadence (tick_reads), one set per GPU.
struct TickReads {
  bool slow = false;  // a slow read: engines, processes and holders, GPU-Util samples when due
  std::vector<NvmlReadSet> gpus;
};

class LiveSession final : public Feed {
 public:
  LiveSession(std::vector<SessionGpu> gpus, double interval_ms, double poll_ms, SupervisorTiming timing = {},
              std::function<void(const std::string&)> log = {}, ChipSourcePolicy policy = {},
              ReaderPolicy reader = {});
  ~LiveSession() override;

  std::string kind() const override { return "live"; }
  std::size_t gpu_count() const override { return gpus_.size(); }
  const recording::RecordingMeta& meta(std::size_t gpu) const override { return gpus_.at(gpu).meta; }
  recording::TimeNs now_ns(const core::ClockReadings& clocks) override { return clocks.realtime_ns; }
  void collect(recording::TimeNs now, std::vector<GpuBatch>& out) override;
  void set_counters(std::size_t gpu, bool on, recording::TimeNs now) override;
  bool set_interval(std::size_t gpu, double interval_ms, recording::TimeNs now) override;
  std::vector<int> wait_fds() const override;
  recording::TimeNs next_due_ns() const override;
  void shutdown(recording::TimeNs now, std::vector<GpuBatch>& out) override;
  long sampler_restarts(std::size_t gpu) const override;
  bool counters_on(std::size_t gpu) const override;
  void power_due(std::size_t gpu) override;
  // Which reads make which NVML calls (docs/live-collection.md#policies): by default
  // NvmlCadence::once_a_poll (top's); the agent's reads the power line and GPU-Util samples when
  // due. Its poll is the session's: only the power, GPU-Util and process-id rules are taken from
  // `cadence`.
  void set_cadence(const NvmlCadence& cadence) {
    cadence_.power = cadence.power;
    cadence_.power_ns = cadence.power_ns;
    cadence_.util_ns = cadence.util_ns;
    cadence_.process_ids = cadence.process_ids;
    for (Gpu& g : gpus_) g.telemetry->want_process_ids(cadence.process_ids);
  }
  const NvmlCadence& cadence() const { return cadence_; }
  // Where GPU `gpu`'s chip samples come from now: pm or gpm (never automatic); nullopt while
  // neither runs. Whoever prints it words it (collect::chip_source_name, top's title).
  std::optional<collect::ChipSource> chip_source(std::size_t gpu) const;
  // GPU `gpu`'s NVML side, for a reader of the same GPUs that reads NVML beside the session
  // (attribution's watcher, through GpuTelemetry::nvml_device: docs/live-collection.md#who-reads-it).
  const GpuTelemetry& telemetry(std::size_t gpu) const { return *gpus_.at(gpu).telemetry; }

  // ---- A reader with its own sinks and wait (run: docs/live-collection.md#what-run-is-now) ----
  // Its sampler child's messages go to `sink` from now on (null: the session's own).
  void set_sink(std::size_t gpu, SamplerSink* sink) { gpus_.at(gpu).sink = sink; }
  // The next child reads `table` with `metrics` (SamplerSupervisor::use_table).
  void use_table(std::size_t gpu, const collect::UnitTable* table, std::vector<std::string> metrics);
  // The child's messages into its sink; a child whose output closed is reaped.
  void pump(std::size_t gpu, recording::TimeNs now);
  // Waits for a child that was asked to stop or closed its output, its last messages into its sink.
  void finish(std::size_t gpu, recording::TimeNs now);
  // Ends the child, its messages unread (SamplerSupervisor::discard); an empty exit where none runs.
  collect::SamplerExit discard(std::size_t gpu);
  void kill(std::size_t gpu);  // a child that did not stop when asked; the next pump reaps it
  bool sampler_running(std::size_t gpu) const;
  int sampler_fd(std::size_t gpu) const;  // -1 when no child runs
  // GpmSwitch::whole_run, at the start (docs/live-collection.md#the-gpm-switch): GPM for the whole run
  // where PM sampling did not start (`pm_running` false) and the setting allows it. nullopt: not
  // wanted; true: GPM stands in from `now` (its first pair taken then); false: GPM cannot be read
  // (gpm(gpu).error() says why).
  std::optional<bool> gpm_for_whole_run(std::size_t gpu, bool pm_running, recording::TimeNs now);
  collect::GpmChipSource& gpm(std::size_t gpu) { return gpus_.at(gpu).gpm; }
  // The duty step (docs/live-collection.md#duty-phases): at `now`, with the reader's schedule counted
  // from `start_ns`, a GPU whose counters came on gets a new sampler child at the start of each on
  // part and its child asked to stop at the start of each off part, once a period each. Nothing when
  // the schedule does not cycle.
  void duty_step(recording::TimeNs now, recording::TimeNs start_ns);
  // What each GPU's NVML read at a tick at `now` takes, at the reader's cadence (run's,
  // docs/live-collection.md#policies): clocks and reasons, the power line when due, the rest and
  // who holds the GPU (with the measured command's pid, `holders_of`) at a slow read, GPU-Util
  // samples when due; after the command's end (`ended`) GPU-Util samples alone.
  TickReads tick_reads(recording::TimeNs now, bool ended, std::int64_t holders_of);
  // Whether a read at `now` takes the power line, `asked` where an energy figure needs one there (a
  // window mark, the command's end).
  bool power_due(std::size_t gpu, recording::TimeNs now, bool asked) const;
  // One read of GPU `gpu`'s NVML as `what` says, into `out`.
  void read(std::size_t gpu, recording::TimeNs now, const NvmlReadSet& what, GpuBatch& out);
  // GPU-Util samples from 1 s before `start_ns` on (GpuTelemetry::restart_util).
  void restart_util(std::size_t gpu, recording::TimeNs start_ns);
  // Whether GPU `gpu` has a GPU-Util sample at or after `end_ns`, or polls GPU-Util (a read is a sample).
  bool util_reached(std::size_t gpu, recording::TimeNs end_ns) const;

 private:
  struct Gpu {
    std::unique_ptr<GpuTelemetry> telemetry;
    std::unique_ptr<SamplerSupervisor> supervisor;  // null: no counters for this GPU
    SamplerSink* sink = nullptr;                    // the reader's; null: the session's own
    recording::RecordingMeta meta;                  // the columns of the chip source in use
    recording::RecordingMeta pm_meta;               // PM sampling's (the unit table's) columns
    GpuBatch pending;                         // produced by set_counters, handed out at the next collect
    recording::TimeNs next_read_ns = 0;       // NVML is read once per poll, however often collect() runs
    bool wanted = false;                      // the agent wants chip samples
    bool power_asked = true;                  // an energy figure needs the power line at the next poll
    bool energy_failed = false;               // the energy counter's last read gave no number
    recording::TimeNs last_power_ns = 0;      // when the power line was last read; 0: never
    recording::TimeNs last_util_read_ns = 0;  // when GPU-Util samples were last read; 0: never
    bool on_gpm = false;                      // chip samples come from GPM
    bool gpm_failed = false;                  // GPM could not be opened: PM sampling or nothing
    GpmChipSource gpm;  // open while chip samples come from GPM (docs/live-collection.md#the-gpm-switch)
    bool gpm_sampling = false;  // GPM samples are being recorded (the agent wants them)
    recording::TimeNs next_gpm_ns = 0;
    // The duty step: the period whose child was started last and the one whose stop was asked last.
    long duty_started_period = 0;
    long duty_stopped_period = -1;
  };
  // The child's wanted state through the GPU's sink, or into `out` where it has none.
  void want_sampler(Gpu& g, bool on, recording::TimeNs now, GpuBatch& out);
  // The child's messages into the GPU's sink, or into `out` where it has none.
  void pump_sampler(Gpu& g, recording::TimeNs now, GpuBatch& out);
  bool want_gpm(const Gpu& g, recording::TimeNs now) const;
  void to_gpm(Gpu& g, recording::TimeNs now, GpuBatch& out, const std::string& why);
  void to_pm(Gpu& g, recording::TimeNs now, GpuBatch& out, const std::string& why);
  void sample_gpm(Gpu& g, recording::TimeNs now, GpuBatch& out);
  void set_gpm_sampling(Gpu& g, bool on, recording::TimeNs now, GpuBatch& out);
  std::vector<Gpu> gpus_;
  NvmlCadence cadence_;  // once a poll; the power line as set_cadence says
  double gpm_interval_ms_ = collect::kGpmMinIntervalMs;
  std::function<void(const std::string&)> log_;
  ChipSourcePolicy policy_;
  ReaderPolicy reader_;
  recording::TimeNs last_slow_ns_ = 0;  // tick_reads: the last slow read; 0: none yet
  ProfilerWatch watch_;
  std::vector<SeenProfiler> seen_;
  recording::TimeNs next_scan_ns_ = 0;
  recording::TimeNs last_seen_ns_ = 0;  // when another profiler was last seen; 0: never
};

struct LiveSessionOptions {
  double interval_ms = recording::kDefaultIntervalMs;
  double poll_ms = 1000;
  std::string sampler_executable;  // empty: diescope-cupti beside diescope
  std::vector<std::string> sampler_extra_args;
  std::vector<int> gpus;  // empty: every GPU NVML lists
  SupervisorTiming timing;
  ChipSourcePolicy chip;
  std::function<void(const std::string&)> log;
  // The power rule of the session's NvmlCadence: every poll (top) or when due (the agent).
  PowerReads power_reads = PowerReads::every_read;
};

// Loads NVML and builds the live session for this host's GPUs. Throws DeviceError (no driver, no
// GPU, an index that does not exist).
std::unique_ptr<LiveSession> open_live_session(const LiveSessionOptions& options);

}  // namespace diescope::collect
