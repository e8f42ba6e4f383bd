// Parameter axes: a benchmark declares named value lists and runs once per point of their cartesian
// product. Points are enumerated like nested loops in declaration order (the last axis varies
// fastest) and named Google-Benchmark style: "copy/bytes:1024/mode:cold".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace diescope::harness {

using AxisValue = std::variant<std::int64_t, double, std::string>;
std::string to_string(const AxisValue& value);

struct Axis {
  std::string name;
  std::vector<AxisValue> values;
};

class AxisPoint {
 public:
  AxisPoint() = default;
  explicit AxisPoint(std::vector<std::pair<std::string, AxisValue>> values) : values_(std::move(values)) {}

  // Each throws UsageError naming the axis when it is missing or holds another type.
  std::int64_t get_int(std::string_view axis) const;
  double get_double(std::string_view axis) const;  // an integer axis converts
  const std::string& get_string(std::string_view axis) const;

  // "/bytes:1024/mode:cold"; empty for a benchmark without axes.
  std::string name_suffix() const;
  const std::vector<std::pair<std::string, AxisValue>>& values() const { return values_; }

 private:
  const AxisValue& find(std::string_view axis) const;
  std::vector<std::pair<std::string, AxisValue>> values_;
};

// One point (with no values) when there are no axes; none when an axis has no values.
std::vector<AxisPoint> cartesian_product(const std::vector<Axis>& axes);

}  // namespace diescope::harness
