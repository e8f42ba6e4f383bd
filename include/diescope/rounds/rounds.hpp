// One bench round, as the statistics see it: whether it is kept, and its figures over the steady
// window. A round is left out (and named, with the reason) when its window went missing or its
// chip coverage over the window is partial (docs/method.md#chip-coverage-and-partial-results and
// docs/method.md#the-steady-window), so
// whole-run numbers never average in with steady states and partial numbers never with whole ones.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "diescope/analysis/result.hpp"

namespace diescope::rounds {

// One number a round gives for the statistics. NaN when the round could not compute it; the
// statistics then count it as missing in that round.
struct Figure {
  std::string key;    // "gpu_util_pct", "unit.dram", "rate.dram_bytes", ...
  std::string label;  // "GPU-Util", "DRAM", "DRAM bytes", ...
  std::string unit;   // "%", "points", "MHz", "s", "bytes/s", ...
  std::string group;  // "headline", "unit", "diagnostic", "rate", "clock", "window"
  double value = analysis::kNaN;
};

struct Verdict {
  bool kept = false;
  std::string reason;  // why it was left out; empty when kept
};

// Kept when the steady window was found and its chip coverage passed the gate.
Verdict judge_round(const analysis::Analysis& analysis);

// The figures of a span, in a fixed order: the headline (GPU-Util, DIE-Util, gap, stranded, its
// idle and active parts), the window's length and chip coverage, the SM and memory clocks' means,
// then every unit, diagnostic and counted rate in the recording's column order.
//
// Gap is GPU-Util - DIE-Util at full precision. Stranded is 100 - DIE-Util. Idle and active follow
// the headline's split rule at full precision: within the noise floor active is 0 and idle takes
// all of stranded; above it idle is 100 - GPU-Util and active the gap; below it (a real negative
// gap) or without a gap both are NaN.
std::vector<Figure> figures_of(const analysis::Analysis& analysis, const analysis::SpanResults& span);

// The limiting unit's label in a span, or nullopt when there is none.
std::optional<std::string> limiting_label(const analysis::Analysis& analysis,
                                          const analysis::SpanResults& span);

}  // namespace diescope::rounds
