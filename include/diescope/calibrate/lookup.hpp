// How a report finds its calibration (docs/calibration.md#how-a-report-finds-its-calibration).
// The report's `calibration` block comes from here:
//
//   CalibrationBlock block = find_calibration(meta, method, calibration_flag);
//   context.calibration = calibration_block_json(block);   // ReportContext, report/report.hpp
//
// Rules:
//  - Where: `--calibration PATH` (a file or a folder; a path that does not exist is an error), else
//    default_calibration_dir(). Only regular .json files up to 16 MB are read.
//  - What fits: schema 3 or later, the report's GPU model and driver, a method from
//    kOldestFittingCalibrationMethod to the report's (an older one's reason carries a caveat), and
//    every unit the file lists is a unit of the report read the same way (same recipe).
//  - Which: a full calibration before a quick setup check, then the newest by the date inside.
//  - None fits: in a folder, bad or other files are passed over and the reason is "no calibration
//    file for this GPU model, driver and method"; a named file says why it was not taken.
//  - Status: validated (a full calibration in which every unit of the report passed), partial (a
//    full calibration in which some passed), unvalidated (anything else).
// A bad file never throws: it is passed over, or named as the reason.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "diescope/calibrate/calibration_file.hpp"
#include "diescope/recording/records.hpp"

namespace diescope::calibrate {

// What a calibration must fit.
struct CalibrationQuery {
  std::string gpu_model;
  std::string driver;
  int method = 0;
  std::vector<recording::ColumnDef> units;  // the report's DIE-Util units: chip units, then NVML engines
};
// From a recording's metadata and the method the report is analysed with.
CalibrationQuery calibration_query(const recording::RecordingMeta& meta, int method);

// One file looked at.
struct CandidateFile {
  std::filesystem::path path;
  std::string sha256;                   // of the bytes read; empty when not read
  std::optional<CalibrationFile> file;  // when it could be read
  std::string unreadable;               // why it could not be read, empty when read
  std::string misfit;                   // the first way it does not fit, empty when it fits
  bool fits() const { return file && unreadable.empty() && misfit.empty(); }
};

// The first way `file` does not fit, the file's value first ("driver 610.57.04 vs 611.01"), or
// nullopt when it fits.
std::optional<std::string> misfit(const CalibrationFile& file, const CalibrationQuery& query);

// Reads and checks one file. Never throws for what the file holds.
CandidateFile examine_calibration_file(const std::filesystem::path& path, const CalibrationQuery& query);

struct UnitCalibration {
  std::string key;
  std::string label;
  Verdict verdict = Verdict::no_check;
  std::optional<double> ceiling_pct;
  std::string ceiling_reason;  // when there is no ceiling
};

struct CalibrationFileIdentity {
  std::string name;  // file name
  std::string path;
  std::string sha256;
  int schema = 0;
  int method = 0;
  std::string commit;
  std::string date;
  bool quick = false;
};

struct PassedOver {
  std::string name;
  std::string reason;
};

struct CalibrationBlock {
  std::string status = "unvalidated";  // validated | partial | unvalidated
  std::string reason;
  std::vector<UnitCalibration> units;  // every unit of the report, in its order
  std::optional<CalibrationFileIdentity> file;
  std::vector<PassedOver> passed_over;  // files in the folder that were not taken, and why
  // The file's device-model ceilings (docs/calibration.md#device-model); nullopt when no file was used.
  std::optional<ModelCeilings> ceilings;
};

inline constexpr const char* kNoCalibrationReason =
    "no calibration file for this GPU model, driver and method";
// The oldest method whose calibration files still fit today's reports: no method since has changed
// anything a calibration measures (docs/calibration.md#calibrations-across-methods). A change that
// does (a unit's counter, a tolerance of calibrate's checks) sets this to its own method.
inline constexpr int kOldestFittingCalibrationMethod = 3;
// What a report of `query_method` says about a fitting file of an older `file_method`: that file's
// method, and what each method since changed and why a calibration does not see it. Empty when the
// file's method is the report's.
std::string older_method_caveat(int file_method, int query_method);
// passed_over lists at most this many files (a folder of thousands is not copied into every report).
inline constexpr std::size_t kMaxPassedOverListed = 20;

// The block for a chosen file: status, reason and every unit's verdict and ceiling.
CalibrationBlock block_for(const CandidateFile& chosen, const CalibrationQuery& query);

// Throws InputError for a --calibration path that does not exist, or names a file that cannot be read
// as a calibration file; a folder, or a file for another GPU, passes. `run` checks before it measures.
void check_calibration_path(const std::filesystem::path& path);

// Looks in `explicit_path` when given (throws InputError when it does not exist, or is a file that
// cannot be read as a calibration), else in
// `default_dir` (a folder that does not exist just holds no calibration).
CalibrationBlock find_calibration(const CalibrationQuery& query,
                                  const std::optional<std::filesystem::path>& explicit_path,
                                  const std::optional<std::filesystem::path>& default_dir);
// The same, from a recording's metadata, with default_calibration_dir().
CalibrationBlock find_calibration(const recording::RecordingMeta& meta, int method,
                                  const std::optional<std::filesystem::path>& explicit_path = std::nullopt);

// The report's `calibration` object (docs/report.schema.json).
nlohmann::json calibration_block_json(const CalibrationBlock& block);

}  // namespace diescope::calibrate
