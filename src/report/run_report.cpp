#include "diescope/report/run_report.hpp"

#include <ostream>
#include <string>

#include "diescope/core/atomic_file.hpp"
#include "diescope/report/gpus_summary.hpp"

namespace diescope::report {

void report_run(const std::vector<RunRecordingRef>& recordings, const RunReportSettings& settings,
                std::ostream& out) {
  const bool several = recordings.size() > 1;
  std::vector<GpuFigures> figures;
  figures.reserve(recordings.size());
  for (const auto& rec : recordings)
    figures.push_back(report_run_recording(rec.path, rec.index, settings.window, several,
                                           settings.calibration, out,
                                           settings.holders ? settings.holders(rec.index) : std::nullopt));
  // Several GPUs: side by side, the least used, the gap between them, which were busy
  // (docs/method.md#several-gpus); gpus.json beside the recordings.
  if (!several) return;
  const GpusSummary summary = summarise_gpus(std::move(figures));
  out << gpus_summary_text(summary);
  const std::filesystem::path file = settings.output_dir / "gpus.json";
  core::write_file_atomically(file, gpus_summary_json(summary).dump(2) + "\n");
  out << "summary " << file.string() << "\n";
}

}  // namespace diescope::report
