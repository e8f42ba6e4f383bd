// The C API's failures: kept per thread as JSON for ds_last_error_json() (docs/python.md#errors).
#include <filesystem>
#include <string>

#include "capi_internal.hpp"
#include "diescope/capi/diescope_c.h"
#include "diescope/recording/reader.hpp"

namespace diescope::capi {
namespace {
thread_local std::string last_error;
}

void set_error(const std::string& kind, const std::string& cause, const std::string& fix, int exit_code) {
  last_error = dump({{"kind", kind}, {"cause", cause}, {"fix", fix}, {"exit_code", exit_code}});
}

void clear_error() {
  last_error.clear();
}

std::string dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

char* to_c(const std::string& text) {
  auto* out = static_cast<char*>(std::malloc(text.size() + 1));
  if (!out) throw std::bad_alloc();
  std::memcpy(out, text.c_str(), text.size() + 1);
  return out;
}

std::string path_arg(const char* path) {
  if (!path || !*path)
    throw core::UsageError("no file was named", "give the path of a recording (.dsrec) or a report.json");
  return path;
}

void refuse_folder(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec)) return;
  // The fix `diescope report` gives for the same folder (src/cli/cmd_report.cpp).
  std::string fix = "name a recording (.dsrec) or a report.json";
  for (const auto& entry : std::filesystem::directory_iterator(path, ec)) {
    const auto& p = entry.path();
    if (p.extension() == ".dsrec" || p.filename() == "report.json") {
      fix = "name a file inside it, e.g. `diescope report " + p.string() + "`";
      break;
    }
  }
  throw core::InputError(path, 0, "is a folder, not a recording or a report", fix);
}

std::unique_ptr<recording::Recording> open_recording_checked(const std::string& path) {
  refuse_folder(path);
  return recording::open_recording(path);
}

}  // namespace diescope::capi

extern "C" {

const char* ds_last_error_json(void) {
  return diescope::capi::last_error.empty() ? nullptr : diescope::capi::last_error.c_str();
}

void ds_free_string(char* text) {
  std::free(text);
}

}  // extern "C"
