// Runs benchmarks: for each parameter point a warm-up sample, batch calibration (batch mode), timed
// samples until the stopping rule says enough, then the diagnostic replay pass. Each finished point
// goes to the printer straight away, so a long run shows progress.
#pragma once

#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "diescope/harness/benchmark.hpp"
#include "diescope/harness/printer.hpp"
#include "diescope/harness/result.hpp"

namespace diescope::harness {

struct RunOptions {
  std::optional<std::regex> filter;          // searched in the full name (with axes)
  std::optional<StoppingCriteria> stopping;  // overrides every benchmark's criteria
  std::size_t max_consecutive_failures = 3;  // then stop the point: a sticky device error
  std::string executable;                    // for the report's context
};

// Runs one benchmark at one point. Never throws for what the benchmark or its backend does: a
// throwing benchmark function or backend factory becomes RunResult::error.
RunResult run_point(const Benchmark& benchmark, const AxisPoint& point, const RunOptions& options = {});

// Runs every point of every benchmark that passes the filter, reporting each to `printer`.
std::vector<RunResult> run_benchmarks(const std::vector<Benchmark>& benchmarks, Printer& printer,
                                      const RunOptions& options = {});

// Host-PMU bottleneck findings from a result's host_pmu metrics (low IPC, branch and cache misses,
// context switches). Thresholds are in runner.cpp, named.
std::vector<Diagnostic> host_pmu_diagnostics(const std::vector<MetricSummary>& metrics);

// Tukey's fences: values below Q1 - 1.5 IQR or above Q3 + 1.5 IQR.
std::size_t count_outliers(std::vector<double> values);

}  // namespace diescope::harness
