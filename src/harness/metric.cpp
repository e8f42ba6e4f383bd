#include "diescope/harness/metric.hpp"

#include <cmath>
#include <limits>

namespace diescope::harness {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kBytesPerGiB = 1024.0 * 1024.0 * 1024.0;
}  // namespace

MetricValue::MetricValue(std::string metric_name, double metric_value, std::string metric_unit)
    : name(std::move(metric_name)), value(metric_value), unit(std::move(metric_unit)) {}

MetricValue MetricValue::duration_ms(std::string metric_name, std::chrono::duration<double> duration) {
  return {std::move(metric_name), duration.count() * 1e3, "ms"};
}

MetricValue MetricValue::bandwidth_gib_s(std::string metric_name, double bytes, double seconds) {
  return {std::move(metric_name), seconds > 0 ? bytes / kBytesPerGiB / seconds : kNaN, "GiB/s"};
}

MetricValue MetricValue::throughput_tflops(std::string metric_name, double flops, double seconds) {
  return {std::move(metric_name), seconds > 0 ? flops / 1e12 / seconds : kNaN, "TFLOP/s"};
}

MetricValue MetricValue::integer(std::string metric_name, std::int64_t metric_value,
                                 std::string metric_unit) {
  MetricValue m{std::move(metric_name), static_cast<double>(metric_value), std::move(metric_unit)};
  m.format = MetricFormat::integer;
  return m;
}

MetricValue MetricValue::with_display_name(std::string label) const {
  MetricValue m = *this;
  m.display_name = std::move(label);
  return m;
}

MetricValue MetricValue::with_section(std::string section_name) const {
  MetricValue m = *this;
  m.section = std::move(section_name);
  return m;
}

void MetricAggregator::add(const MetricValue& value, MetricOrigin origin) {
  MetricKey key{value.section, value.name, value.unit};
  auto [it, inserted] = index_.try_emplace(key, series_.size());
  if (inserted) {
    series_.emplace_back(key, Series{value.display_name, value.format, origin, {}});
  }
  Series& series = series_[it->second].second;
  // The first non-empty display name wins; a later sample cannot relabel the row.
  if (series.display_name.empty()) series.display_name = value.display_name;
  series.values.push_back(value.value);
}

std::vector<MetricSummary> MetricAggregator::summaries() const {
  std::vector<MetricSummary> out;
  out.reserve(series_.size());
  for (const auto& [key, series] : series_) {
    out.push_back({key, series.display_name, series.format, series.origin, summarize(series.values)});
  }
  return out;
}

}  // namespace diescope::harness
