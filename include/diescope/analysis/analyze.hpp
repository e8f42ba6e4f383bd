// The method's analysis (docs/method.md): from a recording to the figures a report prints.
// It never talks to a GPU; it reads a RecordSource in one streaming pass per record kind, in
// memory that does not grow with the recording's length.
#pragma once

#include <span>

#include "diescope/analysis/result.hpp"
#include "diescope/recording/source.hpp"

namespace diescope {

struct AnalysisOptions {
  bool use_window = true;  // summarise the steady window between markers when there is one
};

Analysis analyze(const RecordSource& source, const AnalysisOptions& options = {});

// DIE-Util of one sample: the busiest available unit, as read (not clamped). NaN when no unit is
// available. `engines` holds the engine values matched to this sample (may be empty).
double die_util_of_sample(std::span<const double> units, std::span<const double> engines);

}  // namespace diescope
