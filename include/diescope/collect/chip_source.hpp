// Where chip samples come from, and the live session's rules on them that every reader shares
// (docs/live-collection.md#what-was-decided-for-run): the chip source a user asks for and the one a
// GPU got, when NVML GPM stands in for PM sampling (GpmSwitch), and the checks each chip sample from
// the sampler child passes before any reader sees it (ChipSampleCheck).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "diescope/recording/records.hpp"

namespace diescope::collect {

// Where chip samples come from (docs/method.md#gpm-as-a-second-chip-source). What the user asks for
// (--source, a setting): CUPTI PM sampling, NVML GPM, or PM sampling with GPM when PM sampling cannot
// start (the counters held by another profiler, forbidden, or the chip unsupported). What a recording
// or a live GPU got is one of the two sources, never `automatic`.
enum class ChipSourceSetting { pm, gpm, automatic };
enum class ChipSource { pm, gpm };
std::string_view chip_source_setting_name(ChipSourceSetting setting);  // "pm", "gpm", "auto"
std::optional<ChipSourceSetting> chip_source_setting_from_name(std::string_view name);
std::string_view chip_source_name(ChipSource source);  // "pm", "gpm"

// When the GPM switch is decided (docs/live-collection.md#what-was-decided-for-run):
//   follow_profilers  at every collection: GPM while another profiler runs or PM sampling found the
//                     counters held lately, PM sampling again once none has been seen for a while
//                     (agent, top);
//   whole_run         once, at the start: GPM for the whole run where PM sampling could not start
//                     (run, and bench, calibrate and roofline through it).
enum class GpmSwitch { follow_profilers, whole_run };

// What the decision looks at, for one GPU.
struct GpmSwitchState {
  bool pm_possible = true;     // this GPU has PM sampling (a unit table and a sampler executable)
  bool pm_running = false;     // whole_run: PM sampling started and samples
  bool profiler_seen = false;  // follow_profilers: another profiler is running now
  bool held_lately = false;    // follow_profilers: PM sampling found the counters held lately
  bool on_gpm = false;         // follow_profilers: chip samples come from GPM now
  bool seen_recently = false;  // follow_profilers: another profiler was seen within the return time
};

// Whether chip samples should come from NVML GPM: the one place the switch is decided.
bool gpm_wanted(ChipSourceSetting setting, GpmSwitch rule, const GpmSwitchState& state);

// The checks every chip sample from the sampler child passes, for every reader
// (docs/live-collection.md#sample-checks): a sample that starts before the last one kept, or that
// carries another number of values than the sampler's metrics, is left out with a note; an
// infinite value is unreadable and becomes NaN.
class ChipSampleCheck {
 public:
  struct Refusal {
    std::string topic;  // "sampler" (out of order) or "protocol" (value count)
    std::string text;
  };
  // Checks one sample whose values are `values` (infinite ones made NaN in place), `expected` the
  // number of metrics the sampler announced. nullopt: kept, and later samples must not start before it.
  std::optional<Refusal> admit(std::vector<double>& values, recording::TimeNs start_ns, std::size_t expected);
  // A sample from elsewhere (GPM) that later samples must not start before.
  void kept(recording::TimeNs start_ns) { last_start_ns_ = start_ns; }

 private:
  recording::TimeNs last_start_ns_ = std::numeric_limits<recording::TimeNs>::min();
};

}  // namespace diescope::collect
