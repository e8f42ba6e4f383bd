// Measurement domains: what the host CPU's performance counters mean for a benchmark, and so whether
// their bottleneck diagnostics are shown. For CPU work the host PMU describes the work itself; for
// GPU or I/O work it describes only the host that orchestrates it (launches, syscalls), so a "low
// IPC" message would point the reader at the wrong chip.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace diescope::harness {

enum class MeasurementDomain {
  cpu,    // host PMU describes the work: diagnostics shown as they are
  gpu,    // the work runs on a GPU: host-PMU diagnostics suppressed
  io,     // the work waits on a device or the network: host-PMU diagnostics suppressed
  mixed,  // meaningful host work beside device work: host-PMU diagnostics prefixed "[host]"
};

std::string_view to_string(MeasurementDomain domain);

enum class HostDiagnostics { show, suppress, prefix_host };

// A backend that returns false from emits_cpu_diagnostics() suppresses host-PMU diagnostics in
// every domain (a device-timed backend in a Mixed benchmark, for example).
HostDiagnostics host_diagnostics_policy(MeasurementDomain domain, bool backend_emits_cpu_diagnostics);

// Heading of the host-PMU rows in reports, so a reader knows what those counters stand for.
std::string_view pmu_coverage_label(MeasurementDomain domain);

enum class DiagnosticKind {
  stability,    // noise, outliers, timeouts: shown in every domain
  host_pmu,     // bottleneck messages derived from host CPU counters: subject to the domain
  measurement,  // backend set-up and per-sample failures (perf unavailable, CUDA errors)
  throttle,     // samples dropped because the clock fell below the throttle threshold
  replay,       // diagnostic replay pass failures
};

struct Diagnostic {
  DiagnosticKind kind;
  std::string message;
  bool operator==(const Diagnostic&) const = default;
};

// The lines a reader sees, after the domain's policy: host-PMU messages kept, dropped or prefixed.
std::vector<std::string> visible_diagnostics(const std::vector<Diagnostic>& diagnostics,
                                             HostDiagnostics policy);

}  // namespace diescope::harness
