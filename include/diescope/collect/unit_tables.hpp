// The unit tables: for each GPU architecture, which chip counters make each DIE-Util unit, each
// diagnostic and each raw count, and which CUPTI chips the table is for. One place for all of them;
// `diescope units` writes docs/units.json from here.
//
// Invariants (tests/collect/units_*):
//  - Every table's whole metric set (table_metrics) fits ONE PM-sampling counter pass on every chip
//    it lists, as CUPTI's profiler host API counts passes (checked in CI through diescope-cupti).
//  - A chip appears in at most one table. Keys are unique within a table.
//  - A unit's recipe is one counter or the mean of two; every counter is a full CUPTI metric name,
//    read as a percent of the counter's sustained peak, except the raw counts.
#pragma once

#include <chrono>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "diescope/recording/records.hpp"

namespace diescope::collect {

struct UnitTable {
  std::string name;                       // recorded as RecordingMeta::unit_table, e.g. "hopper-gh100"
  std::string architecture;               // "Hopper"
  std::vector<std::string> chips;         // CUPTI chip names, e.g. "GH100"
  std::vector<int> compute_capabilities;  // major*10+minor the chips report, e.g. {90}
  std::string source;  // where the table comes from (the method's earlier tables, or chosen here)
  std::string note;    // what the table cannot see in one pass, and why
  std::vector<recording::ColumnDef> units;        // DIE-Util candidates
  std::vector<recording::ColumnDef> diagnostics;  // read beside the units, not part of DIE-Util
  std::vector<recording::ColumnDef> counts;       // raw totals per sample (unit "bytes")
};

// Every table, in a fixed order (newest architecture first).
const std::vector<UnitTable>& unit_tables();

// The table that lists `chip` (CUPTI's name, case-sensitive), or nullptr.
const UnitTable* unit_table_for_chip(std::string_view chip);
const UnitTable* unit_table_by_name(std::string_view name);
// The table for a compute capability (major*10+minor, e.g. 90), or nullptr.
const UnitTable* unit_table_for_compute_capability(int compute_capability);
// The chip a compute capability names when its table lists exactly one ("GH100" for 90); empty when
// it lists several (the chip is then known only from CUPTI) or there is no table. A recording read
// through GPM names its chip this way, since no CUPTI sampler ran.
std::string chip_for_compute_capability(int compute_capability);

// ---- NVML GPM as a second chip source (docs/method.md#gpm-as-a-second-chip-source) ----
// The GPM table: the units, diagnostics and counts diescope reads from NVML's GPM metrics on Hopper
// and later. Not one of unit_tables() (it reads no CUPTI counter and is chosen by source, not by
// chip). Its recipes name NVML's metric identifiers ("NVML_GPM_METRIC_FP32_UTIL").
const UnitTable& gpm_unit_table();
// A unit the PM-sampling tables weigh that GPM has no metric for, and why.
struct UnitGap {
  std::string key;    // "l2"
  std::string label;  // "L2"
  std::string why;
};
const std::vector<UnitGap>& gpm_unit_gaps();
// `table` without the columns that read one of `counters` (a GPM metric the driver did not answer),
// their keys and `why` added to the note. Left out rather than recorded as NaN: a NaN unit or
// diagnostic makes a sample broken (docs/method.md#which-chip-samples-are-used).
UnitTable table_without_counters(const UnitTable& table, const std::vector<std::string>& counters,
                                 const std::string& why);

// Every distinct counter the table reads, in column order (units, diagnostics, counts), each once:
// the set a sampler configures and the set that must fit one pass.
std::vector<std::string> table_metrics(const UnitTable& table);

// Sets the unit-related fields of a recording's metadata (unit_table, units, diagnostics, counts).
void apply_unit_table(const UnitTable& table, recording::RecordingMeta& meta);

// One sample's column values, in the table's column order.
struct ColumnValues {
  std::vector<double> units;
  std::vector<double> diagnostics;
  std::vector<double> counts;
};

// Turns one sample's counter values into column values. A mean of two with either side NaN is NaN.
class ColumnEvaluator {
 public:
  // `metric_order` is the order of the values evaluate() gets (normally table_metrics(table)).
  // Throws Error when a counter the table needs is missing from it.
  ColumnEvaluator(const UnitTable& table, std::span<const std::string> metric_order);
  explicit ColumnEvaluator(const UnitTable& table);
  void evaluate(std::span<const double> metric_values, ColumnValues& out) const;

 private:
  struct Column {
    bool mean = false;
    std::size_t first = 0;
    std::size_t second = 0;
  };
  std::vector<Column> units_, diagnostics_, counts_;
  std::size_t metric_count_ = 0;
};

// docs/units.json, as `diescope units --write` writes it (stable: same tables, same bytes).
std::string units_json();

// ---- Checking that a table fits one pass, through the diescope-cupti executable ----

// What one run of a program printed.
struct ToolRun {
  bool started = false;  // false: the program could not be run (see `error`)
  bool timed_out = false;
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;
  std::string out;
  std::string err;
  std::string error;  // why it could not be run
};
// Runs argv[0] (a path) with argv, no shell, stdin from /dev/null; kills it after `timeout`.
ToolRun run_tool(const std::vector<std::string>& argv, std::chrono::milliseconds timeout);

struct PassCheck {
  std::string table;
  std::string chip;
  std::size_t metrics = 0;
  std::optional<int> passes;          // nullopt: CUPTI could not count them (see `error`)
  std::vector<std::string> rejected;  // counters CUPTI does not know on this chip
  std::string error;
  bool fits() const { return passes && *passes == 1 && rejected.empty(); }
};

// Asks `diescope_cupti` (the executable's path) how many passes `metrics` need on `chip`.
PassCheck check_passes(const std::string& diescope_cupti, std::string_view chip,
                       const std::vector<std::string>& metrics);

// Finds diescope-cupti: $DIESCOPE_CUPTI if set, else beside the running executable. Empty if absent.
std::string find_diescope_cupti();

// ---- `diescope units`' reports, printed on stdout ----

// Every table: its units, diagnostics and counts with their counters and flags. Returns 0.
int print_unit_tables();
// Whether each table fits one counter pass on every chip it lists (CUPTI's host API, through
// diescope-cupti at `cupti`, or found by find_diescope_cupti when empty), or, with `device`, on that
// GPU's chip with its own counter availability. Returns 0 when every check fits, 1 otherwise; throws
// DeviceError when diescope-cupti is missing or the GPU's chip cannot be read.
int print_pass_checks(const std::string& cupti, std::optional<int> device);

}  // namespace diescope::collect
