// The reading half of the C API: a recording's report and its samples table, a report.json.
// Everything is computed by the same analysis and report code that `diescope report` runs.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "capi_internal.hpp"
#include "diescope/capi/diescope_c.h"
#include "diescope/analysis/analyze.hpp"
#include "diescope/calibrate/lookup.hpp"
#include "diescope/core/version.hpp"
#include "diescope/recording/reader.hpp"
#include "diescope/report/recording_report.hpp"
#include "diescope/report/report.hpp"
#include "diescope/report/samples_csv.hpp"

namespace diescope::capi {
namespace {

namespace fs = std::filesystem;
using analysis::kNaN;

std::string use_word(report::SampleUse use) {
  switch (use) {
    case report::SampleUse::used:
      return "used";
    case report::SampleUse::dropped_first:
      return "dropped_first";
    case report::SampleUse::dropped_broken:
      return "dropped_broken";
    case report::SampleUse::outside_run:
      return "outside_run";
  }
  return "used";
}

// A host stream's column name: its metric name, and its scope unless the scope is the whole system
// (docs/python.md#the-samples-table).
std::string host_column_name(const recording::HostStream& s) {
  std::string name = "host." + s.descriptor.full_name();
  if (s.descriptor.scope.kind != metrics::Scope::Kind::system) name += "[" + s.descriptor.scope.label() + "]";
  return name;
}

}  // namespace

report::CalibrationLookup calibration_lookup(const std::string& calibration) {
  const std::optional<fs::path> path =
      calibration.empty() ? std::nullopt : std::optional<fs::path>(calibration);
  // The calibration that fits the recording's GPU model, driver, method and unit recipes, found as
  // `diescope report` finds it (docs/calibration.md#how-a-report-finds-its-calibration).
  return [path](const analysis::Analysis& analysis) {
    return calibrate::calibration_block_json(
        calibrate::find_calibration(analysis.meta, analysis.method, path));
  };
}

analysis::Analysis analyse(const recording::Recording& source, bool use_window) {
  analysis::AnalysisOptions options;
  options.window = use_window ? analysis::WindowMode::markers : analysis::WindowMode::none;
  return analysis::analyze(source, options);
}

Table::Column& Table::add(std::string name, ColumnType type, std::string unit) {
  columns.push_back(Column{std::move(name), type, std::move(unit), {}, {}, {}});
  return columns.back();
}

// One row per chip sample, in recording order, with the analysis's verdict on it, and the slower
// streams joined to it (docs/python.md#the-samples-table):
//  - GPU-Util: the NVML samples booked to time by the analysis's own rule, overlap-weighted over the
//    sample's time; NaN where no booked sample overlaps it;
//  - clocks, power limit, throttle mask and host probes: the latest reading at or before the sample's end.
Table samples_table(const recording::Recording& source, const analysis::Analysis* analysis) {
  const recording::RecordingMeta& meta = source.meta();
  Table t;
  const std::size_t c_start = t.columns.size();
  t.add("start_ns", ColumnType::i8, "ns");
  t.add("end_ns", ColumnType::i8, "ns");
  t.add("time_s", ColumnType::f8, "s");
  t.add("duration_ms", ColumnType::f8, "ms");
  const std::size_t c_units = t.columns.size();
  for (const auto& c : meta.units) t.add("unit." + c.key, ColumnType::f8, c.unit);
  const std::size_t c_diags = t.columns.size();
  for (const auto& c : meta.diagnostics) t.add("diag." + c.key, ColumnType::f8, c.unit);
  const std::size_t c_counts = t.columns.size();
  for (const auto& c : meta.counts) t.add("count." + c.key, ColumnType::f8, c.unit);
  const std::size_t c_engines = t.columns.size();
  for (const auto& c : meta.engines) t.add("engine." + c.key, ColumnType::f8, c.unit);
  const std::size_t c_die = t.columns.size();
  t.add("die_util_pct", ColumnType::f8, "pct");
  t.add("gpu_util_pct", ColumnType::f8, "pct");
  t.add("sm_clock_mhz", ColumnType::f8, "MHz");
  t.add("mem_clock_mhz", ColumnType::f8, "MHz");
  t.add("power_limit_w", ColumnType::f8, "W");
  t.add("throttle_mask", ColumnType::f8, "bits");
  const std::size_t c_host = t.columns.size();
  std::map<std::int64_t, std::size_t> host_column;  // stream id -> column
  for (const auto& s : source.side().host_streams) {
    host_column[s.id] = t.columns.size();
    t.add(host_column_name(s), ColumnType::f8, std::string(metrics::to_string(s.descriptor.unit)));
  }
  const std::size_t c_use = t.columns.size();
  t.add("use", ColumnType::text, "");
  t.add("drop_reason", ColumnType::text, "");

  // GPU-Util booked to time, as the analysis books it.
  std::vector<analysis::BookedUtil> booked;
  analysis::for_each_booked_util(source, [&](const analysis::BookedUtil& b) { booked.push_back(b); });
  std::size_t next_booked = 0;

  auto clocks = source.stream<recording::ClockReading>();
  auto powers = source.stream<recording::PowerLimitReading>();
  auto throttles = source.stream<recording::ThrottleReading>();
  auto hosts = source.stream<recording::HostSample>();
  recording::ClockReading clock{}, clock_next{};
  recording::PowerLimitReading power{}, power_next{};
  recording::ThrottleReading throttle{}, throttle_next{};
  recording::HostSample host_next{};
  bool have_clock = false, have_power = false, have_throttle = false;
  bool more_clock = clocks->next(clock_next), more_power = powers->next(power_next),
       more_throttle = throttles->next(throttle_next), more_host = hosts->next(host_next);
  std::vector<double> host_values(t.columns.size() - c_host - 2, kNaN);

  report::walk_samples(source, analysis, [&](const report::WalkedSample& w) {
    const recording::ChipSample& s = *w.sample;
    std::size_t c = c_start;
    t.columns[c++].i.push_back(s.start_ns);
    t.columns[c++].i.push_back(s.end_ns);
    t.columns[c++].f.push_back(static_cast<double>(s.start_ns - meta.start_ns) * 1e-9);
    t.columns[c++].f.push_back(static_cast<double>(s.end_ns - s.start_ns) * 1e-6);
    for (std::size_t i = 0; i < meta.units.size(); ++i)
      t.columns[c_units + i].f.push_back(i < s.units.size() ? s.units[i] : kNaN);
    for (std::size_t i = 0; i < meta.diagnostics.size(); ++i)
      t.columns[c_diags + i].f.push_back(i < s.diagnostics.size() ? s.diagnostics[i] : kNaN);
    for (std::size_t i = 0; i < meta.counts.size(); ++i)
      t.columns[c_counts + i].f.push_back(i < s.counts.size() ? s.counts[i] : kNaN);
    for (std::size_t i = 0; i < meta.engines.size(); ++i)
      t.columns[c_engines + i].f.push_back(i < w.engines.size() ? w.engines[i] : kNaN);
    c = c_die;
    t.columns[c++].f.push_back(w.die_util_pct);

    // GPU-Util: overlap-weighted over [start, end). Booked spans are disjoint and in time order.
    while (next_booked < booked.size() && booked[next_booked].hi <= s.start_ns) ++next_booked;
    double weighted = 0;
    recording::TimeNs covered = 0;
    for (std::size_t j = next_booked; j < booked.size() && booked[j].lo < s.end_ns; ++j) {
      const recording::TimeNs lo = std::max(booked[j].lo, s.start_ns);
      const recording::TimeNs hi = std::min(booked[j].hi, s.end_ns);
      if (hi <= lo) continue;
      weighted += booked[j].pct * static_cast<double>(hi - lo);
      covered += hi - lo;
    }
    t.columns[c++].f.push_back(covered > 0 ? weighted / static_cast<double>(covered) : kNaN);

    // As-of joins: the latest reading at or before the sample's end.
    while (more_clock && clock_next.ts_ns <= s.end_ns) {
      clock = clock_next;
      have_clock = true;
      more_clock = clocks->next(clock_next);
    }
    while (more_power && power_next.ts_ns <= s.end_ns) {
      power = power_next;
      have_power = true;
      more_power = powers->next(power_next);
    }
    while (more_throttle && throttle_next.ts_ns <= s.end_ns) {
      throttle = throttle_next;
      have_throttle = true;
      more_throttle = throttles->next(throttle_next);
    }
    while (more_host && host_next.ts_ns <= s.end_ns) {
      for (const auto& v : host_next.values)
        if (auto it = host_column.find(v.id); it != host_column.end())
          host_values[it->second - c_host] = v.value;
      more_host = hosts->next(host_next);
    }
    t.columns[c++].f.push_back(have_clock ? clock.sm_mhz : kNaN);
    t.columns[c++].f.push_back(have_clock ? clock.mem_mhz : kNaN);
    t.columns[c++].f.push_back(have_power ? power.limit_w : kNaN);
    t.columns[c++].f.push_back(have_throttle && throttle.mask ? static_cast<double>(*throttle.mask) : kNaN);
    for (std::size_t i = 0; i < host_values.size(); ++i) t.columns[c_host + i].f.push_back(host_values[i]);
    t.columns[c_use].s.push_back(use_word(w.verdict.use));
    t.columns[c_use + 1].s.push_back(w.verdict.reason);
    ++t.rows;
  });
  return t;
}

}  // namespace diescope::capi

using namespace diescope;

extern "C" {

int ds_api_version(void) {
  return capi::kApiVersion;
}

char* ds_versions_json(void) {
  return capi::guarded([] {
    return capi::to_c(nlohmann::json{{"tool", core::kToolVersion},
                                     {"method", core::kMethodVersion},
                                     {"schema", core::kReportSchemaVersion}}
                          .dump());
  });
}

char* ds_report_of_recording(const char* path, const char* calibration, int use_window) {
  return capi::guarded([&] {
    const std::string file = capi::path_arg(path);
    capi::refuse_folder(file);
    const report::RecordingReport r = report::analyse_recording(
        file, use_window != 0 ? analysis::WindowMode::markers : analysis::WindowMode::none,
        capi::calibration_lookup(calibration ? calibration : ""));
    return capi::to_c(capi::dump(r.report));
  });
}

char* ds_load_report(const char* path) {
  return capi::guarded([&] {
    const std::string file = capi::path_arg(path);
    capi::refuse_folder(file);
    return capi::to_c(capi::dump(report::load_report(file)));
  });
}

ds_table* ds_samples_of_recording(const char* path, int use_window) {
  return capi::guarded([&]() -> ds_table* {
    const std::string file = capi::path_arg(path);
    const auto source = capi::open_recording_checked(file);
    const analysis::Analysis analysis = capi::analyse(*source, use_window != 0);
    return reinterpret_cast<ds_table*>(new capi::Table(capi::samples_table(*source, &analysis)));
  });
}

void ds_table_free(ds_table* table) {
  delete reinterpret_cast<capi::Table*>(table);
}

int64_t ds_table_rows(const ds_table* table) {
  return table ? reinterpret_cast<const capi::Table*>(table)->rows : -1;
}

char* ds_table_columns_json(const ds_table* table) {
  return capi::guarded([&] {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& c : reinterpret_cast<const capi::Table*>(table)->columns)
      list.push_back({{"name", c.name},
                      {"type", c.type == capi::ColumnType::f8   ? "f8"
                               : c.type == capi::ColumnType::i8 ? "i8"
                                                                : "text"},
                      {"unit", c.unit}});
    return capi::to_c(capi::dump(list));
  });
}

int ds_table_copy_f64(const ds_table* table, int column, double* out) {
  const auto* t = reinterpret_cast<const capi::Table*>(table);
  if (!t || column < 0 || static_cast<std::size_t>(column) >= t->columns.size()) return -1;
  const auto& c = t->columns[static_cast<std::size_t>(column)];
  if (c.type != capi::ColumnType::f8) return -1;
  std::copy(c.f.begin(), c.f.end(), out);
  return 0;
}

int ds_table_copy_i64(const ds_table* table, int column, int64_t* out) {
  const auto* t = reinterpret_cast<const capi::Table*>(table);
  if (!t || column < 0 || static_cast<std::size_t>(column) >= t->columns.size()) return -1;
  const auto& c = t->columns[static_cast<std::size_t>(column)];
  if (c.type != capi::ColumnType::i8) return -1;
  std::copy(c.i.begin(), c.i.end(), out);
  return 0;
}

char* ds_table_text_json(const ds_table* table, int column) {
  return capi::guarded([&]() -> char* {
    const auto* t = reinterpret_cast<const capi::Table*>(table);
    if (!t || column < 0 || static_cast<std::size_t>(column) >= t->columns.size() ||
        t->columns[static_cast<std::size_t>(column)].type != capi::ColumnType::text)
      throw core::UsageError("column " + std::to_string(column) + " is not a text column of this table",
                             "ask for a column that ds_table_columns_json lists with type \"text\"");
    return capi::to_c(capi::dump(nlohmann::json(t->columns[static_cast<std::size_t>(column)].s)));
  });
}

}  // extern "C"
