// What a value carries in the metric model (docs/metrics.md): its name, type, unit, peak and scope.
// With it, one post-processing path (postprocess.hpp) can serve chip counters, NVML readings and host
// probes alike. No recorded stream carries one yet (docs/metrics.md#what-it-is-for-today).
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "diescope/metrics/name.hpp"

namespace diescope::metrics {

enum class Unit {
  count,  // events, instructions
  bytes,
  bytes_per_second,
  pct,    // percent: of a peak, or of one CPU core for proc__cycles_active
  ratio,  // dimensionless fraction
  hz,     // events per second
  cycles,
  requests,  // block-device requests in flight
  mhz,       // clock frequency
  watts,
};

std::string_view to_string(Unit unit);
// The unit of `unit` per second (bytes -> bytes_per_second, count and cycles -> hz), if any.
std::optional<Unit> rate_unit(Unit unit);

// Whose value it is. Scope lives outside the name: two series that differ only in PID or device
// share a name and differ here.
struct Scope {
  enum class Kind { system, device, process, gpu, cpu };
  Kind kind = Kind::system;
  std::string device;    // Kind::device: block device, "nvme0n1"
  std::int64_t id = -1;  // Kind::process: pid; Kind::gpu: index; Kind::cpu: logical CPU number

  static Scope system() { return {}; }
  static Scope block_device(std::string name) { return {Kind::device, std::move(name), -1}; }
  static Scope process(std::int64_t pid) { return {Kind::process, {}, pid}; }
  static Scope gpu(std::int64_t index) { return {Kind::gpu, {}, index}; }
  static Scope cpu(std::int64_t index) { return {Kind::cpu, {}, index}; }

  std::string label() const;  // "system", "device nvme0n1", "pid 4242", "gpu 0", "cpu 3"
  auto operator<=>(const Scope&) const = default;
  bool operator==(const Scope&) const = default;
};

std::string_view to_string(Scope::Kind kind);

// Scope as one word, as recordings store it (docs/recording-format.md#host-streams): "system",
// "device:nvme0n1", "process:4242", "gpu:0", "cpu:3"; parse_scope is its inverse (nullopt for
// anything else: an unknown kind, a missing or negative number, an empty or spaced device name).
std::string scope_word(const Scope& scope);
std::optional<Scope> parse_scope(std::string_view word);

// The inverses of to_string(Unit) and to_string(MetricType); nullopt for an unknown word.
std::optional<Unit> parse_unit(std::string_view word);
std::optional<MetricType> parse_metric_type(std::string_view word);

struct MetricDescriptor {
  MetricName name;  // name.full() is the fully qualified name
  MetricType type = MetricType::counter;
  Unit unit = Unit::count;
  std::optional<double> peak;  // in `unit`; absent when unknown, with the reason beside it
  std::string no_peak_reason;  // why there is no peak (empty when there is one)
  Scope scope;

  std::string full_name() const { return name.full(); }
  const std::string& entity() const { return name.entity; }
  const std::string& counter() const { return name.counter; }
  const std::optional<Rollup>& rollup() const { return name.rollup; }
  const std::string& submetric() const { return name.submetric; }
};

}  // namespace diescope::metrics
