// docs/report.md: a recording to its report, for run, report and bench.
#include "diescope/report/recording_report.hpp"

#include <ostream>
#include <system_error>

#include "diescope/core/error.hpp"
#include "diescope/report/renderer.hpp"
#include "diescope/report/report.hpp"

namespace diescope::report {

namespace fs = std::filesystem;

namespace {

void create_report_folder(const fs::path& folder) {
  std::error_code ec;
  fs::create_directories(folder, ec);
  if (ec)
    throw core::Error("cannot create the report folder " + folder.string() + ": " + ec.message(),
                      "choose another --output folder", core::kExitInput);
}

}  // namespace

RecordingReport analyse_recording(const fs::path& path, analysis::WindowMode window,
                                  const CalibrationLookup& calibration) {
  RecordingReport r;
  r.source = recording::open_recording(path);
  analysis::AnalysisOptions options;
  options.window = window;
  r.analysis = analyze(*r.source, options);
  ReportContext context{path.string(), r.source->side().end};
  if (calibration) context.calibration = calibration(r.analysis);
  r.report = build_report(r.analysis, context);
  return r;
}

void write_recording_report(const RecordingReport& report, const fs::path& folder, std::ostream* headline) {
  create_report_folder(folder);
  MultiRenderer renderers;
  if (headline) renderers.add(std::make_unique<TerminalRenderer>(*headline));
  renderers.add(std::make_unique<JsonRenderer>(folder / "report.json"));
  renderers.add(std::make_unique<CsvRenderer>(folder / "samples.csv"));
  renderers.render(ReportInput{report.report, report.source.get(), &report.analysis});
}

GpuFigures report_run_recording(const fs::path& recording, int gpu_index, analysis::WindowMode window,
                                bool several, const CalibrationLookup& calibration, std::ostream& out,
                                const std::optional<RunHolders>& holders) {
  RecordingReport report = analyse_recording(recording, window, calibration);
  if (holders) report.report["holders"] = holders->block;
  const fs::path folder = fs::path(recording.string() + ".report");
  // The folder first: one that cannot be made stops the run's report before its headline.
  create_report_folder(folder);
  if (several) out << "\nGPU " << gpu_index << "\n";
  write_recording_report(report, folder, &out);
  if (holders) out << holders->line;
  out << "recording " << recording.string() << ", report " << (folder / "report.json").string() << "\n";
  return gpu_figures(report.report, (folder / "report.json").string());
}

}  // namespace diescope::report
