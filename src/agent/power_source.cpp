// The host's power source (docs/method.md#measurement-cost), read from Linux's power-supply class.
#include "diescope/agent/power_source.hpp"

#include <fstream>
#include <system_error>

namespace diescope::agent {

namespace {

// The first line of a sysfs attribute; nullopt when it cannot be read.
std::optional<std::string> first_line(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

}  // namespace

PowerSource read_power_source(const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) return ec ? PowerSource::unreadable : PowerSource::mains;
  bool battery = false, adapter_online = false, adapter_offline = false, adapter_unreadable = false;
  std::optional<std::string> battery_status;
  std::filesystem::directory_iterator it(dir, ec);
  if (ec) return PowerSource::unreadable;
  for (const auto& entry : it) {
    const std::optional<std::string> type = first_line(entry.path() / "type");
    if (!type) continue;  // not a power supply (or unreadable): says nothing about the source
    if (*type == "Battery") {
      battery = true;
      if (auto status = first_line(entry.path() / "status")) battery_status = status;
    } else if (*type == "Mains") {
      const std::optional<std::string> online = first_line(entry.path() / "online");
      const std::string state = online.value_or("");
      adapter_online = adapter_online || state == "1";
      adapter_offline = adapter_offline || state == "0";
      adapter_unreadable = adapter_unreadable || (state != "1" && state != "0");
    }
  }
  if (!battery) return PowerSource::mains;
  if (adapter_online) return PowerSource::mains;
  if (adapter_offline && !adapter_unreadable) return PowerSource::battery;
  if (adapter_unreadable) return PowerSource::unreadable;
  if (battery_status) {
    if (*battery_status == "Discharging") return PowerSource::battery;
    if (*battery_status == "Charging" || *battery_status == "Full" || *battery_status == "Not charging")
      return PowerSource::mains;
  }
  return PowerSource::unreadable;
}

PowerOverPeriod fold_power(std::optional<PowerOverPeriod> so_far, PowerSource read) {
  const PowerOverPeriod now = read == PowerSource::mains     ? PowerOverPeriod::mains
                              : read == PowerSource::battery ? PowerOverPeriod::battery
                                                             : PowerOverPeriod::unreadable;
  if (!so_far) return now;
  if (*so_far == PowerOverPeriod::unreadable || now == PowerOverPeriod::unreadable)
    return PowerOverPeriod::unreadable;
  if (*so_far == PowerOverPeriod::changed || *so_far != now) return PowerOverPeriod::changed;
  return now;
}

std::string to_string(PowerSource source) {
  switch (source) {
    case PowerSource::mains:
      return "mains";
    case PowerSource::battery:
      return "battery";
    case PowerSource::unreadable:
      return "unreadable";
  }
  return {};
}

std::string to_string(PowerOverPeriod power) {
  switch (power) {
    case PowerOverPeriod::mains:
      return "mains";
    case PowerOverPeriod::battery:
      return "battery";
    case PowerOverPeriod::changed:
      return "changed";
    case PowerOverPeriod::unreadable:
      return "unreadable";
  }
  return {};
}

}  // namespace diescope::agent
