#include "diescope/collect/gpm_source.hpp"

#include "diescope/collect/live_collection.hpp"
#include "diescope/core/error.hpp"

namespace diescope::collect {

// docs/live-collection.md#the-gpm-switch
bool GpmChipSource::open(GpuTelemetry& telemetry, SamplerSupervisor* pm, recording::TimeNs now) {
  try {
    sampler_ = telemetry.open_gpm(now);
  } catch (const core::Error& e) {
    error_ = e.what();
    return false;
  }
  error_.clear();
  if (pm) pm->request_stop();  // no retry of PM sampling while GPM stands in
  return true;
}

void GpmChipSource::close(SamplerSupervisor* pm, bool pm_wanted, recording::TimeNs now, GpuBatch& out) {
  sampler_.reset();
  if (pm) pm->set_wanted(pm_wanted, now, out);
}

void GpmChipSource::columns(recording::RecordingMeta& meta, double interval_ms) const {
  apply_unit_table(sampler_->table(), meta);
  meta.interval_ms = interval_ms;
}

recording::CountersEvent GpmChipSource::start(recording::TimeNs now, bool new_pair) {
  if (new_pair) sampler_->sample(now);  // starts a new pair here: nothing before `now` is counted
  return recording::CountersEvent{now, true, ""};
}

}  // namespace diescope::collect
