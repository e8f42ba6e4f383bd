// Shared by the printers: number formatting and metric naming.
#pragma once

#include <map>
#include <string>

#include "diescope/bench/metric.hpp"

namespace diescope::bench {
struct RunResult;
namespace detail {

std::string format_seconds(double seconds);  // picks ns, us, ms or s
std::string format_value(double value, MetricFormat format);
std::string section_heading(const RunResult& result, const MetricSummary& metric);

}  // namespace detail
}  // namespace diescope::bench
