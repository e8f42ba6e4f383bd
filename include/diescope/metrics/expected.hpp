// A value or the reason there is none. Metric names come from users, recordings and unit tables;
// a bad one must be refused with a reason that says what is wrong and where, never accepted quietly.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>

namespace diescope::metrics {

struct MetricError {
  std::string reason;  // whole sentence: what is wrong, in which part, at which column
};

template <class T>
class Expected {
 public:
  Expected(T value) : state_(std::move(value)) {}            // NOLINT: implicit on purpose
  Expected(MetricError error) : state_(std::move(error)) {}  // NOLINT
  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }
  // Throws std::logic_error naming the reason when there is no value: reading it is a bug.
  const T& value() const {
    if (!ok()) throw std::logic_error("no value: " + error().reason);
    return std::get<T>(state_);
  }
  const T& operator*() const { return value(); }
  const T* operator->() const { return &value(); }
  const MetricError& error() const { return std::get<MetricError>(state_); }
  const std::string& reason() const { return error().reason; }

 private:
  std::variant<T, MetricError> state_;
};

}  // namespace diescope::metrics
