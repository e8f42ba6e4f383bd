// Which power source the host runs on, for the cost table's estimate rules
// (docs/method.md#measurement-cost): an estimate is given only on mains power, read over the record.
#pragma once

#include <dirent.h>
#include <filesystem>
#include <optional>
#include <string>

namespace diescope::agent {

// One read of the host's power source.
enum class PowerSource { mains, battery, unreadable };

// Over a record's period: every read the same source, two sources seen, or a read that failed.
enum class PowerOverPeriod { mains, battery, changed, unreadable };

// Reads Linux's power-supply class (`dir`, normally /sys/class/power_supply):
// - no battery listed (or no such folder: a server has none) is mains: a host without a battery
//   runs on mains;
// - with a battery, a mains adapter (type "Mains") whose `online` reads 1 is mains, and adapters
//   that all read 0 are battery; with no adapter listed, the battery's `status` decides
//   ("Discharging" is battery, "Charging", "Full" and "Not charging" are mains);
// - anything else (a folder that cannot be listed, a battery with no readable adapter or status)
//   is unreadable.
PowerSource read_power_source(const std::filesystem::path& dir = "/sys/class/power_supply");

// The same reads, once per poll in the agent, with the folder kept open from one read to the next and
// listed again from its start, and each attribute read with one open and read
// (docs/agent.md#wake-ups): the figure is read_power_source's.
class PowerSourceReader {
 public:
  explicit PowerSourceReader(std::filesystem::path dir = "/sys/class/power_supply");
  ~PowerSourceReader();
  PowerSourceReader(const PowerSourceReader&) = delete;
  PowerSourceReader& operator=(const PowerSourceReader&) = delete;
  PowerSource read();

 private:
  std::filesystem::path dir_;
  DIR* handle_ = nullptr;  // dir_, once it could be opened
};

// Folds one read into the period's figure so far (nullopt: no read yet in this period).
PowerOverPeriod fold_power(std::optional<PowerOverPeriod> so_far, PowerSource read);

std::string to_string(PowerSource source);
std::string to_string(PowerOverPeriod power);

}  // namespace diescope::agent
