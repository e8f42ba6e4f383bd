// The sampled backend (docs/roofline.md#the-sampled-backend): the program runs under diescope's own
// PM sampling at a short interval, its NVTX regions timed by libdiescope-range.so (timestamps only);
// within each region the kernel windows are found in the samples' compute activity, their DRAM
// bytes integrated, and the FLOPs taken from analytic rules. Pure: the samples and the region times
// come in, the rows go out; the runs themselves are in src/roofline/pipeline.cpp.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "diescope/recording/records.hpp"
#include "diescope/roofline/range.hpp"
#include "diescope/roofline/table.hpp"

namespace diescope::roofline {

// The constants of the window rules, each set from H200 data (docs/roofline.md#sampled-constants).
struct SampledConstants {
  double interval_ms = 0.5;             // the PM sample interval
  double activity_threshold_pct = 1.0;  // SM active at or above this: a kernel is running
  double gap_ms = 0.25;                 // active samples closer than this are one window
  double min_window_ms = 1.0;           // a shorter window is dropped (a bootstrap launch, not a kernel)
  double activity_ratio = 0.7;          // below this fraction of the busiest window's mean: data movement
};

// One PM sample, on CLOCK_REALTIME (as the sampler sends it).
struct ActivitySample {
  std::int64_t start_ns = 0, end_ns = 0;
  double activity_pct = 0;  // SM active (sm__cycles_active, % of elapsed cycles); NaN: not read
  double dram_bytes = 0;    // dram__bytes.sum over the sample; NaN: not read
};

enum class WindowKind { kernel, data_movement, too_short };
std::string_view window_kind_name(WindowKind k);  // "kernel", "data movement", "too short"

struct Window {
  std::int64_t start_ns = 0, end_ns = 0;  // the first active sample's start, the last one's end
  double mean_activity_pct = 0;           // time-weighted over every sample in the window
  double active_s = 0;                    // its length with the edge samples counted by their active share
  double dram_bytes = 0;                  // the integral of DRAM bandwidth over the window
  long unread_samples = 0;                // samples in it without values (their bytes estimated)
  WindowKind kind = WindowKind::kernel;
};

// The windows among the samples that overlap [from_ns, to_ns], by the rules of
// docs/roofline.md#kernel-windows. `samples` are in time order.
std::vector<Window> find_windows(const std::vector<ActivitySample>& samples, std::int64_t from_ns,
                                 std::int64_t to_ns, const SampledConstants& c);

// One region occurrence measured on the samples.
struct SampledRegion {
  std::string name;  // empty: the whole run of a program that marks no region
  long number = 1;
  bool closed = true;
  long launches = 0;
  std::int64_t from_ns = 0, to_ns = 0;  // CLOCK_REALTIME
  std::vector<Window> windows;
  double duration_s = 0;  // the kernel windows' summed active length
  double dram_bytes = 0;  // their summed bytes
  long kernel_windows = 0, movement_windows = 0;
  // docs/roofline.md#energy: the joules over its kernel windows and their source ("counter",
  // "power_draw"; empty and NaN when the power readings do not cover every window).
  double energy_j = std::numeric_limits<double>::quiet_NaN();
  std::string energy_source;
};

// docs/roofline.md#energy: each region's energy over its kernel windows from the recording's power
// readings (in time order), by the rules of docs/energy.md#the-rules.
void add_window_energy(std::vector<SampledRegion>& regions,
                       const std::vector<recording::PowerLimitReading>& power);

// The regions of one run (the library's timestamps-mode file), each measured on `samples`.
// `run_end_ns` (CLOCK_REALTIME) closes a region the program never closed or crashed inside.
// Warnings are appended: no region at all (one row for the whole run), a region never closed, a
// crash inside a region, a file without the clock pair, a region without a kernel window.
std::vector<SampledRegion> measure_regions(const std::vector<ActivitySample>& samples, const RangeRun& run,
                                           std::int64_t run_end_ns, const SampledConstants& c,
                                           const std::string& executable, std::vector<std::string>& warnings);

// --flop 'REGEX=VALUE[@PRECISION]' (docs/roofline.md#analytic-flops).
struct FlopRule {
  std::string text;
  std::regex pattern;
  double value = 0;
  Precision precision = Precision::fp32;
};
FlopRule parse_flop_rule(const std::string& text);  // throws UsageError
// The first rule whose pattern matches `name` (std::regex_search), or nullopt.
std::optional<std::size_t> match_flop_rule(const std::vector<FlopRule>& rules, const std::string& name);

// The table's rows (docs/roofline.md#the-two-point-measurement). Without `ref`: one row per region
// occurrence with a kernel window. With `ref` (the one-iteration run) and `iterations` N > 1: one
// row per region name, (main - ref) / (N - 1) of its occurrences' summed duration and bytes. FLOPs
// from the first matching rule against "executable[region]"; a rule that matches no row, and a row
// that no rule matches, are warnings.
std::vector<Row> rows_from_sampled(const std::vector<SampledRegion>& main,
                                   const std::vector<SampledRegion>* ref, int iterations,
                                   const std::string& executable, const std::string& gpu,
                                   const std::vector<FlopRule>& rules, std::vector<std::string>& warnings);

// docs/roofline.md#the-two-point-measurement: every "{iterations}" in the arguments becomes N.
std::vector<std::string> substitute_iterations(const std::vector<std::string>& argv, int n);

// How well the sampler kept its interval (docs/roofline.md#sampled-constants): printed for each run.
struct SamplingCheck {
  long samples = 0;
  double median_interval_ms = 0;
  double covered_pct = 0;  // summed sample lengths over first start to last end
  long holes = 0;          // spaces between samples longer than half an interval
  double longest_hole_ms = 0;
  long unread = 0;  // samples without an activity value
};
SamplingCheck check_sampling(const std::vector<ActivitySample>& samples, double interval_ms);

}  // namespace diescope::roofline
