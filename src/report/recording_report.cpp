// docs/report.md: a recording to its report, for run, report and bench.
#include "diescope/report/recording_report.hpp"

#include <exception>
#include <ostream>
#include <system_error>

#include "diescope/core/error.hpp"
#include "diescope/report/renderer.hpp"
#include "diescope/report/report.hpp"
#include "diescope/report/samples_csv.hpp"

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

RecordingReport analyse_and_render(const fs::path& path, analysis::WindowMode window,
                                   const CalibrationLookup& calibration, MultiRenderer& renderers) {
  RecordingReport r;
  r.source = recording::open_recording(path);
  const recording::Recording& source = *r.source;
  ReportContext context{path.string(), source.side().end};
  const std::vector<SampleRenderer*> walkers = renderers.sample_renderers();
  analysis::AnalysisOptions options;
  options.window = window;
  // What the renderers that show each sample begin from: the report of the analysis as it stands
  // before the first sample (the run's bounds, the GPU, the source).
  analysis::Analysis bounds;
  nlohmann::json bounds_report;
  std::exception_ptr walk_failed;
  if (!walkers.empty()) {
    options.before_samples = [&](const analysis::Analysis& before) {
      bounds = before;
      bounds_report = build_report(bounds, context);
      try {
        for (SampleRenderer* w : walkers) w->begin(ReportInput{bounds_report, &source, &bounds});
      } catch (...) {
        walk_failed = std::current_exception();
      }
    };
    options.observe_sample = sample_walker(source, true, [&](const WalkedSample& sample) {
      if (walk_failed) return;
      try {
        for (SampleRenderer* w : walkers) w->sample(sample);
      } catch (...) {
        walk_failed = std::current_exception();
      }
    });
  }
  r.analysis = analyze(source, options);
  if (calibration) context.calibration = calibration(r.analysis);
  r.report = build_report(r.analysis, context);
  const ReportInput input{r.report, r.source.get(), &r.analysis};
  renderers.render_documents(input);
  if (walk_failed) std::rethrow_exception(walk_failed);
  for (SampleRenderer* w : walkers) w->finish(input);
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
