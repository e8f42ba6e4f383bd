#include "diescope/harness/domain.hpp"

namespace diescope::harness {

std::string_view to_string(MeasurementDomain domain) {
  switch (domain) {
    case MeasurementDomain::Cpu: return "cpu";
    case MeasurementDomain::Gpu: return "gpu";
    case MeasurementDomain::Io: return "io";
    case MeasurementDomain::Mixed: return "mixed";
  }
  return "unknown";
}

HostDiagnostics host_diagnostics_policy(MeasurementDomain domain, bool backend_emits_cpu_diagnostics) {
  if (!backend_emits_cpu_diagnostics) return HostDiagnostics::Suppress;
  switch (domain) {
    case MeasurementDomain::Cpu: return HostDiagnostics::Show;
    case MeasurementDomain::Gpu:
    case MeasurementDomain::Io: return HostDiagnostics::Suppress;
    case MeasurementDomain::Mixed: return HostDiagnostics::PrefixHost;
  }
  return HostDiagnostics::Show;
}

std::string_view pmu_coverage_label(MeasurementDomain domain) {
  switch (domain) {
    case MeasurementDomain::Cpu: return "host PMU";
    case MeasurementDomain::Gpu: return "host PMU (orchestration)";
    case MeasurementDomain::Io: return "host PMU (I/O submission)";
    case MeasurementDomain::Mixed: return "host PMU (mixed workload)";
  }
  return "host PMU";
}

std::vector<std::string> visible_diagnostics(const std::vector<Diagnostic>& diagnostics, HostDiagnostics policy) {
  std::vector<std::string> lines;
  for (const Diagnostic& d : diagnostics) {
    if (d.kind != DiagnosticKind::HostPmu) {
      lines.push_back(d.message);
    } else if (policy == HostDiagnostics::Show) {
      lines.push_back(d.message);
    } else if (policy == HostDiagnostics::PrefixHost) {
      lines.push_back("[host] " + d.message);
    }
  }
  return lines;
}

}  // namespace diescope::harness
