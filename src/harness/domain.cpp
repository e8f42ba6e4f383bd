#include "diescope/harness/domain.hpp"

namespace diescope::harness {

std::string_view to_string(MeasurementDomain domain) {
  switch (domain) {
    case MeasurementDomain::cpu:
      return "cpu";
    case MeasurementDomain::gpu:
      return "gpu";
    case MeasurementDomain::io:
      return "io";
    case MeasurementDomain::mixed:
      return "mixed";
  }
  return "unknown";
}

HostDiagnostics host_diagnostics_policy(MeasurementDomain domain, bool backend_emits_cpu_diagnostics) {
  if (!backend_emits_cpu_diagnostics) return HostDiagnostics::suppress;
  switch (domain) {
    case MeasurementDomain::cpu:
      return HostDiagnostics::show;
    case MeasurementDomain::gpu:
    case MeasurementDomain::io:
      return HostDiagnostics::suppress;
    case MeasurementDomain::mixed:
      return HostDiagnostics::prefix_host;
  }
  return HostDiagnostics::show;
}

std::string_view pmu_coverage_label(MeasurementDomain domain) {
  switch (domain) {
    case MeasurementDomain::cpu:
      return "host PMU";
    case MeasurementDomain::gpu:
      return "host PMU (orchestration)";
    case MeasurementDomain::io:
      return "host PMU (I/O submission)";
    case MeasurementDomain::mixed:
      return "host PMU (mixed workload)";
  }
  return "host PMU";
}

std::vector<std::string> visible_diagnostics(const std::vector<Diagnostic>& diagnostics,
                                             HostDiagnostics policy) {
  std::vector<std::string> lines;
  for (const Diagnostic& d : diagnostics) {
    if (d.kind != DiagnosticKind::host_pmu || policy == HostDiagnostics::show) {
      lines.push_back(d.message);
    } else if (policy == HostDiagnostics::prefix_host) {
      lines.push_back("[host] " + d.message);
    }
  }
  return lines;
}

}  // namespace diescope::harness
