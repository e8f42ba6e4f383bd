#include "diescope/collect/live_collection.hpp"

#include <algorithm>
#include <csignal>
#include <chrono>
#include <cmath>
#include <limits>
#include <filesystem>
#include <thread>
#include <unistd.h>

#include <fmt/format.h>

#include "diescope/collect/host_probes.hpp"
#include "diescope/collect/nvml.hpp"
#include "diescope/core/clock.hpp"
#include "diescope/core/error.hpp"
#include "diescope/core/version.hpp"

namespace diescope::collect {

namespace m = collect::sampler_msg;

namespace {

std::string seconds_text(recording::TimeNs ns) {
  return fmt::format("{:.1f} s", static_cast<double>(ns) * 1e-9);
}

}  // namespace

// docs/live-collection.md#policies: a read that an energy figure asks for, or one after the counter
// failed (the draw then stands in and needs every read), always reads the power line; otherwise top
// reads it at every read, the agent while the counters are wanted, and run once every power_ns (at
// the read nearest to it: a read half a fast read early counts).
bool NvmlCadence::reads_power(const PowerReadState& state) const {
  if (state.asked || state.last_failed) return true;
  switch (power) {
    case PowerReads::every_read:
      return true;
    case PowerReads::when_due:
      return state.counters_wanted;
    case PowerReads::every_power_ns:
      return state.since_last_ns >= power_ns - fast_ns / 2;
  }
  return true;
}

// docs/agent.md#nvml-reads: NVML keeps GPU-Util samples in its buffer, so a read where a figure is
// made from them (a window, a period's end) brings every sample since the previous read, whenever that
// was; polled GPU-Util has no buffer and is read at every slow read.
bool NvmlCadence::reads_util(const PowerReadState& state, recording::TimeNs since_util_ns,
                             bool util_polling) const {
  if (util_ns <= 0 || util_polling || state.asked || state.counters_wanted) return true;
  return since_util_ns >= util_ns - slow_ns / 2;
}

std::unique_ptr<collect::GpmSampler> GpuTelemetry::open_gpm(recording::TimeNs /*now*/) {
  throw core::DeviceError("this GPU's telemetry has no NVML GPM", "use PM sampling (--source pm)");
}

// ---- SamplerSupervisor ----

// The session's sink: the child's messages become a GpuBatch's records, and its end a note and a
// backoff.
class SamplerSupervisor::BatchSink final : public SamplerSink {
 public:
  BatchSink(SamplerSupervisor& supervisor, GpuBatch& out) : supervisor_(supervisor), out_(out) {}
  void message(const collect::SamplerMessage& message, recording::TimeNs now) override {
    supervisor_.handle(message, now, out_);
  }
  void ended(const collect::SamplerExit& exit, recording::TimeNs now) override {
    supervisor_.after_exit(exit, now, out_);
  }
  void note(recording::Note note) override { out_.notes.push_back(std::move(note)); }

 private:
  SamplerSupervisor& supervisor_;
  GpuBatch& out_;
};

SamplerSupervisor::SamplerSupervisor(collect::SamplerConfig config, const collect::UnitTable* table,
                                     std::string expected_uuid, SupervisorTiming timing, RestartRule restart)
    : config_(std::move(config)),
      table_(table),
      expected_uuid_(std::move(expected_uuid)),
      timing_(timing),
      restart_(restart) {
  if (table_ && config_.metrics.empty()) config_.metrics = collect::table_metrics(*table_);
}

SamplerSupervisor::~SamplerSupervisor() {
  if (child_) {
    child_->request_stop();
    child_->wait(std::chrono::milliseconds(timing_.stop_timeout_ns / recording::kNsPerMs));
  }
}

int SamplerSupervisor::fd() const {
  return child_ && !child_->output_closed() ? child_->output_fd() : -1;
}

void SamplerSupervisor::set_wanted(bool on, recording::TimeNs now, GpuBatch& out) {
  BatchSink sink(*this, out);
  set_wanted(on, now, sink);
}

void SamplerSupervisor::set_wanted(bool on, recording::TimeNs now, SamplerSink& sink) {
  if (!on) {
    request_stop();
    return;
  }
  wanted_ = true;
  if (!child_ && now >= retry_at_ns_) start(now, sink);
}

// The one place a sampler child is built (docs/live-collection.md#what-it-owns).
void SamplerSupervisor::start(recording::TimeNs now, SamplerSink& sink) {
  if (!table_ || config_.executable.empty()) return;
  const bool after_failure = failures_ > 0;
  try {
    child_ = std::make_unique<collect::SamplerProcess>(config_);
  } catch (const core::Error& e) {
    if (restart_ == RestartRule::none) throw;  // no retry: the reader says so now
    ++failures_;
    const recording::TimeNs backoff =
        std::min(timing_.backoff_max_ns, timing_.backoff_initial_ns << std::min(failures_ - 1, 20));
    retry_at_ns_ = now + backoff;
    sink.note(recording::Note{
        now, "sampler",
        "cannot start the counter sampler: " + e.cause() + "; trying again in " + seconds_text(backoff)});
    return;
  }
  ++starts_;
  sink.started(now);
  if (after_failure) {
    ++restarts_;
    sink.note(recording::Note{now, "sampler",
                              "restarted the counter sampler (restart " + std::to_string(restarts_) +
                                  ", after " + std::to_string(failures_) + " failure(s))"});
  }
  stopping_ = false;
  saw_off_ = false;
  saw_error_ = false;
  evaluator_.reset();
}

void SamplerSupervisor::handle(const collect::SamplerMessage& message, recording::TimeNs now, GpuBatch& out) {
  if (const auto* s = std::get_if<m::Sample>(&message)) {
    if (!evaluator_) return;
    std::vector<double> sample_values = s->values;
    if (const auto refused = check_.admit(sample_values, s->start_ns, metric_count_)) {
      out.notes.push_back(recording::Note{now, refused->topic, refused->text});
      return;
    }
    evaluator_->evaluate(sample_values, values_);
    recording::OwnedChipSample o;
    o.start_ns = s->start_ns;
    o.end_ns = std::max(s->end_ns, s->start_ns);
    o.units = values_.units;
    o.diagnostics = values_.diagnostics;
    o.counts = values_.counts;
    out.list<recording::ChipSample>().push_back(std::move(o));
  } else if (const auto* on = std::get_if<m::On>(&message)) {
    out.counters.push_back(recording::CountersEvent{on->ts_ns, true, ""});
  } else if (const auto* off = std::get_if<m::Off>(&message)) {
    saw_off_ = true;
    // A stop the agent asked for is a window's ordinary end, with no reason; any other says why.
    std::string reason = off->reason;
    if (reason.empty() && !stopping_) reason = "the sampler stopped";
    out.counters.push_back(recording::CountersEvent{off->ts_ns, false, std::move(reason)});
  } else if (const auto* metrics = std::get_if<m::Metrics>(&message)) {
    try {
      evaluator_ = std::make_unique<collect::ColumnEvaluator>(*table_, metrics->names);
      metric_count_ = metrics->names.size();
    } catch (const core::Error& e) {
      out.notes.push_back(
          recording::Note{now, "sampler", "the sampler's metrics do not fit the unit table: " + e.cause()});
    }
  } else if (const auto* device = std::get_if<m::Device>(&message)) {
    if (!expected_uuid_.empty() && device->uuid != expected_uuid_) {
      out.notes.push_back(recording::Note{
          now, "sampler",
          "the sampler's device " + std::to_string(device->index) + " is " + device->uuid + ", not NVML's " +
              expected_uuid_ + " (CUDA and NVML order GPUs differently; set CUDA_DEVICE_ORDER=PCI_BUS_ID)"});
    }
  } else if (const auto* gap = std::get_if<m::Gap>(&message)) {
    out.notes.push_back(recording::Note{
        gap->from_ns, "sampler",
        "samples lost: nothing covers " + seconds_text(gap->to_ns - gap->from_ns) + " of time"});
  } else if (const auto* overflow = std::get_if<m::Overflow>(&message)) {
    out.notes.push_back(
        recording::Note{overflow->ts_ns, "sampler", "the counter buffer overflowed: " + overflow->text});
  } else if (const auto* note = std::get_if<m::Note>(&message)) {
    if (note->topic != "clock")
      out.notes.push_back(recording::Note{now, "sampler " + note->topic, note->text});
  } else if (const auto* error = std::get_if<m::Error>(&message)) {
    saw_error_ = true;
    if (error->kind == m::ErrorKind::busy) busy_at_ns_ = now;
    const collect::ErrorText text = collect::describe_error(*error, config_.device);
    last_error_ = text.cause + " (fix: " + text.fix + ")";
    out.notes.push_back(recording::Note{now, "sampler", last_error_});
  }
}

// Hands the messages just read to `sink`, noting whether the child said its counters came on.
void SamplerSupervisor::deliver(recording::TimeNs now, SamplerSink& sink) {
  for (const auto& message : messages_) {
    if (std::holds_alternative<m::On>(message)) said_on_ = true;
    sink.message(message, now);
  }
}

void SamplerSupervisor::reap(recording::TimeNs now, SamplerSink& sink) {
  const collect::SamplerExit exit =
      child_->wait(std::chrono::milliseconds(timing_.end_wait_ns / recording::kNsPerMs));
  // Messages read while waiting.
  messages_.clear();
  child_->pump(messages_);
  deliver(now, sink);
  child_.reset();
  sink.ended(exit, now);
  stopping_ = false;
}

void SamplerSupervisor::after_exit(const collect::SamplerExit& exit, recording::TimeNs now, GpuBatch& out) {
  const bool asked = stopping_;
  const bool clean = exit.clean() && !saw_error_;
  evaluator_.reset();
  if (clean || (asked && !saw_error_ && exit.exited && exit.exit_code == 0)) {
    failures_ = 0;
    return;
  }
  // It failed: a crash of NVIDIA's decoder, an error, or a child that ended on its own.
  ++failures_;
  const recording::TimeNs backoff =
      std::min(timing_.backoff_max_ns, timing_.backoff_initial_ns << std::min(failures_ - 1, 20));
  retry_at_ns_ = now + backoff;
  std::string what = "the counter sampler " + exit.describe();
  if (!exit.stderr_tail.empty()) {
    std::string tail = exit.stderr_tail;
    std::replace(tail.begin(), tail.end(), '\n', ' ');
    what += " (stderr: " + tail.substr(tail.size() > 300 ? tail.size() - 300 : 0) + ")";
  }
  if (!saw_off_) out.counters.push_back(recording::CountersEvent{now, false, what});
  const bool again = wanted_ && restart_ == RestartRule::after_backoff;
  out.notes.push_back(recording::Note{now, "sampler",
                                      what + (again ? "; restarting it in " + seconds_text(backoff)
                                                    : "; it will be started again at the next window")});
}

void SamplerSupervisor::pump(recording::TimeNs now, GpuBatch& out) {
  BatchSink sink(*this, out);
  pump(now, sink);
}

void SamplerSupervisor::pump(recording::TimeNs now, SamplerSink& sink) {
  if (child_) {
    messages_.clear();
    const bool open = child_->pump(messages_);  // its stderr too
    deliver(now, sink);
    if (!open) reap(now, sink);
  }
  if (child_ && !wanted_ && !stopping_) {
    child_->request_stop();
    stopping_ = true;
  }
  // The restart rule (docs/live-collection.md#policies): only the session starts a child again.
  if (!child_ && wanted_ && restart_ == RestartRule::after_backoff && now >= retry_at_ns_) start(now, sink);
}

void SamplerSupervisor::finish(recording::TimeNs now, SamplerSink& sink) {
  if (child_) reap(now, sink);
}

collect::SamplerExit SamplerSupervisor::discard() {
  wanted_ = false;
  said_on_ = false;  // its messages go unread
  if (!child_) return {};
  child_->request_stop();
  collect::SamplerExit exit =
      child_->wait(std::chrono::milliseconds(timing_.stop_timeout_ns / recording::kNsPerMs));
  child_.reset();
  stopping_ = false;
  return exit;
}

void SamplerSupervisor::kill() {
  if (child_) child_->send_signal(SIGKILL);
}

void SamplerSupervisor::request_stop() {
  wanted_ = false;
  if (child_ && !stopping_) {
    child_->request_stop();
    stopping_ = true;
  }
}

void SamplerSupervisor::use_table(const collect::UnitTable* table, std::vector<std::string> metrics) {
  table_ = table;
  if (metrics.empty() && table) metrics = collect::table_metrics(*table);
  config_.metrics = std::move(metrics);
}

void SamplerSupervisor::set_interval(double interval_ms) {
  if (config_.interval_ms == interval_ms) return;
  config_.interval_ms = interval_ms;
  // A stop asked for is a clean end: no backoff, and pump() starts the next child at the new interval.
  if (child_ && !stopping_) {
    child_->request_stop();
    stopping_ = true;
  }
}

void SamplerSupervisor::stop_and_wait(recording::TimeNs now, GpuBatch& out) {
  wanted_ = false;
  if (!child_) return;
  if (!stopping_) {
    child_->request_stop();
    stopping_ = true;
  }
  BatchSink sink(*this, out);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(timing_.stop_timeout_ns);
  while (child_ && std::chrono::steady_clock::now() < deadline) {
    messages_.clear();
    const bool open = child_->pump_for(messages_, std::chrono::milliseconds(100));
    deliver(now, sink);  // the batch sink hands each message to handle()
    if (!open) reap(core::realtime_ns(), sink);
  }
  if (child_) reap(core::realtime_ns(), sink);  // wait() kills it past the timeout
}

// ---- LiveSession ----

LiveSession::LiveSession(std::vector<SessionGpu> gpus, double interval_ms, double poll_ms,
                         SupervisorTiming timing, std::function<void(const std::string&)> log,
                         ChipSourcePolicy policy, ReaderPolicy reader)
    : cadence_(reader.cadence ? *reader.cadence
                              : NvmlCadence::once_a_poll(static_cast<recording::TimeNs>(poll_ms * 1e6))),
      gpm_interval_ms_(GpmChipSource::interval_for(interval_ms)),
      log_(std::move(log)),
      policy_(std::move(policy)),
      reader_(reader),
      watch_(policy_.proc_root) {
  for (SessionGpu& in : gpus) {
    Gpu g;
    g.meta.tool_version = core::kToolVersion;
    // Its power records hold the draw and the energy counter (docs/energy.md#what-is-recorded).
    g.meta.format_version = core::kRecordingFormatVersion;
    g.meta.method = core::kMethodVersion;
    g.meta.gpu = in.telemetry->identity();
    g.meta.engines = in.telemetry->engine_columns();
    g.meta.interval_ms = interval_ms;
    g.meta.drain_ms = poll_ms;
    g.meta.run_type = "sustained";
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) == 0) g.meta.host = host;
    if (g.meta.gpu.chip.empty())
      g.meta.gpu.chip = collect::chip_for_compute_capability(g.meta.gpu.compute_capability);
    if (in.table) collect::apply_unit_table(*in.table, g.meta);
    if (in.table && !in.sampler.executable.empty()) {
      in.sampler.interval_ms = interval_ms;
      in.sampler.drain_ms = reader_.drain_ms.value_or(poll_ms);
      g.supervisor =
          std::make_unique<SamplerSupervisor>(in.sampler, in.table, g.meta.gpu.uuid, timing, reader_.restart);
    } else if (log_) {
      log_("GPU " + std::to_string(g.meta.gpu.index) + ": no chip counters (" +
           (in.table ? std::string("no sampler executable") : "no unit table for its compute capability") +
           "); records carry GPU-Util and clocks only");
    }
    g.telemetry = std::move(in.telemetry);
    g.sink = in.sink;
    g.pm_meta = g.meta;
    gpus_.push_back(std::move(g));
  }
  // The first records' columns: GPM from the start when it is asked for or another profiler runs. A
  // whole run's GPM is its reader's call at its start (gpm_for_whole_run).
  if (reader_.gpm_switch == collect::GpmSwitch::whole_run) return;
  const recording::TimeNs now = core::realtime_ns();
  if (policy_.source == collect::ChipSourceSetting::automatic) {
    seen_ = watch_.scan();
    if (!seen_.empty()) last_seen_ns_ = now;
    next_scan_ns_ = now + policy_.scan_ns;
  }
  for (Gpu& g : gpus_) {
    if (!want_gpm(g, now)) continue;
    GpuBatch ignored;  // no column change to report before the first record
    to_gpm(g, now, ignored,
           policy_.source == collect::ChipSourceSetting::gpm
               ? "--source gpm"
               : "another profiler runs: " + profilers_text(seen_));
    g.pending.notes.insert(g.pending.notes.end(), ignored.notes.begin(), ignored.notes.end());
  }
}

bool LiveSession::want_gpm(const Gpu& g, recording::TimeNs now) const {
  // A whole run's GPM is decided once, at its start (gpm_for_whole_run).
  if (g.gpm_failed || reader_.gpm_switch == collect::GpmSwitch::whole_run) return false;
  GpmSwitchState state;
  state.pm_possible = g.supervisor != nullptr;
  state.pm_running = g.supervisor && g.supervisor->running();
  state.profiler_seen = !seen_.empty();
  state.held_lately = g.supervisor && g.supervisor->busy_at_ns() != 0 &&
                      now - g.supervisor->busy_at_ns() < ChipSourcePolicy::kBusyHoldNs;
  state.on_gpm = g.on_gpm;
  state.seen_recently = last_seen_ns_ != 0 && now - last_seen_ns_ < policy_.return_after_ns;
  return gpm_wanted(policy_.source, GpmSwitch::follow_profilers, state);
}

void LiveSession::to_gpm(Gpu& g, recording::TimeNs now, GpuBatch& out, const std::string& why) {
  if (!g.gpm.open(*g.telemetry, g.supervisor.get(), now)) {
    g.gpm_failed = true;
    const std::string text = "NVML GPM cannot be read (" + g.gpm.error() + "); " +
                             (g.supervisor ? "chip samples stay with PM sampling" : "no chip samples");
    out.notes.push_back(recording::Note{now, "chip_source", text});
    if (log_) log_("GPU " + std::to_string(g.meta.gpu.index) + ": " + text);
    return;
  }
  g.on_gpm = true;
  g.meta = g.pm_meta;
  g.gpm.columns(g.meta, gpm_interval_ms_);
  const std::string text = fmt::format(
      "chip samples come from NVML GPM from now on ({}): the agent holds no performance counters, so it "
      "blocks no other profiler; GPM does not see L1, L2 or load/store",
      why);
  out.columns_changed_at = now;
  out.columns_change_why = text;
  if (log_) log_("GPU " + std::to_string(g.meta.gpu.index) + ": " + text);
  if (g.wanted) set_gpm_sampling(g, true, now, out);
}

void LiveSession::to_pm(Gpu& g, recording::TimeNs now, GpuBatch& out, const std::string& why) {
  set_gpm_sampling(g, false, now, out);
  g.on_gpm = false;
  g.meta = g.pm_meta;
  const std::string text = "chip samples come from PM sampling again (" + why + ")";
  out.columns_changed_at = now;
  out.columns_change_why = text;
  if (log_) log_("GPU " + std::to_string(g.meta.gpu.index) + ": " + text);
  g.gpm.close(g.supervisor.get(), g.wanted, now, out);
}

void LiveSession::set_gpm_sampling(Gpu& g, bool on, recording::TimeNs now, GpuBatch& out) {
  if (on == g.gpm_sampling || !g.gpm.is_open()) return;
  if (on) {
    out.counters.push_back(g.gpm.start(now, true));
    g.gpm_sampling = true;
    g.next_gpm_ns = now + static_cast<recording::TimeNs>(gpm_interval_ms_ * 1e6);
  } else {
    sample_gpm(g, now, out);  // the last sample ends now
    g.gpm_sampling = false;
    out.counters.push_back(recording::CountersEvent{now, false, ""});
  }
}

void LiveSession::sample_gpm(Gpu& g, recording::TimeNs now, GpuBatch& out) {
  if (!g.gpm.is_open() || !g.gpm_sampling) return;
  std::optional<collect::GpmSample> s = g.gpm.sampler().sample(now);
  g.next_gpm_ns = now + static_cast<recording::TimeNs>(gpm_interval_ms_ * 1e6);
  if (!s) {
    if (!g.gpm.sampler().last_error().empty())
      out.notes.push_back(
          recording::Note{now, "chip_source", "a GPM sample failed: " + g.gpm.sampler().last_error()});
    return;
  }
  out.list<recording::ChipSample>().push_back(recording::OwnedChipSample{
      s->start_ns, s->end_ns, s->columns.units, s->columns.diagnostics, s->columns.counts});
}

std::optional<collect::ChipSource> LiveSession::chip_source(std::size_t gpu) const {
  const Gpu& g = gpus_.at(gpu);
  if (g.on_gpm) return collect::ChipSource::gpm;
  if (g.supervisor) return collect::ChipSource::pm;
  return std::nullopt;
}

LiveSession::~LiveSession() = default;

void LiveSession::collect(recording::TimeNs now, std::vector<GpuBatch>& out) {
  if (policy_.source == collect::ChipSourceSetting::automatic && now >= next_scan_ns_) {
    seen_ = watch_.scan();
    if (!seen_.empty()) last_seen_ns_ = now;
    next_scan_ns_ = now + policy_.scan_ns;
  }
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    Gpu& g = gpus_[i];
    GpuBatch& batch = out.at(i);
    auto& p = g.pending;
    batch.counters.insert(batch.counters.end(), p.counters.begin(), p.counters.end());
    batch.notes.insert(batch.notes.end(), p.notes.begin(), p.notes.end());
    if (p.columns_changed_at) {
      batch.columns_changed_at = p.columns_changed_at;
      batch.columns_change_why = p.columns_change_why;
    }
    p.clear();
    pump_sampler(g, now, batch);
    // The chip source (docs/agent.md#beside-other-profilers). PM sampling is stopped, and its last
    // samples handed out, before GPM starts; a switch ends this batch's chip samples.
    const bool gpm_wanted = want_gpm(g, now);
    if (!batch.columns_changed_at) {
      if (!g.on_gpm && gpm_wanted) {
        if (g.supervisor && g.supervisor->running()) {
          want_sampler(g, false, now, batch);  // stop it; switch once it has ended
        } else {
          to_gpm(g, now, batch,
                 !seen_.empty() ? "another profiler runs: " + profilers_text(seen_)
                 : policy_.source == collect::ChipSourceSetting::gpm
                     ? std::string("--source gpm")
                     : std::string("PM sampling found the counters held by another profiler"));
        }
      } else if (g.on_gpm && !gpm_wanted) {
        to_pm(g, now, batch,
              fmt::format("no other profiler seen for {:g} s",
                          static_cast<double>(policy_.return_after_ns) / 1e9));
      } else if (g.on_gpm && g.gpm_sampling && now >= g.next_gpm_ns) {
        sample_gpm(g, now, batch);
      }
    }
    // The agent also collects whenever a sampler child writes; NVML waits for its poll (a tenth of
    // a poll early is close enough, so a poll that wakes a little early is not skipped). The
    // session's cadence reads everything at once, the power line as its rule says
    // (docs/live-collection.md#policies).
    if (now >= g.next_read_ns - cadence_.slow_ns / 10) {
      PowerReadState state;
      state.counters_wanted = g.wanted;
      state.asked = g.power_asked;
      state.last_failed = g.energy_failed;
      if (g.last_power_ns != 0) state.since_last_ns = now - g.last_power_ns;
      const bool power = cadence_.reads_power(state);
      g.telemetry->want_power(power);
      const bool util =
          cadence_.reads_util(state,
                              g.last_util_read_ns != 0 ? now - g.last_util_read_ns
                                                       : std::numeric_limits<recording::TimeNs>::max(),
                              g.telemetry->util_polling());
      g.telemetry->want_util(util);
      if (util) g.last_util_read_ns = now;
      const std::size_t before = batch.list<recording::PowerLimitReading>().size();
      g.telemetry->read(now, batch);
      if (power) {
        g.power_asked = false;
        g.last_power_ns = now;
      }
      const auto& powers = batch.list<recording::PowerLimitReading>();
      if (powers.size() > before) g.energy_failed = !std::isfinite(powers.back().energy_mj);
      g.next_read_ns = now + cadence_.slow_ns;
    }
    for (const recording::Note& n : batch.notes)
      if (log_ && n.topic == "sampler") log_("GPU " + std::to_string(g.meta.gpu.index) + ": " + n.text);
  }
}

void LiveSession::power_due(std::size_t gpu) {
  gpus_.at(gpu).power_asked = true;
}

void LiveSession::set_counters(std::size_t gpu, bool on, recording::TimeNs now) {
  Gpu& g = gpus_.at(gpu);
  // The first poll after the counters go off reads the power line, so the window's end lies between
  // two reads of the energy counter (docs/agent.md#nvml-reads).
  if (g.wanted && !on) g.power_asked = true;
  g.wanted = on;
  if (g.on_gpm) {
    set_gpm_sampling(g, on, now, g.pending);
    return;
  }
  // While a switch to GPM waits for the sampler to stop, it stays stopped.
  if (g.supervisor && !(on && want_gpm(g, now))) want_sampler(g, on, now, g.pending);
}

void LiveSession::want_sampler(Gpu& g, bool on, recording::TimeNs now, GpuBatch& out) {
  if (g.sink)
    g.supervisor->set_wanted(on, now, *g.sink);
  else
    g.supervisor->set_wanted(on, now, out);
}

void LiveSession::use_table(std::size_t gpu, const collect::UnitTable* table,
                            std::vector<std::string> metrics) {
  Gpu& g = gpus_.at(gpu);
  if (g.supervisor) g.supervisor->use_table(table, std::move(metrics));
}

void LiveSession::pump_sampler(Gpu& g, recording::TimeNs now, GpuBatch& out) {
  if (!g.supervisor) return;
  if (g.sink)
    g.supervisor->pump(now, *g.sink);
  else
    g.supervisor->pump(now, out);
}

void LiveSession::pump(std::size_t gpu, recording::TimeNs now) {
  Gpu& g = gpus_.at(gpu);
  pump_sampler(g, now, g.pending);
}

void LiveSession::finish(std::size_t gpu, recording::TimeNs now) {
  Gpu& g = gpus_.at(gpu);
  if (g.supervisor && g.sink) g.supervisor->finish(now, *g.sink);
}

collect::SamplerExit LiveSession::discard(std::size_t gpu) {
  Gpu& g = gpus_.at(gpu);
  return g.supervisor ? g.supervisor->discard() : collect::SamplerExit{};
}

void LiveSession::kill(std::size_t gpu) {
  Gpu& g = gpus_.at(gpu);
  if (g.supervisor) g.supervisor->kill();
}

bool LiveSession::sampler_running(std::size_t gpu) const {
  const Gpu& g = gpus_.at(gpu);
  return g.supervisor && g.supervisor->running();
}

int LiveSession::sampler_fd(std::size_t gpu) const {
  const Gpu& g = gpus_.at(gpu);
  return g.supervisor ? g.supervisor->fd() : -1;
}

// docs/live-collection.md#the-gpm-switch: GpmSwitch::whole_run decides once, where PM sampling did not
// start; the reader words what happened.
std::optional<bool> LiveSession::gpm_for_whole_run(std::size_t gpu, bool pm_running, recording::TimeNs now) {
  Gpu& g = gpus_.at(gpu);
  collect::GpmSwitchState state;
  state.pm_possible = g.supervisor != nullptr;
  state.pm_running = pm_running;
  if (!collect::gpm_wanted(policy_.source, collect::GpmSwitch::whole_run, state)) return std::nullopt;
  if (!g.gpm.open(*g.telemetry, g.supervisor.get(), now)) {
    g.gpm_failed = true;
    return false;
  }
  g.on_gpm = true;
  g.meta = g.pm_meta;
  g.gpm.columns(g.meta, gpm_interval_ms_);
  return true;
}

// docs/live-collection.md#duty-phases: counters on for the first on_ms of every period_ms from
// `start_ns`, off for the rest: off is the sampler child stopped, which disables the counters
// (docs/method.md#measurement-cost), and on is a new child. Only counters that came on are cycled
// (a GPU on GPM, or whose sampler never sampled, is left as it is).
void LiveSession::duty_step(recording::TimeNs now, recording::TimeNs start_ns) {
  const collect::DutyCycle& duty = reader_.duty;
  if (!duty.cycles()) return;
  const recording::TimeNs since = std::max<recording::TimeNs>(0, now - start_ns);
  const long period = duty.period_at(since);
  const bool in_on_part = duty.phase_at(since) == collect::DutyPhase::on;
  for (Gpu& g : gpus_) {
    if (!g.supervisor || g.on_gpm || !g.supervisor->said_on()) continue;
    const bool running = g.supervisor->running();
    if (in_on_part && !running && g.duty_started_period < period) {
      g.duty_started_period = period;
      g.wanted = true;
      want_sampler(g, true, core::realtime_ns(), g.pending);
    } else if (!in_on_part && running && g.duty_stopped_period < period) {
      g.duty_stopped_period = period;
      g.wanted = false;
      g.supervisor->request_stop();
    }
  }
}

// docs/live-collection.md#policies: clocks and reasons at every tick; GPU-Util samples at the slow read
// its cadence says, at every tick once polled and after the end; the power line as its rule says;
// engines, processes and holders at every slow read; after the end, GPU-Util samples alone.
TickReads LiveSession::tick_reads(recording::TimeNs now, bool ended, std::int64_t holders_of) {
  TickReads reads;
  reads.slow = now - last_slow_ns_ >= cadence_.slow_ns;
  if (reads.slow) last_slow_ns_ = now;
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    Gpu& g = gpus_[i];
    const bool polling = g.telemetry->util_polling();
    const recording::TimeNs since_util =
        g.last_util_read_ns != 0 ? now - g.last_util_read_ns : std::numeric_limits<recording::TimeNs>::max();
    NvmlReadSet what;
    what.util =
        (reads.slow && cadence_.reads_util(PowerReadState{}, since_util, polling)) || ended || polling;
    if (what.util) g.last_util_read_ns = now;
    what.clocks = !ended;
    what.power = !ended && power_due(i, now, false);
    what.engines = reads.slow && !ended;
    what.processes = reads.slow && !ended;
    if (reads.slow && !ended) what.holders_of = holders_of;
    reads.gpus.push_back(what);
  }
  return reads;
}

bool LiveSession::power_due(std::size_t gpu, recording::TimeNs now, bool asked) const {
  const Gpu& g = gpus_.at(gpu);
  PowerReadState state;
  state.asked = asked;
  state.last_failed = g.energy_failed;
  if (g.last_power_ns != 0) state.since_last_ns = now - g.last_power_ns;
  return cadence_.reads_power(state) && now >= g.last_power_ns;
}

void LiveSession::read(std::size_t gpu, recording::TimeNs now, const NvmlReadSet& what, GpuBatch& out) {
  Gpu& g = gpus_.at(gpu);
  const std::size_t before = out.list<recording::PowerLimitReading>().size();
  g.telemetry->want(what);
  g.telemetry->read(now, out);
  const auto& powers = out.list<recording::PowerLimitReading>();
  for (std::size_t i = before; i < powers.size(); ++i) {
    g.energy_failed = !std::isfinite(powers[i].energy_mj);
    g.last_power_ns = powers[i].ts_ns;
  }
}

void LiveSession::restart_util(std::size_t gpu, recording::TimeNs start_ns) {
  gpus_.at(gpu).telemetry->restart_util(start_ns);
}

bool LiveSession::util_reached(std::size_t gpu, recording::TimeNs end_ns) const {
  const GpuTelemetry& t = *gpus_.at(gpu).telemetry;
  return t.util_polling() || t.last_util_ns() >= end_ns;
}

bool LiveSession::set_interval(std::size_t gpu, double interval_ms, recording::TimeNs /*now*/) {
  Gpu& g = gpus_.at(gpu);
  // GPM keeps its own interval; PM sampling takes the new one when it runs again.
  if (!g.supervisor || g.on_gpm) return false;
  g.supervisor->set_interval(interval_ms);
  return true;
}

recording::TimeNs LiveSession::next_due_ns() const {
  // GPM at its own interval, not at the poll (docs/agent.md#beside-other-profilers).
  recording::TimeNs due = std::numeric_limits<recording::TimeNs>::max();
  for (const Gpu& g : gpus_) {
    if (g.on_gpm && g.gpm_sampling) due = std::min(due, g.next_gpm_ns);
    // The profiler scan is due on its own only while PM sampling holds the counters; while they are
    // off it runs at each poll (docs/agent.md#beside-other-profilers).
    if (policy_.source == collect::ChipSourceSetting::automatic && g.wanted && !g.on_gpm && g.supervisor)
      due = std::min(due, next_scan_ns_);
  }
  return due;
}

std::vector<int> LiveSession::wait_fds() const {
  std::vector<int> fds;
  for (const Gpu& g : gpus_)
    if (g.supervisor && g.supervisor->fd() >= 0) fds.push_back(g.supervisor->fd());
  return fds;
}

void LiveSession::shutdown(recording::TimeNs now, std::vector<GpuBatch>& out) {
  // Ask every child first, then wait: they stop in parallel.
  for (Gpu& g : gpus_) {
    g.wanted = false;
    set_gpm_sampling(g, false, now, g.pending);
    if (g.supervisor) g.supervisor->set_wanted(false, now, g.pending);
  }
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    Gpu& g = gpus_[i];
    GpuBatch& batch = out.at(i);
    batch.counters.insert(batch.counters.end(), g.pending.counters.begin(), g.pending.counters.end());
    batch.notes.insert(batch.notes.end(), g.pending.notes.begin(), g.pending.notes.end());
    g.pending.clear();
    if (g.supervisor) g.supervisor->stop_and_wait(now, batch);
  }
}

long LiveSession::sampler_restarts(std::size_t gpu) const {
  const Gpu& g = gpus_.at(gpu);
  return g.supervisor ? g.supervisor->restarts() : 0;
}

bool LiveSession::counters_on(std::size_t gpu) const {
  const Gpu& g = gpus_.at(gpu);
  return (g.supervisor && g.supervisor->running()) || g.gpm_sampling;
}

// ---- NVML telemetry and the factory ----

NvmlTelemetry::NvmlTelemetry(const collect::Nvml& nvml, int index, recording::TimeNs util_start)
    : device_(std::make_unique<collect::NvmlDevice>(nvml.device(index))) {
  identity_ = device_->identity();
  identity_.index = index;
  if (identity_.driver.empty()) identity_.driver = nvml.driver_version();
  engines_ = device_->engines();
  engine_columns_ = device_->engine_columns();
  restart_util(util_start);
}

NvmlTelemetry::NvmlTelemetry(std::shared_ptr<const collect::Nvml> nvml, int index,
                             recording::TimeNs util_start)
    : NvmlTelemetry(*nvml, index, util_start) {
  keep_ = std::move(nvml);
}

NvmlTelemetry::~NvmlTelemetry() = default;

void NvmlTelemetry::restart_util(recording::TimeNs util_start) {
  util_ = std::make_unique<collect::GpuUtilReader>(*device_, util_start);
  last_util_ns_ = 0;
}

bool NvmlTelemetry::util_polling() const {
  return util_->polling();
}

void NvmlTelemetry::read(recording::TimeNs now, GpuBatch& out) {
  const NvmlReadSet& what = wanted();
  if (what.util) {
    const bool was_polling = util_->polling();
    std::vector<recording::UtilSample> samples;
    util_->read(now, samples);
    auto& kept = out.list<recording::UtilSample>();
    for (const recording::UtilSample& sample : samples) {
      if (sample.ts_ns < last_util_ns_) continue;  // never out of order in a recording
      kept.push_back(sample);
      last_util_ns_ = sample.ts_ns;
    }
    if (!was_polling && util_->polling())
      out.notes.push_back(recording::Note{now, "gpu_util", util_->reason_text()});
  }
  if (what.clocks) {
    out.list<recording::ClockReading>().push_back(device_->clocks(now));
    out.list<recording::ThrottleReading>().push_back(device_->throttle_reasons(now));
  }
  // The energy counter costs 3.4 to 3.8 ms of CPU a read on the H200: the reader's cadence says
  // when the power line is read (docs/live-collection.md#policies).
  if (what.power) out.list<recording::PowerLimitReading>().push_back(device_->power_limit(now));
  if (what.engines && !engines_.empty()) {
    recording::OwnedEngineReading e;
    e.ts_ns = now;
    for (const auto& engine : engines_) e.values.push_back(device_->engine_utilization(engine).value);
    out.list<recording::EngineReading>().push_back(std::move(e));
  }
  if (what.processes) out.list<recording::ProcessReading>().push_back(device_->processes(now));
  // The pids on the process lists, read once for both of their readers: top's list
  // (docs/top.md#sources) and who holds the GPU, by pid and name, when that changes
  // (docs/recording-format.md#gpu-holders).
  if (!what.process_ids && !what.holders_of) return;
  const std::optional<std::vector<unsigned>> pids = device_->process_ids();
  if (what.process_ids) out.process_ids = pids;
  if (what.holders_of && pids) {
    if (!holders_) holders_ = std::make_unique<collect::GpuHolderTracker>();
    for (auto& holder : holders_->update(now, *pids, *what.holders_of, ::getpid()))
      out.holders.push_back(std::move(holder));
  }
}

std::unique_ptr<collect::GpmSampler> NvmlTelemetry::open_gpm(recording::TimeNs now) {
  return collect::open_gpm(*device_, now);
}

std::unique_ptr<collect::GpmSampler> open_gpm(const collect::NvmlDevice& device, recording::TimeNs now,
                                              std::optional<unsigned> gpu_instance) {
  // Its first pair 250 ms apart, two of GPM's refreshes (docs/method.md#gpm-as-a-second-chip-source).
  constexpr double kFirstPairMs = 250;
  return std::make_unique<collect::GpmSampler>(device, now, kFirstPairMs, gpu_instance);
}

std::unique_ptr<LiveSession> open_live_session(const LiveSessionOptions& options) {
  std::shared_ptr<collect::Nvml> nvml = collect::Nvml::load();
  const int count = nvml->device_count();
  std::vector<int> indices = options.gpus;
  if (indices.empty())
    for (int i = 0; i < count; ++i) indices.push_back(i);
  if (indices.empty()) {
    throw core::DeviceError("NVML lists no GPU on this host",
                            "run the agent on a host with an NVIDIA GPU, or use --replay FILE");
  }
  std::string executable =
      options.sampler_executable.empty() ? collect::find_sampler_executable() : options.sampler_executable;
  if (executable.empty() && options.log) {
    options.log("diescope-cupti was not found beside diescope (nor in $DIESCOPE_CUPTI): no chip counters");
  }
  const recording::TimeNs start = core::realtime_ns();
  std::vector<SessionGpu> gpus;
  for (int index : indices) {
    if (index < 0 || index >= count) {
      throw core::DeviceError(
          "GPU " + std::to_string(index) + " does not exist (NVML lists " + std::to_string(count) + ")",
          "pass indices from 0 to " + std::to_string(count - 1) + " to --gpus");
    }
    SessionGpu g;
    g.telemetry = std::make_unique<NvmlTelemetry>(std::shared_ptr<const collect::Nvml>(nvml), index, start);
    g.table = collect::unit_table_for_compute_capability(g.telemetry->identity().compute_capability);
    g.sampler.executable = executable;
    if (std::filesystem::path(executable).filename() == "diescope-cupti") g.sampler.leading_args = {"sample"};
    g.sampler.device = index;
    g.sampler.extra_args = options.sampler_extra_args;
    gpus.push_back(std::move(g));
  }
  auto session = std::make_unique<LiveSession>(std::move(gpus), options.interval_ms, options.poll_ms,
                                               options.timing, options.log, options.chip);
  NvmlCadence cadence = NvmlCadence::once_a_poll(static_cast<recording::TimeNs>(options.poll_ms * 1e6));
  if (options.power_reads == PowerReads::when_due)
    cadence = NvmlCadence::agent(static_cast<recording::TimeNs>(options.poll_ms * 1e6));
  session->set_cadence(cadence);
  return session;
}

}  // namespace diescope::collect
