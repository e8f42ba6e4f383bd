// The host's power source (docs/method.md#measurement-cost), read from Linux's power-supply class.
#include "diescope/agent/power_source.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace diescope::agent {

namespace {

// The first line of a sysfs attribute (`name` under `dir_fd`), trailing spaces and '\r' dropped;
// nullopt when it cannot be opened or read, or is empty.
std::optional<std::string> first_line(int dir_fd, const std::string& name) {
  const int fd = ::openat(dir_fd, name.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::array<char, 4096> chunk{};
  const ssize_t got = ::read(fd, chunk.data(), chunk.size());
  ::close(fd);
  if (got <= 0) return std::nullopt;
  std::string line(chunk.data(), static_cast<std::size_t>(got));
  line.resize(std::min(line.find('\n'), line.size()));
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

}  // namespace

PowerSource read_power_source(const std::filesystem::path& dir) {
  return PowerSourceReader(dir).read();
}

PowerSourceReader::PowerSourceReader(std::filesystem::path dir) : dir_(std::move(dir)) {}

PowerSourceReader::~PowerSourceReader() {
  if (handle_ != nullptr) ::closedir(handle_);
}

PowerSource PowerSourceReader::read() {
  if (handle_ == nullptr) {
    handle_ = ::opendir(dir_.c_str());
    if (handle_ == nullptr) {
      // No such folder (a server lists no supply at all) is mains; one that is there but cannot be
      // listed is unreadable.
      struct stat st {};
      const bool absent = ::stat(dir_.c_str(), &st) != 0 && (errno == ENOENT || errno == ENOTDIR);
      return absent ? PowerSource::mains : PowerSource::unreadable;
    }
  } else {
    ::rewinddir(handle_);
  }
  const int dir_fd = ::dirfd(handle_);
  bool battery = false, adapter_online = false, adapter_offline = false, adapter_unreadable = false;
  std::optional<std::string> battery_status;
  while (const dirent* entry = ::readdir(handle_)) {
    const std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    const std::optional<std::string> type = first_line(dir_fd, name + "/type");
    if (!type) continue;  // not a power supply (or unreadable): says nothing about the source
    if (*type == "Battery") {
      battery = true;
      if (auto status = first_line(dir_fd, name + "/status")) battery_status = status;
    } else if (*type == "Mains") {
      const std::optional<std::string> online = first_line(dir_fd, name + "/online");
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
