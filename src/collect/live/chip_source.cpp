#include "diescope/collect/chip_source.hpp"

#include <cmath>

#include <fmt/format.h>

namespace diescope::collect {

std::string_view chip_source_setting_name(ChipSourceSetting setting) {
  switch (setting) {
    case ChipSourceSetting::pm:
      return "pm";
    case ChipSourceSetting::gpm:
      return "gpm";
    case ChipSourceSetting::automatic:
      return "auto";
  }
  return "auto";
}

std::optional<ChipSourceSetting> chip_source_setting_from_name(std::string_view name) {
  for (ChipSourceSetting setting :
       {ChipSourceSetting::pm, ChipSourceSetting::gpm, ChipSourceSetting::automatic})
    if (chip_source_setting_name(setting) == name) return setting;
  return std::nullopt;
}

std::string_view chip_source_name(ChipSource source) {
  switch (source) {
    case ChipSource::pm:
      return "pm";
    case ChipSource::gpm:
      return "gpm";
  }
  return "pm";
}

// docs/live-collection.md#what-was-decided-for-run
bool gpm_wanted(ChipSourceSetting setting, GpmSwitch rule, const GpmSwitchState& state) {
  switch (setting) {
    case ChipSourceSetting::pm:
      return false;
    case ChipSourceSetting::gpm:
      return true;
    case ChipSourceSetting::automatic:
      break;
  }
  if (rule == GpmSwitch::whole_run) return !state.pm_running;
  if (!state.pm_possible) return true;  // no PM sampling here: GPM if it can
  if (state.profiler_seen || state.held_lately) return true;
  // Stay on GPM until no profiler has been seen for a while (ncu starts one process per run).
  return state.on_gpm && state.seen_recently;
}

// docs/live-collection.md#sample-checks
std::optional<ChipSampleCheck::Refusal> ChipSampleCheck::admit(std::vector<double>& values,
                                                               recording::TimeNs start_ns,
                                                               std::size_t expected) {
  if (start_ns < last_start_ns_)
    return Refusal{"sampler",
                   fmt::format("a chip sample out of time order was left out (start {} ns)", start_ns)};
  for (double& v : values)
    if (std::isinf(v)) v = std::numeric_limits<double>::quiet_NaN();  // unreadable, never infinite
  if (values.size() != expected)
    return Refusal{"protocol", fmt::format("a chip sample with {} values where {} were expected was left out",
                                           values.size(), expected)};
  last_start_ns_ = start_ns;
  return std::nullopt;
}

}  // namespace diescope::collect
