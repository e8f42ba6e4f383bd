// How far a name the user typed is from a known one, for "did you mean" suggestions (command-line
// options, metric names).
#pragma once

#include <cstddef>
#include <string_view>

namespace diescope::core {

// Optimal string alignment distance: the fewest single-byte insertions, deletions, substitutions and
// swaps of two neighbouring bytes that turn `a` into `b` (a swap is one typo: "plto" is 1 from "plot").
std::size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace diescope::core
