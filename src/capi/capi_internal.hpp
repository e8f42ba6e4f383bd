// Pieces the C API's source files share. Not a public interface: include/diescope/capi/diescope_c.h is.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "diescope/analysis/result.hpp"
#include "diescope/core/error.hpp"
#include "diescope/recording/recording.hpp"
#include "diescope/report/recording_report.hpp"

namespace diescope::capi {

// Bumped when a function of diescope_c.h changes; python/diescope/_lib.py checks it.
inline constexpr int kApiVersion = 1;

enum class ColumnType { f8, i8, text };

// A table held whole in memory for the caller to copy out column by column.
struct Table {
  struct Column {
    std::string name;
    ColumnType type = ColumnType::f8;
    std::string unit;
    std::vector<double> f;
    std::vector<std::int64_t> i;
    std::vector<std::string> s;
  };
  std::vector<Column> columns;
  std::int64_t rows = 0;
  Column& add(std::string name, ColumnType type, std::string unit);
};

// Keeps the failure for ds_last_error_json(); `kind` is the Python exception it becomes.
void set_error(const std::string& kind, const std::string& cause, const std::string& fix, int exit_code);
void clear_error();

// Runs `f`, turning any exception into this thread's last error and a null (or -1) result.
template <typename F>
auto guarded(F&& f) -> decltype(f()) {
  clear_error();
  try {
    return f();
  } catch (const core::InputError& e) {
    set_error("input", e.cause(), e.fix(), e.exit_code());
  } catch (const core::UsageError& e) {
    set_error("usage", e.cause(), e.fix(), e.exit_code());
  } catch (const core::DeviceError& e) {
    set_error("device", e.cause(), e.fix(), e.exit_code());
  } catch (const core::Error& e) {
    set_error("error", e.cause(), e.fix(), e.exit_code());
  } catch (const std::exception& e) {
    set_error("internal", e.what(), "please report this with the call you made", core::kExitInternal);
  }
  if constexpr (std::is_pointer_v<decltype(f())>)
    return nullptr;
  else
    return decltype(f())(-1);
}

// A copy the caller frees with ds_free_string().
char* to_c(const std::string& text);
// JSON text for the caller, bytes that are not UTF-8 replaced rather than refused.
std::string dump(const nlohmann::json& j);

// A path argument: refused (UsageError) when null or empty.
std::string path_arg(const char* path);
// A folder given where a file is wanted: refused as `diescope report` refuses it.
void refuse_folder(const std::string& path);
// open_recording(), with a folder refused first.
std::unique_ptr<recording::Recording> open_recording_checked(const std::string& path);

analysis::Analysis analyse(const recording::Recording& source, bool use_window);
// The `calibration` block as `report` and `run` look it up; `calibration` names a file or folder, or
// is empty for the default places.
report::CalibrationLookup calibration_lookup(const std::string& calibration);
Table samples_table(const recording::Recording& source, const analysis::Analysis* analysis);
Table spans_table(const recording::Recording& source, const std::vector<std::int64_t>& starts,
                  const std::vector<std::int64_t>& ends, bool whole_recording);

}  // namespace diescope::capi
