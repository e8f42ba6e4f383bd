// Where `diescope top` gets its readings (docs/top.md#sources): one interface, so the view never
// knows whether it watches this host's GPUs or plays a recording. Its implementations are the live
// host (NVML, plus the CUPTI PM-sampling child while the counters are free and NVML's GPM while
// another profiler holds them) and a replayed recording.
#pragma once

#include <cstddef>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "diescope/collect/live_collection.hpp"
#include "diescope/collect/feed.hpp"
#include "diescope/collect/run.hpp"
#include "diescope/recording/records.hpp"

namespace diescope::top {

struct ProcessInfo {
  unsigned pid = 0;
  std::string name;    // empty when the pid names no process this host shows (another namespace)
  std::string holder;  // who holds the GPU with it: "pod ml/train-7 (container trainer)"; empty when unknown
};

// What one GPU produced since the previous poll.
struct GpuUpdate {
  // The recording's records: chip samples, GPU-Util samples, clocks, clock-event reasons, power
  // limit, engines, process counts, counters on/off and notes (topic "sampler": why none came).
  collect::GpuBatch records;
  // Read where the source can read them (a recording holds neither): NaN / nullopt otherwise.
  double power_draw_w = std::numeric_limits<double>::quiet_NaN();
  std::optional<std::vector<ProcessInfo>> processes;
  // Set when this GPU's chip source changed (PM sampling to GPM or back) after the records above:
  // the columns its chip samples have from now on, and the chip source now. The samples above still
  // have the old columns.
  std::optional<recording::RecordingMeta> new_meta;
  collect::ChipSource new_chip_source = collect::ChipSource::pm;
  // Set once this GPU's recording is over (a replay without loop): where it ended on the source's
  // timeline. Nothing more comes for it; its last figures stay (docs/top.md#sources).
  std::optional<recording::TimeNs> ended_at;
};

class ViewFeed {
 public:
  virtual ~ViewFeed() = default;
  // Shown in the header: "live", or "replay ffma66.dsrec at 1x".
  virtual std::string description() const = 0;
  // What makes this feed's chip samples at the start: pm (live or recorded); a live feed that
  // switches to GPM says so in its update (GpuUpdate::new_chip_source). The title words it
  // (chip_source_words).
  virtual collect::ChipSource chip_source() const = 0;
  virtual bool live() const = 0;
  virtual std::size_t gpu_count() const = 0;
  virtual const recording::RecordingMeta& meta(std::size_t gpu) const = 0;
  // The source's timeline now: the wall clock (live) or the recording's own time (replay).
  virtual recording::TimeNs now_ns() = 0;
  // Everything read up to `now`, appended to out[gpu] (out has gpu_count() entries).
  virtual void poll(recording::TimeNs now, std::vector<GpuUpdate>& out) = 0;
  // Descriptors worth waking for (a sampler child's output).
  virtual std::vector<int> wait_fds() const { return {}; }
  // A replay without loop is over: nothing more will come.
  virtual bool ended(recording::TimeNs /*now*/) const { return false; }
  // Switches every counter off and waits (bounded) for them to confirm.
  virtual void shutdown() = 0;
};

struct LiveOptions {
  // chip sample interval
  double interval_ms = recording::kDefaultIntervalMs;
  double drain_ms = 1000;          // NVML reads, counter decoding and screen refresh
  std::vector<int> gpus;           // empty: every GPU NVML lists
  std::string sampler_executable;  // empty: diescope-cupti beside diescope
  std::vector<std::string> sampler_extra_args;
  // automatic: PM sampling while the counters are free, GPM while another profiler runs or holds
  // them, as the agent does (docs/top.md#sources).
  collect::ChipSourceSetting chip = collect::ChipSourceSetting::automatic;
  std::function<void(const std::string&)> log;
};
// This host's GPUs: NVML at every drain, chip samples from `chip` (a held counter set is retried
// with the agent's backoff). Throws DeviceError (no driver, no GPU, a bad index).
std::unique_ptr<ViewFeed> make_live_feed(const LiveOptions& options);

struct ReplayOptions {
  std::vector<std::string> files;  // one per GPU
  double speed = 1.0;              // recording seconds per second
  bool loop = false;
};
// Recordings played at `speed`, their chip samples all shown (the counters stay on). Throws
// InputError for a file that cannot be read, UsageError for a bad speed.
std::unique_ptr<ViewFeed> make_replay_feed(const ReplayOptions& options);
// The moment of a replay's one frame (docs/top.md#options): `seconds` after the first recording's
// start, or, without them, the end of its steady window (the end of the run when it has none), so
// that the frame's second and its minute of sparklines lie in the steady work. Throws InputError for
// a file that cannot be read, UsageError for a time outside the recording.
recording::TimeNs replay_moment(const std::string& file, std::optional<double> seconds);
// For tests: the live feed over a live session already made (a collect::LiveSession on a stand-in
// NVML), at its drain; the power draw and the pids come from the session's reads
// (docs/top.md#sources), and with `attribution` attribution's watcher names each pid's holder.
std::unique_ptr<ViewFeed> make_live_feed(std::unique_ptr<collect::LiveSession> session, double drain_ms,
                                         bool attribution);
// For tests: a source over an agent source already made (a ReplayFeed on memory recordings, or
// a collect::LiveSession with stand-ins), with its own clock.
std::unique_ptr<ViewFeed> make_view_feed(std::unique_ptr<collect::Feed> source,
                                         std::unique_ptr<core::Clock> clock, std::string description,
                                         bool live);

}  // namespace diescope::top
