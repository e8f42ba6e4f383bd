#include "diescope/calibrate/lookup.hpp"

#include <algorithm>
#include <array>
#include <fstream>
#include <iterator>

#include <fmt/core.h>

#include "diescope/calibrate/sha256.hpp"
#include "diescope/core/error.hpp"

#include "internal.hpp"

namespace diescope::calibrate {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

using detail::join;

bool same_recipe(const recording::UnitRecipe& a, const recording::UnitRecipe& b) {
  return a.combine == b.combine && a.counters == b.counters;
}

const recording::ColumnDef* find_unit(const std::vector<recording::ColumnDef>& units,
                                      const std::string& key) {
  for (const recording::ColumnDef& c : units)
    if (c.key == key) return &c;
  return nullptr;
}

// nlohmann's message without its "[json.exception.parse_error.101] " prefix.
std::string parse_message(const json::parse_error& e) {
  std::string what = e.what();
  const std::size_t close = what.find("] ");
  return close == std::string::npos ? what : what.substr(close + 2);
}

std::vector<UnitCalibration> unchecked_units(const CalibrationQuery& query, const std::string& why) {
  std::vector<UnitCalibration> out;
  for (const recording::ColumnDef& c : query.units)
    out.push_back(UnitCalibration{c.key, c.label, Verdict::no_check, std::nullopt, why});
  return out;
}

CalibrationBlock no_file(const CalibrationQuery& query, std::string reason) {
  CalibrationBlock b;
  b.status = "unvalidated";
  b.units = unchecked_units(query, "no calibration file was taken");
  b.reason = std::move(reason);
  return b;
}

// "passed FP32, DRAM; no check Tensor, FP64": the units named by verdict.
std::string units_by_verdict(const std::vector<UnitCalibration>& units) {
  std::vector<std::string> groups;
  const std::pair<Verdict, const char*> order[] = {{Verdict::pass, "passed"},
                                                   {Verdict::fail, "failed"},
                                                   {Verdict::inconclusive, "inconclusive"},
                                                   {Verdict::no_check, "no check"}};
  for (const auto& [verdict, word] : order) {
    std::vector<std::string> names;
    for (const UnitCalibration& u : units)
      if (u.verdict == verdict) names.push_back(u.label.empty() ? u.key : u.label);
    if (!names.empty()) groups.push_back(std::string(word) + " " + join(names, ", "));
  }
  return groups.empty() ? "the report has no units" : join(groups, "; ");
}

// Reads at most kMaxCalibrationFileBytes + 1 bytes, so a file that grows while read is still caught.
bool read_bounded(const fs::path& path, std::string& out, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot be opened";
    return false;
  }
  out.clear();
  std::array<char, 65536> chunk{};
  while (out.size() <= kMaxCalibrationFileBytes) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    const auto got = static_cast<std::size_t>(in.gcount());
    out.append(chunk.data(), got);
    if (got < chunk.size()) break;
  }
  if (in.bad()) {
    error = "cannot be read";
    return false;
  }
  return true;
}

// The newest-first order among fitting files: full before quick, then the later date, then by name.
bool better(const CandidateFile& a, const CandidateFile& b) {
  if (a.file->quick != b.file->quick) return !a.file->quick;
  const std::int64_t da = parse_utc_date(a.file->date).value_or(0),
                     db = parse_utc_date(b.file->date).value_or(0);
  if (da != db) return da > db;
  return a.path.filename() < b.path.filename();
}

CalibrationBlock scan_folder(const fs::path& dir, const CalibrationQuery& query) {
  std::error_code ec;
  std::vector<fs::path> names;
  fs::directory_iterator it(dir, ec);
  if (ec)
    return no_file(query, fmt::format("{} in {}: the folder cannot be listed ({})", kNoCalibrationReason,
                                      dir.string(), ec.message()));
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) break;
    if (it->path().extension() == ".json") names.push_back(it->path());
  }
  std::sort(names.begin(), names.end());

  std::vector<CandidateFile> fitting;
  std::vector<PassedOver> passed;
  for (const fs::path& p : names) {
    CandidateFile c = examine_calibration_file(p, query);
    if (c.fits())
      fitting.push_back(std::move(c));
    else
      passed.push_back(PassedOver{p.filename().string(), c.unreadable.empty()
                                                             ? "not taken: " + c.misfit
                                                             : "could not be read: " + c.unreadable});
  }
  CalibrationBlock block;
  if (fitting.empty()) {
    block = no_file(query, fmt::format("{} in {}", kNoCalibrationReason, dir.string()));
  } else {
    const auto best = std::min_element(fitting.begin(), fitting.end(), better);
    block = block_for(*best, query);
  }
  if (passed.size() > kMaxPassedOverListed) passed.resize(kMaxPassedOverListed);
  block.passed_over = std::move(passed);
  return block;
}

}  // namespace

std::string older_method_caveat(int file_method, int query_method) {
  if (file_method >= query_method) return {};
  // What each method after kOldestFittingCalibrationMethod changed (docs/method.md#method-versions),
  // and why a calibration does not see it.
  struct Change {
    int method;
    const char* what;
  };
  static constexpr Change kChanges[] = {
      {4, "a steady window over GPM samples starts 150 ms late; calibration reads no GPM"},
  };
  std::vector<std::string> changes;
  for (const Change& c : kChanges)
    if (c.method > file_method && c.method <= query_method)
      changes.push_back(fmt::format("method {}: {}", c.method, c.what));
  return fmt::format("made with method {}, still valid under method {} ({})", file_method, query_method,
                     join(changes, "; "));
}

CalibrationQuery calibration_query(const recording::RecordingMeta& meta, int method) {
  CalibrationQuery q;
  q.gpu_model = meta.gpu.model;
  q.driver = meta.gpu.driver;
  q.method = method;
  q.units = meta.units;
  q.units.insert(q.units.end(), meta.engines.begin(), meta.engines.end());
  return q;
}

std::optional<std::string> misfit(const CalibrationFile& file, const CalibrationQuery& query) {
  if (file.schema < kMinCalibrationSchema)
    return fmt::format("schema {} vs {} or later", file.schema, kMinCalibrationSchema);
  if (file.gpu.model != query.gpu_model)
    return fmt::format("GPU model {} vs {}", file.gpu.model, query.gpu_model);
  if (file.gpu.driver != query.driver) return fmt::format("driver {} vs {}", file.gpu.driver, query.driver);
  // docs/calibration.md#calibrations-across-methods: older files fit back to the oldest method whose
  // checks are today's; an older one, or one from a newer diescope, is made again on this GPU.
  if (file.method < kOldestFittingCalibrationMethod || file.method > query.method)
    return fmt::format(
        "method {} vs {} (calibration files of methods {} to {} fit; make one with `diescope "
        "calibrate`)",
        file.method, query.method, kOldestFittingCalibrationMethod, query.method);
  if (file.units.empty()) return std::string("the file lists no unit it checked");
  for (const CalibratedUnit& u : file.units) {
    const recording::ColumnDef* mine = find_unit(query.units, u.key);
    if (mine == nullptr) return fmt::format("unit {} is not a unit of this report", u.key);
    if (!same_recipe(u.recipe, mine->recipe))
      return fmt::format("unit {} read as {} vs {}", u.key, recipe_text(u.recipe), recipe_text(mine->recipe));
  }
  return std::nullopt;
}

CandidateFile examine_calibration_file(const fs::path& path, const CalibrationQuery& query) {
  CandidateFile c;
  c.path = path;
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (ec || !fs::exists(status)) {
    c.unreadable = ec ? ec.message() : "no such file";
    return c;
  }
  if (!fs::is_regular_file(status)) {
    c.unreadable = "not a regular file";
    return c;
  }
  if (path.extension() != ".json") {
    c.unreadable = "not a .json file";
    return c;
  }
  const std::uintmax_t size = fs::file_size(path, ec);
  if (!ec && size > kMaxCalibrationFileBytes) {
    c.unreadable = fmt::format("{} bytes, over the 16 MB ({} bytes) a calibration file may be", size,
                               kMaxCalibrationFileBytes);
    return c;
  }
  std::string bytes, error;
  if (!read_bounded(path, bytes, error)) {
    c.unreadable = error;
    return c;
  }
  if (bytes.size() > kMaxCalibrationFileBytes) {
    c.unreadable =
        fmt::format("over the 16 MB ({} bytes) a calibration file may be", kMaxCalibrationFileBytes);
    return c;
  }
  c.sha256 = sha256_hex(bytes);
  if (bytes.find_first_not_of(" \t\r\n") == std::string::npos) {
    c.unreadable = "empty";
    return c;
  }
  json j;
  try {
    j = json::parse(bytes);
  } catch (const json::parse_error& e) {
    // Cut off: the parser ran out of input, mid-value or mid-string, at the file's last byte.
    const std::string message = parse_message(e);
    const bool at_end =
        e.byte >= bytes.size() && (message.find("unexpected end of input") != std::string::npos ||
                                   message.find("missing closing quote") != std::string::npos);
    c.unreadable =
        at_end ? fmt::format("truncated: the JSON ends at byte {} before it is complete", bytes.size())
               : "not JSON: " + message;
    return c;
  }
  if (!j.is_object() || !j.contains("kind") || j["kind"] != kCalibrationKind) {
    c.unreadable =
        fmt::format("JSON, but not a diescope calibration file (no \"kind\": \"{}\")", kCalibrationKind);
    return c;
  }
  if (!j.contains("schema") || !j["schema"].is_number_integer()) {
    c.unreadable = "field schema is missing or not an integer";
    return c;
  }
  const int schema = j["schema"].get<int>();
  if (schema < kMinCalibrationSchema) {
    c.misfit = fmt::format("schema {} vs {} or later", schema, kMinCalibrationSchema);
    return c;
  }
  try {
    c.file = calibration_from_json(j);
  } catch (const CalibrationFormatError& e) {
    c.unreadable = e.what();
    return c;
  } catch (const json::exception& e) {
    c.unreadable = std::string("malformed: ") + e.what();
    return c;
  }
  if (const auto why = misfit(*c.file, query)) c.misfit = *why;
  return c;
}

CalibrationBlock block_for(const CandidateFile& chosen, const CalibrationQuery& query) {
  const CalibrationFile& f = *chosen.file;
  CalibrationBlock b;
  b.file = CalibrationFileIdentity{chosen.path.filename().string(),
                                   chosen.path.string(),
                                   chosen.sha256,
                                   f.schema,
                                   f.method,
                                   f.commit,
                                   f.date,
                                   f.quick};
  b.ceilings = model_ceilings(f.device_model);
  int passed = 0;
  for (const recording::ColumnDef& c : query.units) {
    UnitCalibration u{c.key, c.label, Verdict::no_check, std::nullopt, {}};
    const auto it = std::find_if(f.units.begin(), f.units.end(),
                                 [&c](const CalibratedUnit& cu) { return cu.key == c.key; });
    if (it == f.units.end()) {
      u.ceiling_reason = "the calibration has no check for this unit";
    } else {
      u.verdict = it->verdict;
      u.ceiling_pct = it->ceiling_pct;
      if (!u.ceiling_pct)
        u.ceiling_reason = it->ceiling_reason.empty() ? "the calibration gives none" : it->ceiling_reason;
    }
    if (u.verdict == Verdict::pass) ++passed;
    b.units.push_back(std::move(u));
  }
  std::string summary = units_by_verdict(b.units);
  if (const std::string caveat = older_method_caveat(f.method, query.method); !caveat.empty())
    summary += "; " + caveat;
  const bool all = passed > 0 && passed == static_cast<int>(b.units.size());
  if (f.quick) {
    b.status = "unvalidated";
    b.reason = fmt::format("quick setup check of {}, not a calibration: {}", f.date, summary);
  } else if (all) {
    b.status = "validated";
    b.reason = fmt::format("full calibration of {}: {}", f.date, summary);
  } else if (passed > 0) {
    b.status = "partial";
    b.reason = fmt::format("full calibration of {}: {}", f.date, summary);
  } else {
    b.status = "unvalidated";
    b.reason =
        fmt::format("full calibration of {} in which no unit of this report passed: {}", f.date, summary);
  }
  return b;
}

namespace {

[[noreturn]] void refuse_missing(const fs::path& p, const std::optional<fs::path>& default_dir) {
  throw core::InputError(
      p.string(), 0, "no such file or folder",
      "name a calibration file, or the folder that holds them (diescope calibrate writes them to " +
          (default_dir ? default_dir->string() : std::string("~/.local/share/diescope/calibrations")) +
          "); or leave out --calibration");
}

// A named file that is not a calibration is refused as a missing one is
// (docs/calibration.md#how-a-report-finds-its-calibration); one for another GPU or method is a valid
// file that does not fit, and the report says so.
void refuse_unreadable(const fs::path& p, const CandidateFile& c) {
  if (c.unreadable.empty()) return;
  throw core::InputError(
      p.string(), 0, "could not be read as a calibration file: " + c.unreadable,
      "name a file written by `diescope calibrate`, or the folder that holds them; or leave out "
      "--calibration");
}

}  // namespace

void check_calibration_path(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) refuse_missing(path, default_calibration_dir());
  if (!fs::is_directory(path, ec))
    refuse_unreadable(path, examine_calibration_file(path, CalibrationQuery{}));
}

CalibrationBlock find_calibration(const CalibrationQuery& query, const std::optional<fs::path>& explicit_path,
                                  const std::optional<fs::path>& default_dir) {
  std::error_code ec;
  if (explicit_path) {
    const fs::path& p = *explicit_path;
    if (!fs::exists(p, ec)) refuse_missing(p, default_dir);
    if (fs::is_directory(p, ec)) return scan_folder(p, query);
    const CandidateFile c = examine_calibration_file(p, query);
    if (c.fits()) return block_for(c, query);
    refuse_unreadable(p, c);
    return no_file(query, fmt::format("calibration file {} not taken: {}", p.string(), c.misfit));
  }
  if (!default_dir)
    return no_file(query, std::string(kNoCalibrationReason) +
                              ": neither XDG_DATA_HOME nor HOME is set, so there is no "
                              "calibration folder to look in");
  if (!fs::is_directory(*default_dir, ec))
    return no_file(query, fmt::format("{} in {}", kNoCalibrationReason, default_dir->string()));
  return scan_folder(*default_dir, query);
}

CalibrationBlock find_calibration(const recording::RecordingMeta& meta, int method,
                                  const std::optional<fs::path>& explicit_path) {
  return find_calibration(calibration_query(meta, method), explicit_path, default_calibration_dir());
}

json calibration_block_json(const CalibrationBlock& b) {
  // A null ceiling carries "<key>_reason" beside it, as every null figure in a report does.
  json units = json::object(), ceilings = json::object();
  for (const UnitCalibration& u : b.units) {
    units[u.key] = verdict_name(u.verdict);
    ceilings[u.key] = u.ceiling_pct ? json(*u.ceiling_pct) : json(nullptr);
    if (!u.ceiling_pct)
      ceilings[u.key + "_reason"] = u.ceiling_reason.empty() ? "none given" : u.ceiling_reason;
  }
  json j{{"status", b.status}, {"reason", b.reason}, {"units", units}, {"ceiling_pct", ceilings}};
  if (b.ceilings) {
    // Each null ceiling carries its reason, as every null figure in a report does.
    const ModelCeilings& m = *b.ceilings;
    json model = json::object();
    auto put = [&model](const char* key, const auto& value, const char* reason) {
      if (value)
        model[key] = *value;
      else {
        model[key] = nullptr;
        model[std::string(key) + "_reason"] = reason;
      }
    };
    put("dram_bytes_per_s", m.dram_bytes_per_s, "the calibration's STREAM sweep gave no ceiling");
    put("cache_bytes_per_s", m.cache_bytes_per_s, "neither cache sweep found a cache rate");
    if (m.cache_bytes_per_s) model["cache_source"] = m.cache_source;
    put("cache_capacity_bytes", m.cache_capacity_bytes, "no cache sweep found a capacity");
    put("issue_ops_per_s", m.issue_ops_per_s, "the issue-rate sweep gave no fit");
    put("fill_threads_per_sm", m.fill_threads, "the launch-fill sweep gave no fit");
    j["device_model"] = model;
  }
  if (b.file) {
    j["file"] = json{{"name", b.file->name},     {"path", b.file->path},     {"sha256", b.file->sha256},
                     {"schema", b.file->schema}, {"method", b.file->method}, {"commit", b.file->commit},
                     {"date", b.file->date},     {"quick", b.file->quick}};
  } else {
    j["file"] = nullptr;
    j["file_reason"] = b.reason;
  }
  json passed = json::array();
  for (const PassedOver& p : b.passed_over) passed.push_back(json{{"name", p.name}, {"reason", p.reason}});
  j["passed_over"] = passed;
  return j;
}

}  // namespace diescope::calibrate
