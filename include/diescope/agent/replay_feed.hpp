// The replay feed: recordings (docs/recording-format.md) played at their own pace, one GPU per
// file, so the whole agent (duty cycles, records, the store, /metrics) runs without a GPU.
//
// The replay's timeline starts at the first recording's start and runs `speed` recording seconds
// per monotonic second. Every other recording is shifted to start at the same moment. A record is
// handed out once the timeline passes its time (a chip sample once it has ended, as a drain would).
// Chip samples come only while the agent has that GPU's counters on; the others are read and left
// out, as if the counters had been off. The recording's own "counters on" events pass through while
// the agent's counters are on (the first sample after each spans a setup and is dropped); its "off"
// events do not (the agent's schedule says when the counters are off).
#pragma once

#include <filesystem>
#include <memory>
#include <vector>

#include "diescope/collect/feed.hpp"
#include "diescope/recording/recording.hpp"

namespace diescope::agent {

struct ReplayOptions {
  std::vector<std::filesystem::path> files;  // one per GPU, in GPU-index order
  double speed = 1.0;                        // recording seconds per second
  bool loop = false;                         // start over at the end, shifted to follow on
};

class ReplayFeed final : public collect::Feed {
 public:
  // Opens every file (InputError when one cannot be read) at the moment of `start`.
  ReplayFeed(const ReplayOptions& options, const core::ClockReadings& start);
  // For tests: recordings already open.
  ReplayFeed(std::vector<std::unique_ptr<recording::Recording>> recordings, double speed, bool loop,
             const core::ClockReadings& start);
  ~ReplayFeed() override;

  std::string kind() const override { return "replay"; }
  std::size_t gpu_count() const override;
  const recording::RecordingMeta& meta(std::size_t gpu) const override;
  recording::TimeNs now_ns(const core::ClockReadings& clocks) override;
  double speed() const override { return speed_; }
  void collect(recording::TimeNs now, std::vector<collect::GpuBatch>& out) override;
  void set_counters(std::size_t gpu, bool on, recording::TimeNs now) override;
  bool ended(recording::TimeNs now) const override;
  recording::TimeNs end_ns() const override;
  void shutdown(recording::TimeNs now, std::vector<collect::GpuBatch>& out) override;
  bool counters_on(std::size_t gpu) const override;
  // The timeline's start (the first recording's start).
  recording::TimeNs origin_ns() const { return origin_ns_; }
  // Whether GPU `gpu`'s recording is over at `now` (never while looping), and where on the
  // timeline it ends: the shorter of two recordings ends first.
  bool gpu_ended(std::size_t gpu, recording::TimeNs now) const;
  recording::TimeNs gpu_end_ns(std::size_t gpu) const;

 private:
  struct Gpu;
  void init(const core::ClockReadings& start);
  std::vector<std::unique_ptr<Gpu>> gpus_;
  double speed_ = 1.0;
  bool loop_ = false;
  recording::TimeNs origin_ns_ = 0;
  recording::TimeNs mono0_ns_ = 0;
};

}  // namespace diescope::agent
