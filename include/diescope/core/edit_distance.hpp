// How far a name the user typed is from a known one, for "did you mean" suggestions (command-line
// options, metric names).
#pragma once

#include <cstddef>
#include <string_view>

namespace diescope::core {

// Levenshtein distance: the fewest single-byte insertions, deletions and substitutions that turn
// `a` into `b`.
std::size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace diescope::core
