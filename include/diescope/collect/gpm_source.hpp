// The GPM switch carried out (docs/live-collection.md#the-gpm-switch): the one place a live reader
// opens NVML GPM for a GPU, stops PM sampling for it, gives GPM's columns and the start of its samples,
// and starts PM sampling again. When to switch is gpm_wanted's (chip_source.hpp); what is said about
// it is each reader's own.
#pragma once

#include <algorithm>
#include <memory>
#include <string>

#include "diescope/collect/feed.hpp"
#include "diescope/collect/gpm.hpp"
#include "diescope/recording/records.hpp"

namespace diescope::collect {

class GpuTelemetry;       // live_collection.hpp
class SamplerSupervisor;  // live_collection.hpp

// One GPU's NVML GPM as its chip source.
class GpmChipSource {
 public:
  // GPM's interval for a reader whose chip samples come every `interval_ms`: at least
  // kGpmMinIntervalMs (docs/method.md#gpm-as-a-second-chip-source).
  static double interval_for(double interval_ms) { return std::max(interval_ms, kGpmMinIntervalMs); }

  // The switch to GPM at `now`: GPM opened through `telemetry` (its first pair taken at `now`), then
  // PM sampling (`pm`, where there is one) asked to stop and no longer wanted. False when GPM cannot
  // be read: error() says why, and PM sampling is left as it was.
  bool open(GpuTelemetry& telemetry, SamplerSupervisor* pm, recording::TimeNs now);
  // The switch back at `now`: GPM closed, then PM sampling wanted again as `pm_wanted` says (what
  // the supervisor says goes to `out`).
  void close(SamplerSupervisor* pm, bool pm_wanted, recording::TimeNs now, GpuBatch& out);
  bool is_open() const { return sampler_ != nullptr; }
  GpmSampler& sampler() { return *sampler_; }
  const GpmSampler& sampler() const { return *sampler_; }
  const std::string& error() const { return error_; }  // why the last open() failed

  // GPM's columns in `meta`: its unit table less what this GPU did not answer, taken every
  // `interval_ms` (interval_for).
  void columns(recording::RecordingMeta& meta, double interval_ms) const;
  // GPM's samples are recorded from `now`: the counters-on event. `new_pair`: the first sample
  // starts at `now` (nothing before it counts); otherwise at the pair open() took.
  recording::CountersEvent start(recording::TimeNs now, bool new_pair);

 private:
  std::unique_ptr<GpmSampler> sampler_;
  std::string error_;
};

}  // namespace diescope::collect
