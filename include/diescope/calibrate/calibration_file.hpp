// Calibration files (docs/calibration.md, docs/calibration.schema.json): what `diescope calibrate`
// writes and what reports look up. One JSON object: schema, method, commit, date, quick or full,
// the GPU (model, driver, ...), each checked unit's recipe, verdict and ceiling, and the device model.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "diescope/calibrate/device_model.hpp"
#include "diescope/calibrate/verdict.hpp"
#include "diescope/recording/records.hpp"

namespace diescope::calibrate {

// The file format's version. Schema 3 is the first calibration schema reports read
// (docs/calibration.md#how-a-report-finds-its-calibration).
inline constexpr int kCalibrationSchemaVersion = 3;
inline constexpr int kMinCalibrationSchema = 3;
// Only files up to 16 MB are read.
inline constexpr std::uintmax_t kMaxCalibrationFileBytes = std::uintmax_t{16} * 1024 * 1024;
// What marks a JSON file as a calibration file.
inline constexpr std::string_view kCalibrationKind = "diescope-calibration";

struct CalibrationGpu {
  std::string model;   // "NVIDIA H200": what a report must match
  std::string driver;  // "580.159.04": what a report must match
  std::string chip;    // "GH100"
  std::string uuid;
  int compute_capability = 0;
  int sm_count = 0;
  std::int64_t l2_bytes = 0;  // 0 when unknown
};

struct CalibratedUnit {
  std::string key;               // unit key, "fp32"
  std::string label;             // "FP32"
  recording::UnitRecipe recipe;  // how the unit was read: a report's unit must be read the same way
  Verdict verdict = Verdict::inconclusive;
  std::string reason;
  std::optional<double> ceiling_pct;  // the reading at full load; nullopt with ceiling_reason
  std::string ceiling_reason;
  nlohmann::json check = nlohmann::json::object();  // the rule and every step's figures (for people)
};

// The device model with the points it was fitted on (the sweeps' curves are kept).
struct DeviceModel {
  std::vector<StreamTiming> stream_timings;
  std::optional<StreamFit> stream;
  std::vector<WorkingSetPoint> working_set;  // the contraction sweep: device_model.cache
  std::optional<CapacityFit> cache;
  std::vector<WorkingSetPoint> reread;  // the re-read sweep: device_model.cache_reread, written when run
  std::optional<CapacityFit> cache_reread;
  std::vector<IssuePoint> issue_points;
  std::optional<IssueRateFit> issue;
  std::vector<LaunchPoint> launch_points;
  std::optional<LaunchFillFit> fill;
};

struct CalibrationFile {
  int schema = kCalibrationSchemaVersion;
  int method = 0;
  std::string tool_version;
  std::string commit;  // the diescope source commit that measured it
  std::string date;    // UTC, "2026-11-30T12:34:56Z": the newest fitting file wins
  bool quick = false;  // a quick setup check, not a calibration
  CalibrationGpu gpu;
  std::string unit_table;
  std::vector<CalibratedUnit> units;
  nlohmann::json device_model = nlohmann::json::object();
};

// A file whose content is not a readable calibration; what() is the reason, phrased to follow
// "could not be read: " (e.g. "field gpu.driver is missing or not a string").
class CalibrationFormatError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

nlohmann::json calibration_to_json(const CalibrationFile& file);
// The file form: two-space indented, newline at the end.
std::string dump_calibration(const CalibrationFile& file);
// Throws CalibrationFormatError. Reads schema kMinCalibrationSchema and later; an older schema is
// the caller's to reject first (it is a way not to fit, not a read error).
CalibrationFile calibration_from_json(const nlohmann::json& json);

// The device model's figures that rooflines and reports take their ceilings from, read back from a
// file's `device_model` object; nullopt where the model has none (not run, or no fit).
// The device model's ceilings, as roofline and the report read them (docs/calibration.md#device-model).
// The cache figures come from the contraction sweep when it has a cache rate, else from the re-read
// sweep (on the H200 the contraction sweep is issue-bound and finds none); `cache_source` says which.
struct ModelCeilings {
  std::optional<double> dram_bytes_per_s;            // the STREAM ceiling
  std::optional<std::int64_t> cache_capacity_bytes;  // a transition's capacity only
  std::optional<double> cache_bytes_per_s;           // a transition's or all-cached sweep's median rate
  std::string cache_source;                          // "cache" or "cache_reread"; empty without a rate
  std::optional<double> issue_ops_per_s;             // the issue-rate fit
  std::optional<int> fill_threads;                   // the launch-fill saturation
};
ModelCeilings model_ceilings(const nlohmann::json& device_model);

// "2026-11-30T12:34:56Z" <-> seconds since the Unix epoch. nullopt for anything else.
std::optional<std::int64_t> parse_utc_date(std::string_view text);
std::string format_utc_date(std::int64_t seconds_since_epoch);

// How a unit's recipe prints: "counter X" or "mean of X and Y".
std::string recipe_text(const recording::UnitRecipe& recipe);
nlohmann::json recipe_json(const recording::UnitRecipe& recipe);

// A checked unit as the file stores it, from its column and its check.
CalibratedUnit calibrated_unit(const recording::ColumnDef& column, const UnitRule& rule,
                               const UnitCheck& check);
nlohmann::json device_model_json(const DeviceModel& model);

// The diescope source commit this binary was configured from ("unknown" outside a git checkout).
std::string build_commit();

// $XDG_DATA_HOME/diescope/calibrations, or ~/.local/share/diescope/calibrations (an XDG_DATA_HOME that
// is empty or not absolute is ignored, as the XDG spec says). nullopt when neither it nor HOME is set.
std::optional<std::filesystem::path> default_calibration_dir();

// "GH100-580.159.04-20261130T123456Z-full.json".
std::string calibration_file_name(const CalibrationFile& file);

// Writes the file atomically into `dir` (created if missing) under calibration_file_name(), adding
// "-2", "-3", ... when a file of that name exists. Returns its path. Throws Error on failure.
std::filesystem::path write_calibration(const CalibrationFile& file, const std::filesystem::path& dir);

}  // namespace diescope::calibrate
