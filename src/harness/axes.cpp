#include "diescope/harness/axes.hpp"

#include <fmt/format.h>

#include "diescope/core/error.hpp"

namespace diescope::harness {

std::string to_string(const AxisValue& value) {
  if (const auto* i = std::get_if<std::int64_t>(&value)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&value)) return fmt::format("{}", *d);  // shortest round-trip form
  return std::get<std::string>(value);
}

const AxisValue& AxisPoint::find(std::string_view axis) const {
  for (const auto& [name, value] : values_) {
    if (name == axis) return value;
  }
  throw core::UsageError(
      "the benchmark asked for axis '" + std::string(axis) + "', which it does not declare",
      "declare it with int_axis, float_axis or string_axis, or fix the name");
}

std::int64_t AxisPoint::get_int(std::string_view axis) const {
  const AxisValue& v = find(axis);
  if (const auto* i = std::get_if<std::int64_t>(&v)) return *i;
  throw core::UsageError("axis '" + std::string(axis) + "' is not an integer axis",
                         "read it with get_double or get_string");
}

double AxisPoint::get_double(std::string_view axis) const {
  const AxisValue& v = find(axis);
  if (const auto* d = std::get_if<double>(&v)) return *d;
  if (const auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
  throw core::UsageError("axis '" + std::string(axis) + "' is a string axis", "read it with get_string");
}

const std::string& AxisPoint::get_string(std::string_view axis) const {
  const AxisValue& v = find(axis);
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  throw core::UsageError("axis '" + std::string(axis) + "' is not a string axis",
                         "read it with get_int or get_double");
}

std::string AxisPoint::name_suffix() const {
  std::string out;
  for (const auto& [name, value] : values_) out += "/" + name + ":" + to_string(value);
  return out;
}

std::vector<AxisPoint> cartesian_product(const std::vector<Axis>& axes) {
  std::vector<std::vector<std::pair<std::string, AxisValue>>> points{{}};
  for (const Axis& axis : axes) {
    std::vector<std::vector<std::pair<std::string, AxisValue>>> next;
    next.reserve(points.size() * axis.values.size());
    for (const auto& prefix : points) {
      for (const AxisValue& value : axis.values) {
        auto point = prefix;
        point.emplace_back(axis.name, value);
        next.push_back(std::move(point));
      }
    }
    points = std::move(next);
  }
  std::vector<AxisPoint> out;
  out.reserve(points.size());
  for (auto& p : points) out.emplace_back(std::move(p));
  return out;
}

}  // namespace diescope::harness
