#include "diescope/metrics/descriptor.hpp"

#include <charconv>

namespace diescope::metrics {

std::string_view to_string(Unit unit) {
  switch (unit) {
    case Unit::count:
      return "count";
    case Unit::bytes:
      return "bytes";
    case Unit::bytes_per_second:
      return "bytes_per_second";
    case Unit::pct:
      return "pct";
    case Unit::ratio:
      return "ratio";
    case Unit::hz:
      return "hz";
    case Unit::cycles:
      return "cycles";
    case Unit::requests:
      return "requests";
    case Unit::mhz:
      return "mhz";
    case Unit::watts:
      return "watts";
  }
  return "?";
}

std::optional<Unit> rate_unit(Unit unit) {
  switch (unit) {
    case Unit::bytes:
      return Unit::bytes_per_second;
    case Unit::count:
    case Unit::cycles:
      return Unit::hz;
    default:
      return std::nullopt;  // already a rate, a level (requests in flight, clocks) or a percent
  }
}

std::string_view to_string(Scope::Kind kind) {
  switch (kind) {
    case Scope::Kind::system:
      return "system";
    case Scope::Kind::device:
      return "device";
    case Scope::Kind::process:
      return "process";
    case Scope::Kind::gpu:
      return "gpu";
    case Scope::Kind::cpu:
      return "cpu";
  }
  return "?";
}

std::string Scope::label() const {
  switch (kind) {
    case Kind::system:
      return "system";
    case Kind::device:
      return "device " + device;
    case Kind::process:
      return "pid " + std::to_string(id);
    case Kind::gpu:
      return "gpu " + std::to_string(id);
    case Kind::cpu:
      return "cpu " + std::to_string(id);
  }
  return "?";
}

std::string scope_word(const Scope& scope) {
  switch (scope.kind) {
    case Scope::Kind::system:
      return "system";
    case Scope::Kind::device:
      return "device:" + scope.device;
    case Scope::Kind::process:
    case Scope::Kind::gpu:
    case Scope::Kind::cpu:
      return std::string(to_string(scope.kind)) + ":" + std::to_string(scope.id);
  }
  return "?";
}

std::optional<Scope> parse_scope(std::string_view word) {
  if (word == "system") return Scope::system();
  const std::size_t colon = word.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  const std::string_view kind = word.substr(0, colon);
  const std::string_view rest = word.substr(colon + 1);
  if (rest.empty()) return std::nullopt;
  if (kind == "device") {
    for (char c : rest)
      if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) return std::nullopt;
    return Scope::block_device(std::string(rest));
  }
  std::int64_t id = -1;
  const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), id);
  if (ec != std::errc{} || end != rest.data() + rest.size() || id < 0) return std::nullopt;
  if (kind == "process") return Scope::process(id);
  if (kind == "gpu") return Scope::gpu(id);
  if (kind == "cpu") return Scope::cpu(id);
  return std::nullopt;
}

std::optional<Unit> parse_unit(std::string_view word) {
  for (Unit u : {Unit::count, Unit::bytes, Unit::bytes_per_second, Unit::pct, Unit::ratio, Unit::hz,
                 Unit::cycles, Unit::requests, Unit::mhz, Unit::watts})
    if (to_string(u) == word) return u;
  return std::nullopt;
}

std::optional<MetricType> parse_metric_type(std::string_view word) {
  for (MetricType t : {MetricType::counter, MetricType::ratio, MetricType::throughput})
    if (to_string(t) == word) return t;
  return std::nullopt;
}

}  // namespace diescope::metrics
