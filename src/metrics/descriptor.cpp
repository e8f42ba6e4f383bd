#include "diescope/metrics/descriptor.hpp"

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
  }
  return "?";
}

}  // namespace diescope::metrics
