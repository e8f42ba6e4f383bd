// One recording to its report, as `run`, `report` and `bench` make it (docs/report.md): the recording
// analysed, the report built with the calibration that fits it, and the files written into the
// report's folder.
#pragma once

#include <filesystem>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "diescope/analysis/analyze.hpp"
#include "diescope/recording/reader.hpp"
#include "diescope/report/gpus_summary.hpp"

namespace diescope::report {

// The report's `calibration` block for an analysis (calibrate's lookup:
// calibration_block_json(find_calibration(meta, method, path))). Empty: no calibration is looked up.
using CalibrationLookup = std::function<nlohmann::json(const analysis::Analysis&)>;

struct RecordingReport {
  std::unique_ptr<recording::Recording> source;  // kept open: the sample renderers read it again
  analysis::Analysis analysis;
  nlohmann::json report;
};

// Opens and analyses a recording (over its steady window when `window` is markers and it has one) and builds
// its report. Throws what open_recording throws for a bad file.
RecordingReport analyse_recording(const std::filesystem::path& path, analysis::WindowMode window,
                                  const CalibrationLookup& calibration = {});

class MultiRenderer;  // renderer.hpp

// analyse_recording(), then `renderers` over its report, in one pass over the recording
// (docs/report.md#one-pass): the renderers that show each sample see each one as the analysis reads
// it, having begun from the run's bounds before the first; the others render once the report is
// built, before those finish. What each writes is what MultiRenderer::render() writes after
// analyse_recording(), and in the same order: a renderer that fails to begin or to take a sample
// throws once the others have rendered.
RecordingReport analyse_and_render(const std::filesystem::path& path, analysis::WindowMode window,
                                   const CalibrationLookup& calibration, MultiRenderer& renderers);

// Writes report.json and samples.csv into `folder` (created when missing) and, when `headline` is
// given, the terminal headline there first.
void write_recording_report(const RecordingReport& report, const std::filesystem::path& folder,
                            std::ostream* headline = nullptr);

// What `run` adds beside a recording's own report: who held the GPU (docs/report.md#holders), as the
// report's `holders` block and as a line under the headline.
struct RunHolders {
  nlohmann::json block;
  std::string line;
};

// One GPU's recording of `diescope run`: analysed, its report written into <recording>.report/, the
// headline printed to `out` (under "GPU N" when the run has `several`), then where both are. Returns
// the figures the summary of several GPUs compares (docs/method.md#several-gpus).
GpuFigures report_run_recording(const std::filesystem::path& recording, int gpu_index,
                                analysis::WindowMode window, bool several,
                                const CalibrationLookup& calibration, std::ostream& out,
                                const std::optional<RunHolders>& holders = std::nullopt);

}  // namespace diescope::report
