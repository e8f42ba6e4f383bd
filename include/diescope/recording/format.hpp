// Names the recording format shares with its users (reports list throttle reasons by these names).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "diescope/recording/records.hpp"

namespace diescope::recording {

// The file extension diescope gives recordings.
inline constexpr std::string_view kRecordingExtension = ".dsrec";
// The first word of a recording's first line; the format version follows it.
inline constexpr std::string_view kRecordingMagic = "diescope-recording";

// The HOW text of an end record (docs/recording-format.md, "Records"): "exited", "signal SIGINT"
// (the signal's name as signal_name() gives it), "period end", empty when unstated. Any other text
// parses as RunEnding::Way::other and prints back as it was: run_ending_text(parse_run_ending(t))
// == t for every t.
RunEnding parse_run_ending(std::string_view text);
std::string run_ending_text(const RunEnding& ending);

// The ROLE word of a holder record (docs/recording-format.md#gpu-holders): "command", "diescope",
// "other", "gone"; and back, nullopt for any other word.
std::string_view holder_role_text(HolderRole role);
std::optional<HolderRole> holder_role_from_text(std::string_view word);

// A column's words in the meta line (docs/recording-format.md#the-meta-line): its recipe's combine,
// its source and its flags. Every JSON that repeats a column (report.json, agent records,
// docs/units.json) writes these same words.
std::string_view combine_text(UnitRecipe::Combine combine);  // "counter", "mean"
std::string_view unit_source_text(UnitSource source);        // "chip", "nvml_engine", "gpm"
std::string_view unit_flag_text(UnitFlag flag);              // "stand_in_counter", "different_measure"

// The name of one NVML clock-event reason bit (records.hpp ThrottleBit), e.g. "sw_power_cap";
// empty for a bit without a name.
std::string_view throttle_reason_name(std::uint64_t bit);
// The bit of a reason name, nullopt for an unknown name.
std::optional<std::uint64_t> throttle_reason_bit(std::string_view name);
// Every reason in `mask`, lowest bit first; bits without a name appear as one "0x..." entry at the end.
std::vector<std::string> throttle_reason_names(std::uint64_t mask);

// The FLOPs the measured program said it did (docs/recording-format.md#flops-notes): a `note` whose
// topic is kFlopsNoteTopic and whose text is "FLOPS SCOPE", FLOPS a number above 0 and SCOPE
// `window` (the steady window's work) or `run` (the whole run's).
inline constexpr std::string_view kFlopsNoteTopic = "flops";
enum class FlopsScope { window, run };
struct FlopsNote {
  double flops = 0;
  FlopsScope scope = FlopsScope::window;
};
std::string_view flops_scope_text(FlopsScope scope);  // "window", "run"
std::string flops_note_text(const FlopsNote& note);   // "1.5e+15 window"
// nullopt when `text` is not a flops note's text.
std::optional<FlopsNote> parse_flops_note(std::string_view text);

}  // namespace diescope::recording
