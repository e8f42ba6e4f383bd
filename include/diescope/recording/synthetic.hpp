// Synthetic recordings: a timeline of phases (idle, compute, copy, ...) turned into the records a
// collector would write. Used by the tests, by the analysis benchmark (a 24-hour recording streamed
// to disk without being held in memory) and to make the bundled recording
// data/recordings/h200-probe-shape.dsrec. Deterministic: the same spec gives the same bytes.
//
// How records are made from the phases:
//  - Chip samples tile the run from meta.start_ns: the first spans the setup (setup_ns, values
//    setup_*), then one every meta.interval_ms. A sample's unit and diagnostic values are the
//    time-weighted mean of the phases it overlaps (a sample cut by a phase change reads a mix, as on
//    hardware), times (1 + jitter * u) with u uniform in [-1, 1], clamped to 0..100, then rounded to
//    `significant_digits`. Counts are each phase's rate per second times the overlap.
//  - GPU-Util (source samples) every util_period_ns: the whole-percent time-weighted mean of the
//    phases' gpu_util_pct over the period before it.
//  - Clocks and throttle reasons every clock_period_ns (gpu_idle while the phase's GPU-Util is 0,
//    none otherwise); one process reading at the start; one power reading at the start, or with
//    every clock reading when the spec sets a power draw.
//  - counters on at the start and off at the end, `marks` and `notes` as given, and a run end.
//  - Host streams (when the spec declares some): their hstream and task records at the start, then a
//    host sample every host_period_ns whose values are the time-weighted mean of the phases'
//    host values (spec.host_values) over the period before it (the setup counts for nothing; NaN values are
//    left out).
#pragma once

#include <cstdint>
#include <filesystem>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "diescope/recording/memory_recording.hpp"
#include "diescope/recording/records.hpp"
#include "diescope/recording/sink.hpp"

namespace diescope::recording {

struct SyntheticPhase {
  std::string name;
  double seconds = 0;
  std::vector<double> units;        // percent of peak, one per meta.units column (NaN allowed)
  std::vector<double> diagnostics;  // percent of peak, one per meta.diagnostics column
  std::vector<double> count_rates;  // per second, one per meta.counts column
  double gpu_util_pct = 0;          // what NVML would report while only this phase runs
};

struct SyntheticSpec {
  RecordingMeta meta;   // columns, interval and start time of the run
  TimeNs setup_ns = 0;  // span of the first chip sample; 0: the first sample is regular
  std::vector<double> setup_units, setup_diagnostics, setup_counts;  // that sample's values
  std::vector<SyntheticPhase> phases;
  long cycles = 1;         // the phases play in order this many times
  double run_seconds = 0;  // above 0: the run (after setup) stops here, cutting the cycles
  TimeNs util_period_ns = 200 * kNsPerMs;
  TimeNs clock_period_ns = 100 * kNsPerMs;
  double sm_mhz = 1980;
  double mem_mhz = 0;  // NaN: not read
  double power_limit_w = 700;
  // A steady power draw (W); NaN: neither the draw nor the energy counter is recorded. When set, a
  // power reading goes with every clock reading, its counter energy_start_mj plus the draw integrated.
  double power_draw_w = std::numeric_limits<double>::quiet_NaN();
  double energy_start_mj = 1e9;
  double jitter = 0;  // relative noise on unit, diagnostic and count values
  std::uint64_t seed = 1;
  int significant_digits = 4;  // 0 keeps full precision
  std::vector<Mark> marks;
  std::vector<Note> notes;               // written before the first chip sample
  std::vector<double> engine_values;     // one per meta.engines column, written with each clock reading
  std::vector<HostStream> host_streams;  // declared at the start (their ts_ns is ignored)
  std::vector<HostTask> host_tasks;      // written at the start (their ts_ns is ignored)
  // Per phase (same order as `phases`), one value per host stream in its unit (NaN: not read).
  std::vector<std::vector<double>> host_values;
  TimeNs host_period_ns = 100 * kNsPerMs;
};

// Writes the records of `spec` to `sink` in time order. Throws Error when the spec's vectors do not
// match the meta's columns.
void generate_synthetic(const SyntheticSpec& spec, RecordSink& sink);
// Streams the recording to `path`; memory use does not depend on the recording's length.
void write_synthetic_recording(const std::filesystem::path& path, const SyntheticSpec& spec);
// The recording held in memory (for tests).
std::unique_ptr<MemoryRecording> make_synthetic_recording(const SyntheticSpec& spec);

// A Hopper-like column set: units fp32, tensor, dram, l2; diagnostics sm_active, gr_active; count
// dram_bytes. GPU identity of an H200. host "synthetic".
RecordingMeta synthetic_hopper_meta();
// The bundled recording: the shape of the first H200 probe's run (docs/method.md#the-first-h200-probe; setup
// sample of 614 ms, idle 0.3 s, FFMA 1.04 s, idle 0.3 s, copy 1 s, idle 0.3 s; 10 ms samples).
SyntheticSpec h200_probe_shape_spec();
// A long run for benchmarks: `hours` of 10 ms samples (24 h: 8.64 million) with 8 units, 2
// diagnostics and 1 count, GPU-Util every 200 ms and clocks every 100 ms, cycling through a 60 s
// pattern of compute, input-bound, idle and memory-bound phases with 2% jitter.
SyntheticSpec long_run_spec(double hours = 24);
// An input-bound training run with host streams, bundled as data/recordings/synthetic-input-bound.dsrec
// (docs/method.md#stranded-idle-explained): 8 logical CPUs; a main process (pid 1000) and four
// data-loader workers (pids 1001-1004); 20 cycles of a 0.6 s GPU step (tensor 60%, GPU-Util 100)
// and a 0.4 s wait (GPU idle) during which the workers use 98% of a core each.
// `workers_busy_pct_while_idle` sets that 98%.
SyntheticSpec input_bound_spec(double workers_busy_pct_while_idle = 98);

}  // namespace diescope::recording
