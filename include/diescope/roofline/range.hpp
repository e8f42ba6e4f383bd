// The range backend (docs/roofline.md#the-range-profiler): what the injection library
// libdiescope-range.so writes from inside the program, read back and merged over the pass groups into
// the table's rows.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "diescope/roofline/table.hpp"

namespace diescope::roofline {

// The metrics the range backend asks CUPTI for: the ncu backend's, with the SASS instruction counts
// under their per-SM names (CUPTI's range profiler knows them as sm__sass_..., the same sums as ncu's
// smsp__sass_...) and without ncu's launch__ attributes.
std::vector<std::string> range_metrics();

// One run of the program under the library (one pass group).
struct RangeRun {
  std::string mode;  // "counters" or "timestamps"
  std::string gpu, chip;
  int groups = 0;  // pass groups the metrics need (0: the run never reached a kernel)
  int group = -1;  // which of them this run measured
  std::vector<std::string> metrics, refused;
  struct Region {
    std::string name;  // empty: the work outside every region
    long number = 0;   // the name's occurrence, from 1
    bool closed = true;
    long launches = 0;
    std::string kernel;
    std::uint64_t opened_ns = 0, closed_ns = 0;  // CLOCK_MONOTONIC
    std::vector<double> values;                  // one per metric, NaN where not measured
  };
  std::vector<Region> regions;
  std::vector<std::string> opened;          // "name#number" of every occurrence that opened, in order
  std::vector<std::uint64_t> opened_at_ns;  // when each of `opened` opened (CLOCK_MONOTONIC)
  // The library's clock pair (docs/roofline.md#the-sampled-backend): CLOCK_MONOTONIC and
  // CLOCK_REALTIME read together at its start, so realtime = monotonic + realtime_minus_monotonic_ns.
  bool have_clock = false;
  std::int64_t realtime_minus_monotonic_ns = 0;
  std::uint64_t clock_bracket_ns = 0;  // how far apart the two MONOTONIC readings around REALTIME were
  std::vector<std::string> errors;     // "call: CUPTI's text"
  long unmatched = 0;                  // pops and ends with nothing open
  long stale = 0;                      // counter ranges CUPTI did not record (their regions left empty)
  bool ended = false;                  // the library's exit handler ran (the program did not crash)
};
// Throws InputError naming `path`:line for a line that is not the library's.
RangeRun parse_range_output(std::string_view text, const std::string& path);

// The rows of one executable's runs, one per region occurrence with launches, merged over the pass
// groups by name and occurrence. Warnings are appended: a region never closed, no region at all (one
// row for the whole run), a program that ended inside a region, a region missing from a group's run,
// metrics the chip refused.
std::vector<Row> rows_from_range(const std::vector<RangeRun>& runs, const std::string& executable,
                                 std::vector<std::string>& warnings);

}  // namespace diescope::roofline
