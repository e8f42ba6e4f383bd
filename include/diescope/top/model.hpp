// The state behind `diescope top`: per GPU, the last minute of chip samples and GPU-Util samples and
// the latest clocks, limits and processes, and the figures of a frame computed from them with the
// method's own rules (docs/top.md#figures): DIE-Util is the busiest available unit of each sample
// (analysis::die_util_of_sample), time-weighted; GPU-Util is NVML's samples booked to the time they
// describe (analysis's booking); both over the same stretch of time.
#pragma once

#include <cstddef>
#include <deque>
#include <string>
#include <vector>

#include "diescope/top/screen.hpp"
#include "diescope/top/view_feed.hpp"

namespace diescope::top {

// How long without a chip sample before a GPU is shown as GPU-Util only: three drains, and at least
// 3 s (docs/top.md#sources).
recording::TimeNs stale_after_ns(double drain_ms);

class Model {
 public:
  // The current figures cover the last drain (at least 1 s) of each GPU's newest readings.
  Model(const ViewFeed& source, double drain_ms);

  void absorb(std::size_t gpu, GpuUpdate& update, recording::TimeNs now);
  // The frame at source time `now`, GPUs in index order (sort_gpus orders them). A GPU whose replay
  // is over is shown as it was at its end.
  std::vector<GpuFrame> gpus(recording::TimeNs now) const;
  // The time the header shows: `now`, or the last end once every GPU's replay is over (the clock
  // stops with the recordings).
  recording::TimeNs shown_time(recording::TimeNs now) const;

 private:
  struct Sample {
    recording::TimeNs start_ns = 0;
    recording::TimeNs end_ns = 0;
    std::vector<double> units;
  };
  struct Engines {
    recording::TimeNs ts_ns = 0;
    std::vector<double> values;
  };
  struct Util {
    recording::TimeNs ts_ns = 0;
    double pct = 0;
  };
  struct Gpu {
    recording::RecordingMeta meta;
    collect::ChipSource chip_source = collect::ChipSource::pm;  // what makes the chip samples now
    std::deque<Sample> samples;
    std::deque<Engines> engines;
    std::deque<Util> util;
    bool first_after_on = false;  // the next chip sample spans the counters' setup: dropped
    recording::TimeNs last_chip_ns = 0;
    bool asked = false;  // counters on (asked for or confirmed) since the last sample
    std::string reason;  // the latest sampler note
    recording::ClockReading clock{0, kNaN, kNaN};
    double power_limit_w = kNaN;
    double power_w = kNaN;
    std::optional<std::uint64_t> throttle;
    bool throttle_read = false;
    std::optional<std::vector<ProcessInfo>> processes;
    int compute = -1;
    int graphics = -1;
    std::optional<recording::TimeNs> ended_at;  // the replay of this GPU is over, at this time
  };
  void trim(Gpu& g, recording::TimeNs now) const;
  GpuFrame frame_of(const Gpu& g, recording::TimeNs now) const;

  std::vector<Gpu> gpus_;
  bool replay_ = false;
  double drain_ms_ = 1000;
};

}  // namespace diescope::top
