// Per-sample custom metrics. A benchmark (or a backend, or a diagnostic pass) attaches named values
// to each sample; the runner aggregates them across samples into mean, median, p95, min, max and the
// number of samples that contributed. Two values belong to the same metric only when section, name
// and unit all match, so "ms" and "us" versions of one name never mix.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "diescope/harness/statistics.hpp"

namespace diescope::harness {

// How a value is shown: Integer rounds to a whole number and never uses scientific notation
// (algorithm ids, device indices, byte counts).
enum class MetricFormat { number, integer };

struct MetricValue {
  std::string name;
  double value = 0;
  std::string unit;
  std::string section;       // empty: the default section (or the diagnostic pass's section)
  std::string display_name;  // empty: show `name`
  MetricFormat format = MetricFormat::number;

  MetricValue() = default;
  MetricValue(std::string metric_name, double metric_value, std::string metric_unit);

  // Milliseconds from a duration.
  static MetricValue duration_ms(std::string metric_name, std::chrono::duration<double> duration);
  // GiB/s (2^30 bytes per second); NaN when seconds is not positive.
  static MetricValue bandwidth_gib_s(std::string metric_name, double bytes, double seconds);
  // TFLOP/s (1e12 floating-point operations per second); NaN when seconds is not positive.
  static MetricValue throughput_tflops(std::string metric_name, double flops, double seconds);
  static MetricValue integer(std::string metric_name, std::int64_t metric_value, std::string metric_unit);

  MetricValue with_display_name(std::string label) const;
  MetricValue with_section(std::string section_name) const;

  const std::string& label() const { return display_name.empty() ? name : display_name; }
};

struct MetricKey {
  std::string section;
  std::string name;
  std::string unit;
  auto operator<=>(const MetricKey&) const = default;
};

// Where a metric came from: the timed samples, or the diagnostic replay pass after them.
enum class MetricOrigin { timed, diagnostic_pass };

struct MetricSummary {
  MetricKey key;
  std::string display_name;
  MetricFormat format = MetricFormat::number;
  MetricOrigin origin = MetricOrigin::timed;
  Summary stats;  // stats.count: samples that contributed a finite value

  const std::string& label() const { return display_name.empty() ? key.name : display_name; }
};

// Collects metric values sample by sample; summaries come back in first-seen order so tables keep
// the order the benchmark author wrote them in.
class MetricAggregator {
 public:
  void add(const MetricValue& value, MetricOrigin origin = MetricOrigin::timed);
  std::vector<MetricSummary> summaries() const;

 private:
  struct Series {
    std::string display_name;
    MetricFormat format = MetricFormat::number;
    MetricOrigin origin = MetricOrigin::timed;
    std::vector<double> values;
  };
  std::map<MetricKey, std::size_t> index_;
  std::vector<std::pair<MetricKey, Series>> series_;
};

}  // namespace diescope::harness
