// What `diescope run` writes after its command ended (docs/report.md): each recording's report and
// headline, and beside several GPUs their side-by-side summary and gpus.json
// (docs/method.md#several-gpus).
#pragma once

#include <filesystem>
#include <functional>
#include <iosfwd>
#include <optional>
#include <vector>

#include "diescope/analysis/analyze.hpp"
#include "diescope/report/recording_report.hpp"

namespace diescope::report {

struct RunRecordingRef {
  int index = -1;  // the GPU's NVML index
  std::filesystem::path path;
};

struct RunReportSettings {
  analysis::WindowMode window = analysis::WindowMode::none;
  CalibrationLookup calibration;
  // Who held GPU `index` during the run (attribution); empty: no holders block.
  std::function<std::optional<RunHolders>(int index)> holders;
  std::filesystem::path output_dir;  // gpus.json goes here when there are several GPUs
};

// Reports every recording of a run into `out` (headlines) and beside each recording (files).
void report_run(const std::vector<RunRecordingRef>& recordings, const RunReportSettings& settings,
                std::ostream& out);

}  // namespace diescope::report
