// Labels the user gives (`run --label KEY=VALUE`, the agent's `--labels-file`), made safe for every
// place a label goes: Prometheus, JSON, CSV, SQLite and the terminal (docs/attribution.md#user-labels).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "diescope/attribution/holder.hpp"

namespace diescope::attribution {

// Longest label value kept, in bytes; a longer one is cut at a UTF-8 boundary and the cut noted.
inline constexpr std::size_t kMaxLabelValueBytes = 256;
inline constexpr std::size_t kMaxLabels = 16;

struct LabelSet {
  std::vector<Label> labels;
  std::vector<std::string> notes;  // each value changed to make it safe, and why
};

// Parses "KEY=VALUE". Keys follow Prometheus's label grammar [a-zA-Z_][a-zA-Z0-9_]* and may not take
// a name diescope sets itself (pod, namespace, container, gpu, UUID, ...). Throws UsageError naming the
// text and the fix. The value is made safe: control characters (newlines, tabs) become spaces, and a
// value over kMaxLabelValueBytes is cut; both are noted. Quotes are kept (each output escapes them).
Label parse_label(std::string_view text, std::vector<std::string>& notes);
LabelSet parse_labels(const std::vector<std::string>& texts);
// A labels file: one KEY=VALUE a line; blank lines and lines starting with '#' skipped. Throws
// InputError naming the file and line.
LabelSet read_labels_file(const std::filesystem::path& path);

}  // namespace diescope::attribution
