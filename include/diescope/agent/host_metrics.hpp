// The host probes in the agent (docs/agent.md#host-metrics): the same probes as `diescope run`
// (host CPU per core and in total with iowait, memory, block devices; the agent measures no command,
// so there is no process tree), read every --host-interval-ms. Each publish feeds the reads since the
// previous one through metrics::Pipeline, the one post-processing pipeline the report uses, on one
// bin over that span, and keeps each stream's min, time-weighted mean and max for /metrics, under
// the stream's own metric name and scope as a recording holds them.
#pragma once

#include <map>
#include <memory>
#include <vector>

#include "diescope/collect/host_probes.hpp"
#include "diescope/metrics/descriptor.hpp"
#include "diescope/recording/records.hpp"

namespace diescope::agent {

// One host stream over the last published span.
struct HostFigure {
  metrics::MetricDescriptor descriptor;  // after the pipeline's steps (the recording's, unchanged)
  double min = 0, mean = 0, max = 0;     // NaN when no read reached the span
};

class HostMetrics {
 public:
  explicit HostMetrics(collect::HostProbeOptions options = {});
  // One read of the probes at `now_ns` (CLOCK_REALTIME); `mono_ns` times the rates.
  void read(recording::TimeNs now_ns, recording::TimeNs mono_ns);
  // The reads since the previous publish, through the pipeline, over [previous publish, now_ns).
  // Streams without a value in that span keep their previous figures; the first publish covers
  // the time since the first read. Empty until two reads have come (a rate needs two).
  const std::vector<HostFigure>& publish(recording::TimeNs now_ns);
  const std::vector<HostFigure>& figures() const { return figures_; }
  long reads() const { return probes_.reads(); }
  // For tests: read another /proc tree (a fixture) from now on.
  void set_proc_root(std::filesystem::path proc);

 private:
  struct Pending {
    std::int64_t id = 0;
    recording::TimeNs t0 = 0, t1 = 0;  // t0 == t1: a level read at one instant
    double value = 0;
  };
  collect::HostProbes probes_;
  std::map<std::int64_t, metrics::MetricDescriptor> streams_;
  std::map<std::int64_t, recording::TimeNs> previous_;  // each stream's last read, for its span
  std::vector<Pending> pending_;
  recording::TimeNs published_to_ = 0;
  std::vector<HostFigure> figures_;
  std::map<std::int64_t, std::size_t> figure_of_;  // stream id -> index in figures_
};

}  // namespace diescope::agent
