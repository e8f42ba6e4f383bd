#include <gtest/gtest.h>

#include <algorithm>

#include "diescope/harness/runner.hpp"
#include "helpers.hpp"

namespace diescope::harness {
namespace {

TEST(Domain, PolicyForEachDomainAndBackend) {
  EXPECT_EQ(host_diagnostics_policy(MeasurementDomain::cpu, true), HostDiagnostics::show);
  EXPECT_EQ(host_diagnostics_policy(MeasurementDomain::gpu, true), HostDiagnostics::suppress);
  EXPECT_EQ(host_diagnostics_policy(MeasurementDomain::io, true), HostDiagnostics::suppress);
  EXPECT_EQ(host_diagnostics_policy(MeasurementDomain::mixed, true), HostDiagnostics::prefix_host);
  // A backend that opts out wins in every domain.
  for (auto d :
       {MeasurementDomain::cpu, MeasurementDomain::gpu, MeasurementDomain::io, MeasurementDomain::mixed}) {
    EXPECT_EQ(host_diagnostics_policy(d, false), HostDiagnostics::suppress) << to_string(d);
  }
}

TEST(Domain, CoverageLabels) {
  EXPECT_EQ(pmu_coverage_label(MeasurementDomain::cpu), "host PMU");
  EXPECT_EQ(pmu_coverage_label(MeasurementDomain::gpu), "host PMU (orchestration)");
  EXPECT_EQ(pmu_coverage_label(MeasurementDomain::mixed), "host PMU (mixed workload)");
  EXPECT_EQ(pmu_coverage_label(MeasurementDomain::io), "host PMU (I/O submission)");
}

TEST(Domain, VisibleDiagnosticsFollowThePolicy) {
  const std::vector<Diagnostic> d = {{DiagnosticKind::host_pmu, "low IPC"},
                                     {DiagnosticKind::stability, "noisy"}};
  EXPECT_EQ(visible_diagnostics(d, HostDiagnostics::show), (std::vector<std::string>{"low IPC", "noisy"}));
  EXPECT_EQ(visible_diagnostics(d, HostDiagnostics::suppress), (std::vector<std::string>{"noisy"}));
  EXPECT_EQ(visible_diagnostics(d, HostDiagnostics::prefix_host),
            (std::vector<std::string>{"[host] low IPC", "noisy"}));
}

// End to end: a backend reporting IPC 0.5 (below the 1.0 line) and a noisy run that times out.
RunResult run_with(MeasurementDomain domain, bool backend_emits) {
  auto tick = std::make_shared<int>(0);
  Benchmark b("pmu", [](State&) {});
  b.domain(domain)
      .timing(TimingMode::cold)
      .cache_flusher([tick] { return std::make_unique<testing::CountingFlusher>(tick); })
      .backend([backend_emits] {
        return std::make_unique<testing::FixedMetricsBackend>(
            std::vector<MetricValue>{MetricValue("ipc", 0.5, "instr/cycle").with_section("host_pmu")},
            backend_emits);
      })
      .stopping({.min_samples = 2, .min_time_s = 0, .max_noise = 0.0, .timeout_s = 100, .max_samples = 3});
  return run_point(b, AxisPoint{});
}

bool has_line(const std::vector<std::string>& lines, const std::string& prefix) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& l) { return l.rfind(prefix, 0) == 0; });
}

TEST(Domain, RunnerAppliesTheDomainToHostPmuFindings) {
  const RunResult cpu = run_with(MeasurementDomain::cpu, true);
  EXPECT_TRUE(has_line(cpu.visible_diagnostics(), "low IPC: 0.50"));

  const RunResult gpu = run_with(MeasurementDomain::gpu, true);
  EXPECT_FALSE(has_line(gpu.visible_diagnostics(), "low IPC"));
  EXPECT_FALSE(has_line(gpu.visible_diagnostics(), "[host]"));
  // The finding still exists; only its display is suppressed.
  EXPECT_TRUE(std::any_of(gpu.diagnostics.begin(), gpu.diagnostics.end(),
                          [](const Diagnostic& d) { return d.kind == DiagnosticKind::host_pmu; }));

  const RunResult mixed = run_with(MeasurementDomain::mixed, true);
  EXPECT_TRUE(has_line(mixed.visible_diagnostics(), "[host] low IPC: 0.50"));

  const RunResult mixed_opt_out = run_with(MeasurementDomain::mixed, false);
  EXPECT_FALSE(has_line(mixed_opt_out.visible_diagnostics(), "[host]"));
  EXPECT_FALSE(has_line(mixed_opt_out.visible_diagnostics(), "low IPC"));
}

TEST(Domain, StabilityFindingsShowInEveryDomain) {
  // Device times 1, 2, 1 ms cannot meet a 0 % noise target, so each run stops at the 3-sample cap
  // with a stability finding, whatever the domain.
  for (auto d :
       {MeasurementDomain::cpu, MeasurementDomain::gpu, MeasurementDomain::io, MeasurementDomain::mixed}) {
    Benchmark b("stability", [](State&) {});
    b.domain(d)
        .timing(TimingMode::cold)
        .cache_flusher([] { return std::make_unique<testing::CountingFlusher>(std::make_shared<int>(0)); })
        .backend([] {
          return std::make_unique<SimulatedGpuBackend>(testing::device_times({1e-3, 2e-3, 1e-3}));
        })
        .stopping({.min_samples = 2, .min_time_s = 0, .max_noise = 0.0, .timeout_s = 100, .max_samples = 3});
    const RunResult r = run_point(b, AxisPoint{});
    EXPECT_EQ(r.stop_reason, StopReason::max_samples);
    EXPECT_TRUE(has_line(r.visible_diagnostics(), "noise")) << to_string(d);
  }
}

}  // namespace
}  // namespace diescope::harness
