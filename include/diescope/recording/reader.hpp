// Reads a recording file (docs/recording-format.md) as a Recording.
//
// open_recording() reads the file once: it checks the header and meta, loads the side records
// (marks, counters events, notes, clock jumps, the end) and checks every line's kind and times.
// Each high-rate stream (chip samples, GPU-Util, clocks, throttle reasons, power limits, engines,
// processes) is then its own cursor over the file with its own read buffer, skipping the other
// kinds' lines, so memory stays the same whatever the recording's length. A cursor checks its
// records' fields as it reads them and throws InputError (path:line, cause, fix) on a bad one.
//
// A last line without its newline (the writer was cut off) is ignored and side().truncated is set;
// everything before it is read. Lines appended after open_recording() returned are not read.
#pragma once

#include <filesystem>
#include <memory>

#include "diescope/recording/recording.hpp"

namespace diescope::recording {

// Throws InputError for a missing, unreadable, empty or malformed file, or a directory.
std::unique_ptr<Recording> open_recording(const std::filesystem::path& path);

}  // namespace diescope::recording
