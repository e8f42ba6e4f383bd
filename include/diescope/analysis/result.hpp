// What the analysis of one recording concludes. Plain data: renderers (report/) print it, nothing
// here prints. A figure that could not be computed is NaN (or nullopt) beside a code that says why;
// never 0. The analysis writes no words: report/wording.hpp words every code.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "diescope/recording/records.hpp"

namespace diescope::analysis {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A time-weighted summary of one column (unit, diagnostic or engine) over a span.
struct ColumnSummary {
  std::string key;
  double mean_pct = kNaN;          // time-weighted over the time the column was available
  double available_s = 0;          // time the column had a value
  double availability_pct = kNaN;  // available_s as a share of the usable chip-sampled time
  double max_sample_pct = kNaN;    // highest single sample, as read (not clamped)
};

// Why a figure is missing; `none` when it is there.
enum class DieUtilMissing {
  none,
  empty_span,         // the span ends at or before its start
  no_usable_samples,  // no chip sample in the span was used
  no_unit_value,      // no unit had a value in any used sample
};
enum class LimitingUnitMissing {
  none,
  no_usable_samples,
  no_busy_unit,       // no unit reached kMinBusyPct of its peak
  busy_units_sparse,  // the busy units had values for under kMinLimitingAvailabilityPct of the time
};
enum class GpuUtilMissing {
  none,
  no_usable_samples,  // no chip-sampled time, and NVML covered under kMinWholeSpanGpuUtilCoveragePct
                      // of the span
  not_covered,        // no GPU-Util sample covers the chip-sampled time
};
enum class GapMissing {
  none,
  no_die_util,
  no_gpu_util,
  gpu_util_coverage_low,  // GPU-Util covered under kMinGpuUtilCoveragePct of the chip-sampled time
};
// Why stranded capacity is not split into idle and active.
enum class SplitMissing {
  none,
  no_gap,        // as the gap is missing
  negative_gap,  // GPU-Util reads below DIE-Util by more than its noise floor
};
// Why a span's result is partial (its chip coverage gate).
enum class PartialCause {
  none,
  low_coverage,   // usable chip samples covered under kMinChipCoveragePct
  not_scheduled,  // duty cycling: the counters were not scheduled to run during the span
};
// The chip coverage gate's verdict on a span (docs/method.md#chip-coverage-and-partial-results).
enum class CoverageGate { pass, partial };
// Which GPU-Util readings a span's figure came from.
enum class GpuUtilFrom { none, samples, polled, samples_and_polled };

// The headline in whole tenths of a point, computed from rounded inputs so the parts add up:
// stranded = idle + active, gap = active (docs/method.md#the-headline-gap-stranded-idle-active).
struct Headline {
  std::optional<int> gpu_util_tenths;
  std::optional<int> die_util_tenths;
  std::optional<int> gap_tenths;        // GPU-Util - DIE-Util; negative gaps are kept
  std::optional<int> stranded_tenths;   // 100 - DIE-Util
  std::optional<int> idle_tenths;       // 100 - GPU-Util (nothing running)
  std::optional<int> active_tenths;     // stranded while a kernel ran
  bool gap_within_noise_floor = false;  // |gap| <= floor: counted as 0, idle takes all of stranded
  GapMissing gap_missing = GapMissing::none;
  SplitMissing split_missing = SplitMissing::none;
  // A negative gap whose busiest unit GPU-Util does not count (a video engine): that unit's label.
  std::string uncounted_limiting_unit;
};

struct ClockStats {
  double min_mhz = kNaN;
  double max_mhz = kNaN;
  double mean_mhz = kNaN;  // time-weighted
  int readings = 0;
};

// What the host was doing while the GPU idled, and the verdict when the evidence is clear
// (docs/method.md#stranded-idle-explained). Figures are means weighted by GPU-idle time; the *_busy
// ones by GPU-busy time, for contrast. NaN where the recording has no such stream.
enum class IdleVerdict {
  not_explained,       // see IdleExplanation::why_not
  own_io_bound,        // the command waited on its own reads from storage
  input_bound,         // the command's worker processes were saturated
  one_thread_bound,    // one CPU thread ran flat out
  host_cpu_saturated,  // every logical CPU was busy
  io_bound,            // the host waited on storage
  memory_pressure,     // memory nearly exhausted
  no_clear_cause,      // none of the rules held
};
enum class IdleNotExplained {
  none,
  no_host_streams,           // the recording has no host probes
  no_gpu_util,               // no GPU-Util over the span: idle time is unknown
  idle_too_small,            // idle share below kMinIdlePointsToExplain
  too_little_idle_observed,  // host samples cover under kMinIdleSecondsObserved of GPU-idle time
};
struct IdleProcess {
  std::int64_t pid = 0;
  std::string name;
  double cores = kNaN;               // idle-weighted proc__cycles_active / 100
  double threads = kNaN;             // idle-weighted proc__threads
  double busiest_thread_pct = kNaN;  // idle-weighted proc__thread_cycles_active.max, % of a core
};
struct IdleExplanation {
  IdleVerdict verdict = IdleVerdict::not_explained;
  IdleNotExplained why_not = IdleNotExplained::no_host_streams;
  double idle_points = kNaN;    // the span's idle share, from the headline
  double idle_observed_s = 0;   // GPU-idle seconds the host samples cover
  double busy_observed_s = 0;   // GPU-busy seconds they cover
  int logical_cpus = 0;         // 0: unknown
  double command_cores = kNaN;  // all the command's processes
  double command_cores_busy = kNaN;
  double workers = kNaN;  // mean count of worker processes (not the root) with a CPU value
  double worker_cores = kNaN;
  double worker_cores_busy = kNaN;
  double worker_capacity_cores = kNaN;              // workers, capped at logical CPUs
  std::vector<std::string> worker_names;            // distinct, in order of first appearance
  std::optional<IdleProcess> root;                  // the command's root process
  std::optional<IdleProcess> busiest;               // the process with the most CPU while the GPU idled
  std::optional<IdleProcess> busiest_thread_owner;  // the process whose busiest thread ran most
  double host_cpu_busy_pct = kNaN;
  double host_cpu_busy_pct_busy = kNaN;
  double iowait_pct = kNaN;
  double disk_read_bytes_per_s = kNaN;  // summed over devices
  double disk_write_bytes_per_s = kNaN;
  double disk_busy_max_pct = kNaN;  // the busiest device's disk__busy.pct
  std::string busiest_disk;
  double memory_available_pct = kNaN;  // mem__available_bytes of mem__capacity_bytes
  // The command's own I/O (docs/method.md#stranded-idle-explained): the share of the GPU-idle time
  // (with storage figures) in which it was doing I/O (reading at least kOwnReadMinBytesPerS from
  // storage, or with kOwnBlockedMinThreads threads blocked on I/O); the bytes per second its processes
  // read from storage over all the idle time; over the I/O time, the cores the readers (the processes
  // that read or waited) spent in the kernel or blocked on I/O, and all the readers' cores (on CPU or
  // blocked); how the blocked part was read.
  double own_read_share = kNaN;
  double own_read_bytes_per_s = kNaN;
  double own_io_cores = kNaN;
  double own_reader_cores = kNaN;
  enum class Blocked { not_seen, delay_accounting, thread_states };
  Blocked own_blocked_from = Blocked::not_seen;
  std::vector<std::string> reader_names;  // distinct, in order of first appearance
};

// Where a span's energy came from (docs/energy.md#the-rules): NVML's energy counter, the power draw
// integrated over time where the counter is absent or goes back, or neither.
enum class EnergySource { none, counter, power_draw };
// Why the counter was not used: it was not read (NaN) or it went back (a wrap or a driver reload).
enum class CounterUnused { none, absent, went_back };
// Why a span has no energy at all.
enum class EnergyMissing {
  none,
  not_computed,  // figures not made by the analysis (a span built by hand)
  not_recorded,  // a recording before format 4: power lines held the limit alone
  no_readings,   // fewer than two power readings around the span
  unreadable,    // neither the counter nor the draw could be read over all of it
};

// Where a span's FLOPs came from (docs/energy.md#joules-per-tflop): the measured program printed
// them (a flops note), or nowhere.
enum class FlopsSource { none, program };
// Why a span of a recording that holds the program's FLOPs has none: they were given for the other
// span.
enum class FlopsMissing { none, window_only, run_only };

// Energy over one span (docs/energy.md).
struct EnergyFigures {
  double energy_j = kNaN;  // over the part of the span the power readings cover
  EnergySource source = EnergySource::none;
  CounterUnused counter_unused = CounterUnused::none;
  EnergyMissing missing = EnergyMissing::not_computed;
  double covered_s = 0;          // time between power readings inside the span
  double coverage_pct = kNaN;    // covered_s of the span's length
  double mean_power_w = kNaN;    // energy_j / covered_s
  double chip_sampled_j = kNaN;  // over the usable chip samples' time, by the same source
  // Over the usable chip samples whose DIE-Util was under kStrandedEnergyDieUtilPct ("energy
  // stranded"), and its share of chip_sampled_j.
  double stranded_j = kNaN;
  double stranded_pct = kNaN;
  // Joules per TFLOP (docs/energy.md#joules-per-tflop), only where the recording holds the program's
  // FLOPs (flops_told): its FLOPs over this span, or why not, and energy_j over them in 1e12.
  bool flops_told = false;
  double flops = kNaN;
  FlopsSource flops_source = FlopsSource::none;
  FlopsMissing flops_missing = FlopsMissing::none;
  double joules_per_tflop = kNaN;
};

// The figures of one span: the whole run, or the steady window.
struct SpanResults {
  bool is_window = false;  // the steady window's results; else the whole run's
  recording::TimeNs start_ns = 0;
  recording::TimeNs end_ns = 0;
  double span_s = 0;

  // Chip samples.
  std::int64_t samples_read = 0;
  std::int64_t samples_used = 0;
  std::int64_t dropped_first = 0;   // first sample after each counters start
  std::int64_t dropped_broken = 0;  // NaN unit or diagnostic, empty span, missing end
  double chip_covered_s = 0;        // usable chip samples' time inside the span
  double chip_coverage_pct = kNaN;  // of the span, or of the scheduled counter time under duty
  double chip_scheduled_s = kNaN;   // time the counters were scheduled to run; NaN unless duty-cycled
  bool partial = false;             // chip coverage below the gate
  PartialCause partial_cause = PartialCause::none;

  // DIE-Util and its parts.
  double die_util_pct = kNaN;  // time-weighted busiest unit, mean clamped to 0..100
  DieUtilMissing die_util_missing = DieUtilMissing::none;
  std::vector<ColumnSummary> units;  // chip units then engines, in table order
  std::vector<ColumnSummary> diagnostics;
  std::optional<std::string> limiting_unit;
  LimitingUnitMissing limiting_unit_missing = LimitingUnitMissing::none;

  // GPU-Util over the same time as the chip samples; with no usable chip time, over the whole span
  // (docs/method.md#gpu-util-without-chip-samples).
  double gpu_util_pct = kNaN;
  double gpu_util_coverage_pct = kNaN;  // share of chip-sampled time that GPU-Util covers
  GpuUtilMissing gpu_util_missing = GpuUtilMissing::none;
  GpuUtilFrom gpu_util_from = GpuUtilFrom::none;
  // GPU-Util over the whole span, shown beside a partial result when NVML covered >= 90% of it.
  double gpu_util_whole_span_pct = kNaN;
  double gpu_util_whole_span_coverage_pct = kNaN;

  Headline headline;

  // Counted rates per second from raw totals, e.g. {"dram_bytes": 3.9e12}.
  std::map<std::string, double> rates_per_s;

  // Hardware state over the span.
  ClockStats sm_clock;
  ClockStats mem_clock;
  std::optional<std::vector<std::string>> throttle_reasons;  // nullopt: NVML could not say
  double power_limit_min_w = kNaN;
  double power_limit_max_w = kNaN;

  // What the host did while the GPU idled (docs/method.md#stranded-idle-explained).
  IdleExplanation idle_explained;

  // Energy over the span (docs/energy.md).
  EnergyFigures energy;
};

// How the steady window was found, or why it was not (docs/method.md#the-steady-window).
enum class WindowFinding {
  not_asked,  // the analysis was asked for the whole run only
  markers,    // found: the first start marker and the first stop marker after it
  no_markers,
  stop_without_start,  // stop markers and no start marker
  stop_before_start,   // a start marker, with stop markers only before it
  start_without_stop,  // a start marker and no stop marker
  outside_run,         // the markers lie outside the run
};

struct WindowResults {
  bool found = false;
  WindowFinding finding = WindowFinding::not_asked;
  SpanResults results;
};

// A process other than the measured command's and diescope's on NVIDIA's process lists during the
// run (docs/method.md#shared-gpus-in-the-headline).
struct OtherProcess {
  std::int64_t pid = 0;
  std::string name;                // empty when /proc could not say
  recording::TimeNs first_ns = 0;  // when it was first seen on the lists
};

struct Hygiene {
  std::optional<int> compute_holders_max;  // nullopt: the process list could not be read
  std::optional<int> graphics_holders_max;
  int exited_holders = 0;
  // From the holder records (recording format 3 on): every other process, in the order first seen,
  // and the most of them on the lists at once. `holders_recorded` false: the recording has no holder
  // record (an older format, the agent's records, or lists that never held anyone), so only the
  // counts above are known.
  bool holders_recorded = false;
  std::vector<OtherProcess> other_processes;
  int other_processes_max = 0;
  std::vector<recording::ClockJump>
      clock_jumps;  // the report notes each: figures over spans across it may be wrong
};

// Something the analysis found about the recording itself. The report shows each as a note with
// topic "analysis", after the recording's own notes.
struct AnalysisFinding {
  enum class Kind {
    no_end_record,        // cut off: the run is taken to end at its last record
    truncated,            // the recording ends mid-record
    samples_outside_run,  // chip samples wholly outside the run, left out
    impossible_values,    // chip samples in the run with a value no counter can produce, left out
  };
  Kind kind = Kind::no_end_record;
  recording::TimeNs ts_ns = 0;
  double run_s = 0;          // no_end_record: from the run's start to its last record
  std::int64_t samples = 0;  // samples_outside_run, impossible_values: how many
};

struct Analysis {
  int method = 0;
  recording::RecordingMeta meta;
  SpanResults run;
  WindowResults window;
  Hygiene hygiene;
  std::vector<recording::Note> notes;  // from the recording (sampler stopped, GPU-Util fallback, ...)
  std::vector<AnalysisFinding> findings;
  bool truncated_input = false;
};

}  // namespace diescope::analysis
