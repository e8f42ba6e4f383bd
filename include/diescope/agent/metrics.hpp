// The /metrics exposition: Prometheus text format 0.0.4, or OpenMetrics 1.0 when the scraper asks
// for it. Gauges come from each GPU's latest record; counters from the agent's lifetime. Names
// follow Prometheus conventions: a diescope_ prefix, base units in the name (_percent, _ratio,
// _seconds, _hertz), counters ending in _total. Every family has HELP and TYPE lines (and UNIT in
// OpenMetrics). A figure that could not be computed is NaN (the record says why).
#pragma once

#include <string>
#include <vector>

#include "diescope/agent/agent.hpp"
#include "diescope/agent/host_metrics.hpp"

namespace diescope::agent {

enum class ExpositionFormat { prometheus_text, openmetrics };

inline constexpr const char* kPrometheusContentType = "text/plain; version=0.0.4; charset=utf-8";
inline constexpr const char* kOpenMetricsContentType =
    "application/openmetrics-text; version=1.0.0; charset=utf-8";

// Which format an Accept header asks for (OpenMetrics only when it is named).
ExpositionFormat format_for_accept(const std::string& accept);

struct AgentInfo {
  std::string source;  // "live" or "replay"
  double duty_on_ms = 0;
  double duty_period_ms = 0;
  double poll_ms = 0;
};

// `host`: the host probes' figures (docs/agent.md#host-metrics), one diescope_host_metric family
// labelled with each stream's metric name, scope and unit as a recording names them; none when empty.
std::string render_metrics(const std::vector<GpuStatus>& gpus, const AgentInfo& info, ExpositionFormat format,
                           const std::vector<HostFigure>& host = {});

// `body` (render_metrics' text) with more families added at its end, before OpenMetrics' "# EOF"
// line where it has one (attribution's per-job families, docs/attribution.md#in-the-agent).
std::string append_families(std::string body, const std::string& families);

// A label value escaped for the exposition formats (backslash, double quote, newline).
std::string escape_label_value(const std::string& value);

}  // namespace diescope::agent
