// docs/units.json: every table, written from unit_tables(). Deterministic (same tables, same
// bytes) so a test can keep the committed file current.
#include <nlohmann/json.hpp>

#include "diescope/collect/unit_tables.hpp"
#include "diescope/core/version.hpp"
#include "diescope/recording/format.hpp"

namespace diescope::collect {
namespace {

nlohmann::ordered_json column_json(const recording::ColumnDef& column) {
  nlohmann::ordered_json flags = nlohmann::ordered_json::array();
  for (recording::UnitFlag flag : column.flags) flags.push_back(recording::unit_flag_text(flag));
  return {
      {"key", column.key},
      {"label", column.label},
      {"metric", column.metric},
      {"recipe",
       {{"combine", recording::combine_text(column.recipe.combine)}, {"counters", column.recipe.counters}}},
      {"source", recording::unit_source_text(column.source)},
      {"unit", column.unit},
      {"flags", flags},
      {"counted_by_gpu_util", column.counted_by_gpu_util},
      {"note", column.note},
  };
}

nlohmann::ordered_json columns_json(const std::vector<recording::ColumnDef>& columns) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& column : columns) out.push_back(column_json(column));
  return out;
}

}  // namespace

std::string units_json() {
  auto table_json = [](const UnitTable& table) {
    return nlohmann::ordered_json{
        {"name", table.name},
        {"architecture", table.architecture},
        {"chips", table.chips},
        {"compute_capabilities", table.compute_capabilities},
        {"source", table.source},
        {"note", table.note},
        {"counters", table_metrics(table)},
        {"units", columns_json(table.units)},
        {"diagnostics", columns_json(table.diagnostics)},
        {"counts", columns_json(table.counts)},
    };
  };
  nlohmann::ordered_json tables = nlohmann::ordered_json::array();
  for (const auto& table : unit_tables()) tables.push_back(table_json(table));
  nlohmann::ordered_json gaps = nlohmann::ordered_json::array();
  for (const auto& gap : gpm_unit_gaps())
    gaps.push_back({{"key", gap.key}, {"label", gap.label}, {"why", gap.why}});
  nlohmann::ordered_json gpm = table_json(gpm_unit_table());
  gpm["not_seen"] = gaps;
  nlohmann::ordered_json doc = {
      {"generated_by", "diescope units --write docs/units.json (do not edit by hand)"},
      {"method", core::kMethodVersion},
      {"read_as",
       "Each unit is one chip counter, or the mean of two, read by CUPTI PM sampling as a percent of the "
       "sustained peak CUPTI defines for that counter on the chip (.avg.pct_of_peak_sustained_elapsed; "
       ".pct_of_peak_sustained_elapsed for the DRAM byte sum). Counts are raw totals per sample. Every "
       "table's counters fit one counter pass on every chip it lists "
       "(bench/results/units/2026-11-29-cpu-one-pass-tables/pm-passes.txt). "
       "Flags: stand_in_counter = a nearby counter is read in place of the direct one; different_measure = "
       "it measures something other than the unit's name says. No flag means the counter reads the unit "
       "directly, not that it has been validated."},
      {"tables", tables},
      {"gpm_read_as",
       "The GPM table is read through NVML's GPM API when PM sampling cannot run (another profiler holds "
       "the counters, or they are forbidden): each column is one NVML GPM metric over a pair of samples "
       "(docs/method.md#gpm-as-a-second-chip-source). not_seen lists the units GPM has no metric for."},
      {"gpm_table", gpm},
  };
  return doc.dump(2) + "\n";
}

}  // namespace diescope::collect
