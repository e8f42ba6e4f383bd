// The host streams of a recording, ready to draw or analyse (docs/recording-format.md#host-streams):
// each stream's descriptor with its points, and the measured command's processes. Nothing here knows
// one probe from another: a stream is what its descriptor says.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "diescope/metrics/descriptor.hpp"
#include "diescope/metrics/postprocess.hpp"
#include "diescope/recording/records.hpp"
#include "diescope/recording/recording.hpp"

namespace diescope::recording {

struct HostSeries {
  std::int64_t id = 0;
  metrics::MetricDescriptor descriptor;
  metrics::Series points;  // in time order; NaN where a read failed
};

struct HostData {
  std::vector<HostSeries> series;  // in the order the recording declared them
  std::vector<HostTask> tasks;     // the measured command's processes, in the order first seen
  double interval_ms = std::numeric_limits<double>::quiet_NaN();  // the meta's host_interval_ms

  bool empty() const { return series.empty(); }
  // The series of `name` with `scope`; nullptr when the recording has none.
  const HostSeries* find(std::string_view name, const metrics::Scope& scope) const;
  // Every series of `name`, whatever its scope, in declaration order.
  std::vector<const HostSeries*> all_of(std::string_view name) const;
  // The latest task line of `pid` (a pid gets another when it execs and its name changes); nullptr
  // when it is not one of the command's processes.
  const HostTask* task(std::int64_t pid) const;
  // How people should read a scope: "python3 (pid 4242)" for a process with a known name, else
  // Scope::label() ("cpu 3", "device nvme0n1", "system").
  std::string scope_label(const metrics::Scope& scope) const;
};

// Reads every host stream of `source` whose points lie in [from_ns, to_ns) into memory. Memory
// grows with the recording's host samples (16 bytes a value): a renderer of a long recording reads
// source.stream<HostSample>() itself and reduces as it goes.
HostData load_host_data(const Recording& source, TimeNs from_ns = std::numeric_limits<TimeNs>::min(),
                        TimeNs to_ns = std::numeric_limits<TimeNs>::max());

}  // namespace diescope::recording
