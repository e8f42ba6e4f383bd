// The Nsight Compute backend: the metrics asked for, the raw-page export read back into rows
// (docs/roofline.md#nsight-compute), and the calibration's ceilings put beside the counter peaks.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "diescope/roofline/table.hpp"

namespace diescope::roofline {

// Every metric the table reads, in the order ncu is asked for them (docs/roofline.md#metrics).
const std::vector<std::string>& ncu_metrics();

// `ncu --import R.ncu-rep --csv --page raw --print-units base`: a header row, a units row, one row
// per launch. Lines before the header (ncu's ==PROF== notes) are skipped.
struct RawExport {
  std::vector<std::string> header;
  std::vector<std::string> units;
  std::vector<std::vector<std::string>> rows;
  std::vector<long> row_lines;  // each row's 1-based line in the file, for messages
};
// Throws InputError naming `path`:line for a malformed or truncated file.
RawExport parse_raw_export(std::string_view text, const std::string& path);

// One row per launch, the work in FLOPs and bytes (docs/roofline.md#flops); `executable` names the
// target. Throws InputError for a missing required column or a number that is not one.
std::vector<Row> rows_from_export(const RawExport& raw, const std::string& executable,
                                  const std::string& path);

// The metrics asked for that have no column in the export: ncu leaves out a metric it does not know
// without failing (docs/roofline.md#bad-input).
std::vector<std::string> missing_metrics(const RawExport& raw, const std::vector<std::string>& asked);

// "3584  \"<default domain>:forward:none:...\"" (push/pop column) and " \"2:<default domain>:backward:...\""
// (start/end column) -> the innermost range's name ("forward", "backward"); empty when none.
std::string push_pop_region(std::string_view cell);
std::string start_end_region(std::string_view cell);

// The ceilings a calibration file gives (docs/roofline.md#ceilings).
struct MeasuredCeilings {
  std::string source;  // the file name, or why there is none
  bool found = false;
  // The calibration's percent of each counter peak at full load, and the SM clock it ran at.
  std::optional<double> fp32_pct, fp64_pct, tensor_pct;
  double fp32_mhz = 0, fp64_mhz = 0, tensor_mhz = 0;
  std::optional<double> dram_bytes_per_s;  // STREAM
  std::optional<double> l2_bytes_per_s;    // the cache sweep's rate, when it found one
};
// The lookup `run` uses (calibrate/lookup.hpp) for this GPU model and driver, over each unit table.
// `explicit_path`: --calibration; otherwise the default folder.
MeasuredCeilings find_measured_ceilings(const std::string& gpu_model, const std::string& driver,
                                        const std::optional<std::filesystem::path>& explicit_path);
// Reads the ceilings of one calibration file's JSON text (for the lookup's chosen file and tests).
MeasuredCeilings ceilings_from_calibration_json(std::string_view text, const std::string& name);
// Fills each row's measured ceilings: a percent x that row's counter peak per cycle x the
// calibration's clock; STREAM and the cache rate as they are.
void apply_ceilings(std::vector<Row>& rows, const MeasuredCeilings& c);

}  // namespace diescope::roofline
