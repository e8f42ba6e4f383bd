// top's view feeds over the feeds the agent reads too: the live session (NVML, and the PM-sampling
// child with its restart backoff or GPM beside another profiler) and agent::ReplayFeed, with the
// counters asked on for every GPU from the start, plus, live, what top shows and the agent does not
// record (power draw, the pids and their names), read by the session's NVML side.
#include <algorithm>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "diescope/agent/replay_feed.hpp"
#include "diescope/attribution/watcher.hpp"
#include "diescope/analysis/analyze.hpp"
#include "diescope/collect/sampler.hpp"
#include "diescope/core/error.hpp"
#include "diescope/recording/reader.hpp"
#include "diescope/top/view_feed.hpp"

namespace diescope::top {

namespace {

// A process's name as nvidia-smi shows it: its program (argv[0], without the folder), else the
// 15 characters the kernel keeps (/proc/PID/comm); printable ASCII only; empty when the pid names no
// process visible here.
std::string process_name(unsigned pid) {
  std::string name;
  std::ifstream cmdline(fmt::format("/proc/{}/cmdline", pid), std::ios::binary);
  if (cmdline && std::getline(cmdline, name, '\0') && !name.empty()) {
    name = std::filesystem::path(name).filename().string();
  } else {
    std::ifstream comm(fmt::format("/proc/{}/comm", pid));
    if (!comm || !std::getline(comm, name)) return {};
  }
  for (char& c : name)
    if (c < 0x20 || c > 0x7e) c = '?';
  return name;
}

class AgentBacked : public ViewFeed {
 public:
  AgentBacked(std::unique_ptr<collect::Feed> source, std::unique_ptr<core::Clock> clock,
              std::string description, bool live)
      : source_(std::move(source)),
        clock_(std::move(clock)),
        description_(std::move(description)),
        live_(live),
        replay_(dynamic_cast<const agent::ReplayFeed*>(source_.get())) {
    const recording::TimeNs now = now_ns();
    for (std::size_t i = 0; i < source_->gpu_count(); ++i) source_->set_counters(i, true, now);
  }
  std::string description() const override { return description_; }
  collect::ChipSource chip_source() const override { return collect::ChipSource::pm; }
  bool live() const override { return live_; }
  std::size_t gpu_count() const override { return source_->gpu_count(); }
  const recording::RecordingMeta& meta(std::size_t gpu) const override { return source_->meta(gpu); }
  recording::TimeNs now_ns() override { return source_->now_ns(clock_->read()); }
  void poll(recording::TimeNs now, std::vector<GpuUpdate>& out) override {
    batches_.resize(source_->gpu_count());
    source_->collect(now, batches_);
    for (std::size_t i = 0; i < batches_.size(); ++i) {
      // Keep asking: the agent's supervisor restarts a failed sampler after its backoff.
      if (!source_->counters_on(i) && !source_->ended(now)) source_->set_counters(i, true, now);
      // A switch of chip source ends the batch's chip samples; later ones have the new columns.
      if (batches_[i].columns_changed_at) {
        out.at(i).new_meta = source_->meta(i);
        out.at(i).new_chip_source = chip_source_of(i);
      }
      out.at(i).records = std::move(batches_[i]);
      batches_[i].clear();
      if (replay_ != nullptr && replay_->gpu_ended(i, now)) out.at(i).ended_at = replay_->gpu_end_ns(i);
    }
    extras(now, out);
  }
  std::vector<int> wait_fds() const override { return source_->wait_fds(); }
  bool ended(recording::TimeNs now) const override { return source_->ended(now); }
  void shutdown() override {
    std::vector<collect::GpuBatch> ignored(source_->gpu_count());
    source_->shutdown(now_ns(), ignored);
  }

 protected:
  virtual void extras(recording::TimeNs /*now*/, std::vector<GpuUpdate>& /*out*/) {}
  // GPU `gpu`'s chip source now (a live session may switch).
  virtual collect::ChipSource chip_source_of(std::size_t /*gpu*/) const { return chip_source(); }
  const collect::Feed& agent_source() const { return *source_; }

 private:
  std::unique_ptr<collect::Feed> source_;
  std::unique_ptr<core::Clock> clock_;
  std::string description_;
  bool live_;
  const agent::ReplayFeed* replay_;  // the source above when it replays recordings; else null
  std::vector<collect::GpuBatch> batches_;
};

class Live final : public AgentBacked {
 public:
  // `session` reads NVML for the screen too: the draw with the power line and the pids on the
  // process lists, once a drain (its poll is the drain: docs/top.md#sources).
  Live(std::unique_ptr<collect::LiveSession> session, double drain_ms, std::string no_sampler,
       bool attribution)
      : AgentBacked(std::move(session), std::make_unique<core::SystemClock>(), "live", true),
        no_sampler_(std::move(no_sampler)),
        live_source_(static_cast<const collect::LiveSession*>(&agent_source())) {
    if (!attribution) return;
    // Who holds each GPU, on attribution's own thread, through the session's NVML devices
    // (docs/attribution.md#in-top, docs/live-collection.md#who-reads-it).
    std::vector<const collect::GpuTelemetry*> gpus;
    for (std::size_t i = 0; i < live_source_->gpu_count(); ++i) gpus.push_back(&live_source_->telemetry(i));
    attribution::WatchSettings ws;
    ws.poll_ms = drain_ms;
    try {
      watcher_ = std::make_unique<attribution::Watcher>(gpus, ws);
      watcher_->start();
    } catch (const std::exception&) {
      watcher_.reset();  // the processes are still listed, by pid and name
    }
  }

 private:
  // What the session read for the screen at its last poll (the source is polled sooner when the
  // sampler writes; NVML waits for the drain).
  void extras(recording::TimeNs now, std::vector<GpuUpdate>& out) override {
    // No sampler at all: said once, as the sampler's own failures are, so the GPU shows GPU-Util only
    // and why (docs/top.md#sources).
    if (!no_sampler_.empty()) {
      for (GpuUpdate& u : out) u.records.notes.push_back(recording::Note{now, "sampler", no_sampler_});
      no_sampler_.clear();
    }
    for (std::size_t i = 0; i < out.size(); ++i) {
      GpuUpdate& u = out[i];
      const auto& powers = u.records.list<recording::PowerLimitReading>();
      if (!powers.empty()) u.power_draw_w = powers.back().draw_w;
      if (const auto& pids = u.records.process_ids) {
        std::vector<ProcessInfo> list;
        for (unsigned pid : *pids) list.push_back(ProcessInfo{pid, process_name(pid), holder_of(i, pid)});
        u.processes = std::move(list);
      }
    }
  }
  collect::ChipSource chip_source_of(std::size_t gpu) const override {
    return live_source_->chip_source(gpu) == collect::ChipSource::gpm ? collect::ChipSource::gpm
                                                                      : chip_source();
  }
  // The latest watch's name for the holder of `pid` on this GPU; empty when it has none yet.
  std::string holder_of(std::size_t gpu, unsigned pid) const {
    if (!watcher_) return {};
    const attribution::WatchSnapshot snap = watcher_->snapshot();
    for (const attribution::GpuHolders& g : snap.gpus) {
      if (g.gpu_index != live_source_->meta(gpu).gpu.index) continue;
      for (const attribution::HolderShare& hs : g.holders)
        if (std::find(hs.holder.pids.begin(), hs.holder.pids.end(), pid) != hs.holder.pids.end()) {
          std::string name = attribution::describe(hs.holder);
          if (g.gpu_instance_id)
            name += fmt::format(", GPU instance {} ({})", *g.gpu_instance_id, g.gpu_instance_profile);
          if (g.split_approximate) name += fmt::format(", ~{:.0f}% of the GPU", hs.share * 100);
          return name;
        }
    }
    return {};
  }
  // Reads the session's NVML devices: a member here, it stops before the session (the base's) goes.
  std::unique_ptr<attribution::Watcher> watcher_;
  std::string no_sampler_;  // why there is no counter sampler; empty once said (or when there is one)
  const collect::LiveSession* live_source_;  // the source above
};

// top's NVML reads: everything once a drain, the pids on the process lists too
// (docs/live-collection.md#policies).
std::unique_ptr<ViewFeed> live_feed(std::unique_ptr<collect::LiveSession> session, double drain_ms,
                                    std::string no_sampler, bool attribution) {
  session->set_cadence(collect::NvmlCadence::once_a_poll(static_cast<recording::TimeNs>(drain_ms * 1e6)));
  return std::make_unique<Live>(std::move(session), drain_ms, std::move(no_sampler), attribution);
}

}  // namespace

std::unique_ptr<ViewFeed> make_view_feed(std::unique_ptr<collect::Feed> source,
                                         std::unique_ptr<core::Clock> clock, std::string description,
                                         bool live) {
  return std::make_unique<AgentBacked>(std::move(source), std::move(clock), std::move(description), live);
}

std::unique_ptr<ViewFeed> make_live_feed(const LiveOptions& options) {
  collect::LiveSessionOptions o;
  o.interval_ms = options.interval_ms;
  o.poll_ms = options.drain_ms;
  o.gpus = options.gpus;
  o.sampler_executable = options.sampler_executable;
  o.sampler_extra_args = options.sampler_extra_args;
  o.log = options.log;
  o.chip.source = options.chip;
  std::unique_ptr<collect::LiveSession> session = collect::open_live_session(o);
  std::string no_sampler;
  if (options.sampler_executable.empty() && collect::find_sampler_executable().empty())
    no_sampler =
        "diescope-cupti was not found beside diescope (nor in $DIESCOPE_CUPTI): install it there for chip "
        "figures";
  return live_feed(std::move(session), options.drain_ms, std::move(no_sampler), true);
}

std::unique_ptr<ViewFeed> make_live_feed(std::unique_ptr<collect::LiveSession> session, double drain_ms,
                                         bool attribution) {
  return live_feed(std::move(session), drain_ms, std::string(), attribution);
}

recording::TimeNs replay_moment(const std::string& file, std::optional<double> seconds) {
  const std::unique_ptr<recording::Recording> rec = recording::open_recording(file);
  const recording::TimeNs start = rec->meta().start_ns;
  const recording::TimeNs end = rec->side().end ? rec->side().end->ts_ns : rec->side().last_ts_ns;
  if (seconds) {
    const double length_s = static_cast<double>(end - start) / 1e9;
    if (!(*seconds >= 0) || *seconds > length_s)
      throw core::UsageError(fmt::format("--at {:g} is outside {}, which lasts {:.2f} s", *seconds,
                                         std::filesystem::path(file).filename().string(), length_s),
                             fmt::format("give a time from 0 to {:.2f} s, or --at steady", length_s));
    return start + static_cast<recording::TimeNs>(*seconds * 1e9);
  }
  const analysis::Analysis a = analysis::analyze(*rec);
  return a.window.found ? a.window.results.end_ns : end;
}

std::unique_ptr<ViewFeed> make_replay_feed(const ReplayOptions& options) {
  agent::ReplayOptions o;
  for (const std::string& f : options.files) o.files.emplace_back(f);
  o.speed = options.speed;
  o.loop = options.loop;
  auto clock = std::make_unique<core::SystemClock>();
  auto source = std::make_unique<agent::ReplayFeed>(o, clock->read());
  std::string names;
  for (const std::string& f : options.files)
    names += (names.empty() ? "" : ", ") + std::filesystem::path(f).filename().string();
  return make_view_feed(
      std::move(source), std::move(clock),
      fmt::format("replay {} at {:g}x{}", names, options.speed, options.loop ? ", looping" : ""), false);
}

}  // namespace diescope::top
