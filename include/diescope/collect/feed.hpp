// A feed: what each GPU produced since the last call, as it arrives (docs/live-collection.md#who-reads-it).
// It is the live session (NVML and the CUPTI sampler child, one per GPU) or a replay (recordings
// played at their own pace, agent::ReplayFeed). The agent and `top` read either through this
// interface and never know which they have, so everything downstream of it runs in CI.
#pragma once

#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "diescope/core/clock.hpp"
#include "diescope/recording/memory_recording.hpp"

namespace diescope::collect {

// The records one GPU produced since the previous collect, each kind in time order: every stream
// kind (list<R>()), plus the counters events and notes.
struct GpuBatch : recording::StreamRecords {
  std::vector<recording::CountersEvent>
      counters;  // the counters actually started or stopped (ts as measured)
  std::vector<recording::Note> notes;
  std::vector<recording::GpuHolder> holders;  // who started or stopped holding the GPU (run's reads)
  // The pids on NVML's compute and graphics lists, ascending, at the newest read that took them (top's
  // reads: NvmlReadSet::process_ids); nullopt when none did or neither list could be read.
  std::optional<std::vector<unsigned>> process_ids;
  // The chip columns changed after this batch's chip samples (the chip source switched between PM
  // sampling and NVML GPM): meta() now describes the new ones, and the agent starts a new record.
  std::optional<recording::TimeNs> columns_changed_at;
  std::string columns_change_why;
  void clear() { *this = GpuBatch{}; }
};

class Feed {
 public:
  virtual ~Feed() = default;
  virtual std::string kind() const = 0;  // "live" or "replay"
  virtual std::size_t gpu_count() const = 0;
  // Identity and columns of one GPU (start_ns and the duty fields are the agent's to set).
  virtual const recording::RecordingMeta& meta(std::size_t gpu) const = 0;

  // The source's timeline at the moment of `clocks`: the wall clock (live) or the recording's own
  // time (replay, which runs `speed()` recording seconds per monotonic second).
  virtual recording::TimeNs now_ns(const core::ClockReadings& clocks) = 0;
  virtual double speed() const { return 1.0; }
  // After a wall-clock step or a suspend: re-anchor the timeline (live: nothing to do).
  virtual void rebase(const core::ClockReadings& /*clocks*/) {}

  // Everything read up to `now`, appended to out[gpu] (out has gpu_count() entries).
  virtual void collect(recording::TimeNs now, std::vector<GpuBatch>& out) = 0;
  // Enables (on) or disables (off) one GPU's counters. Disabling means the counters are switched
  // off, not paused (pausing saves nothing: docs/method.md#measurement-cost). The change shows as a
  // CountersEvent in a later collect, timed when it took effect.
  virtual void set_counters(std::size_t gpu, bool on, recording::TimeNs now) = 0;
  // The agent needs one GPU's power line (limit, draw, energy counter) at the next poll: a period
  // ends there. A source that reads it at every poll ignores this (docs/agent.md#nvml-reads).
  virtual void power_due(std::size_t /*gpu*/) {}
  // Samples GPU `gpu`'s chip counters every `interval_ms` from now on, for a capture
  // (docs/agent.md#what-a-capture-holds): a running sampler is stopped and started again at the new
  // interval (its start-up is a gap in the chip samples), a stopped one starts at it next time. meta()
  // keeps the interval the source was opened with. Returns false where the source cannot: a replay
  // plays its recording's samples, and GPM keeps its own interval.
  virtual bool set_interval(std::size_t /*gpu*/, double /*interval_ms*/, recording::TimeNs /*now*/) {
    return false;
  }
  // File descriptors worth waking for (a sampler child's output); collect soon after one is readable.
  virtual std::vector<int> wait_fds() const { return {}; }
  // The next time the source has something of its own to read (a GPM sample every 100 ms, between
  // polls); the largest time when nothing is due. The agent wakes for it.
  virtual recording::TimeNs next_due_ns() const { return std::numeric_limits<recording::TimeNs>::max(); }
  // Replay: the recording is over at `end_ns()`, and nothing more will come.
  virtual bool ended(recording::TimeNs /*now*/) const { return false; }
  virtual recording::TimeNs end_ns() const { return 0; }
  // Disables every GPU's counters and waits (bounded) for them to confirm; the agent is stopping.
  virtual void shutdown(recording::TimeNs now, std::vector<GpuBatch>& out) = 0;
  // Times the counter sampler had to be restarted after it failed, per GPU (live only).
  virtual long sampler_restarts(std::size_t /*gpu*/) const { return 0; }
  // Whether a GPU's counters are on (or being started) now.
  virtual bool counters_on(std::size_t gpu) const = 0;
};

}  // namespace diescope::collect
