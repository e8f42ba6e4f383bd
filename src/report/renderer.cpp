#include "diescope/report/renderer.hpp"

#include "diescope/core/atomic_file.hpp"
#include "diescope/core/error.hpp"
#include "diescope/report/report.hpp"
#include "diescope/report/samples_csv.hpp"

namespace diescope {

std::string MultiRenderer::name() const {
  std::string names;
  for (const auto& r : renderers_) names += (names.empty() ? "" : "+") + r->name();
  return names;
}

bool MultiRenderer::needs_recording() const {
  for (const auto& r : renderers_)
    if (r->needs_recording()) return true;
  return false;
}

void MultiRenderer::render(const ReportInput& input) {
  // Check every renderer can run before any writes, so a bad combination leaves no half output.
  if (!input.recording) {
    for (const auto& r : renderers_)
      if (r->needs_recording())
        throw UsageError("the " + r->name() + " output shows each sample, and a report.json holds none",
                         "run `diescope report` on the recording itself for that output");
  }
  for (const auto& r : renderers_) r->render(input);
}

void JsonRenderer::render(const ReportInput& input) { write_file_atomically(path_, dump_report(input.report)); }

void CsvRenderer::render(const ReportInput& input) {
  if (!input.recording)
    throw UsageError("samples.csv shows each sample, and a report.json holds none",
                     "run `diescope report` on the recording itself");
  AtomicFileWriter writer(path_);
  write_samples_csv(*input.recording, input.analysis, [&](std::string_view piece) { writer.write(piece); });
  writer.commit();
}

}  // namespace diescope
