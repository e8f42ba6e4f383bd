// The report: one JSON document (docs/report.md, docs/report.schema.json) built from an Analysis.
// Every renderer prints from this document, so a report re-rendered from its report.json reads
// exactly as the one printed when it was made.
//
// Invariant: a figure that could not be computed is JSON null, and the object that holds it also
// holds "<name>_reason" (or a plain "reason") saying why. Never 0, never NaN in the file.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "diescope/analysis/result.hpp"
#include "diescope/recording/records.hpp"

namespace diescope::report {

// What the report needs beyond the analysis itself.
struct ReportContext {
  std::string recording;                     // where the analysis came from: a path, or "<memory>"
  std::optional<recording::RunEnd> run_end;  // how the measured run ended, when the recording says
  // The `calibration` object, as calibrate's lookup builds it (calibrate/lookup.hpp:
  // calibration_block_json(find_calibration(...))). Unset: "unvalidated", no calibration looked up.
  std::optional<nlohmann::json> calibration = std::nullopt;
};

nlohmann::json build_report(const analysis::Analysis& analysis, const ReportContext& context = {});

// The file form: two-space indented, newline at the end.
std::string dump_report(const nlohmann::json& report);

// Reads a report.json to re-render it. Throws InputError naming the file (and line, for syntax
// errors) when it is missing, not JSON, or not a report of this schema version.
nlohmann::json load_report(const std::filesystem::path& path);

// One decimal, as every screen shows figures ("84.9"); "n/a" for null.
std::string format_tenths(int tenths);

}  // namespace diescope::report
