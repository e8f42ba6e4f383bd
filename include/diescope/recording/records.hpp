// The records of a measured run: what collectors write, what recordings store, what the analysis
// reads. Plain data, no behaviour. docs/recording-format.md describes how each is stored on disk;
// a kind's kKindWord is the first word of its lines there. record_kinds.hpp lists every kind.
//
// Invariants shared by every producer and consumer:
//  - Every time is nanoseconds since the Unix epoch on the host's CLOCK_REALTIME timeline
//    (collectors convert GPU and NVML timestamps onto it). TimeNs is signed so differences are safe.
//  - Within one record kind, times never decrease in a recording (readers reject it).
//  - A value that could not be read is NaN; it is never 0. Where a reason is known it travels in a note.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "diescope/metrics/descriptor.hpp"

namespace diescope::recording {

using TimeNs = std::int64_t;
inline constexpr TimeNs kNsPerMs = 1'000'000;
inline constexpr TimeNs kNsPerSecond = 1'000'000'000;

// How a unit's value is made from chip counters: a counter, or the mean of two
// (docs/method.md#units-and-recipes).
struct UnitRecipe {
  enum class Combine { counter, mean };
  Combine combine = Combine::counter;
  std::vector<std::string> counters;  // full CUPTI metric names, one or two
};

// Flags a reader must see beside a unit's number (results.unit_flags).
enum class UnitFlag {
  stand_in_counter,   // a nearby counter read in place of the direct one
  different_measure,  // measures something other than the unit's name says (e.g. Turing's fbpa)
};

// Where a column's values come from.
enum class UnitSource {
  chip,         // CUPTI PM sampling, one value per chip sample
  nvml_engine,  // an NVML engine reading (video encoder/decoder, JPEG), matched to chip samples
  gpm,          // NVML's GPM metrics, one value per chip sample (docs/method.md#gpm-as-a-second-chip-source)
};

// One column of a recording: a DIE-Util unit, a diagnostic, or a raw count.
struct ColumnDef {
  std::string key;     // stable identifier, e.g. "fp32", "dram", "nvenc"
  std::string label;   // shown to people, e.g. "FP32", "DRAM"
  std::string metric;  // metric-model name (docs/metrics.md), e.g. "dram__bytes.sum"
  UnitRecipe recipe;   // how it was read
  UnitSource source = UnitSource::chip;
  std::vector<UnitFlag> flags;
  std::string note;                 // what a reader must know to trust it
  bool counted_by_gpu_util = true;  // false for units GPU-Util does not see (video engines)
  std::string unit = "pct";         // "pct" (of peak) for units and diagnostics; "bytes" etc. for counts
};

struct GpuIdentity {
  int index = -1;
  std::string uuid;
  std::string model;           // "NVIDIA H200"
  std::string chip;            // CUPTI chip name, "GH100"
  std::string driver;          // "580.159"
  int compute_capability = 0;  // major*10+minor, 90 for Hopper
  std::int64_t l2_bytes = 0;   // 0 when unknown
  int sm_count = 0;
  std::string pci_bus_id;  // "00000000:19:00.0" (NVML); empty when unknown
};

// The defaults every command and collector shares, written once (docs/command-line.md#shared-options):
// the chip sample interval, how often the counter buffer is decoded, and how often the host probes read.
inline constexpr double kDefaultIntervalMs = 10;
inline constexpr double kDefaultDrainMs = 1000;
inline constexpr double kDefaultHostIntervalMs = 100;

// Metadata written once at the head of a recording.
struct RecordingMeta {
  int format_version = 1;
  std::string tool_version;
  int method = 0;  // method version of the collector that wrote it
  GpuIdentity gpu;
  std::string unit_table;              // name of the unit table, e.g. "hopper-gh100"
  std::vector<ColumnDef> units;        // DIE-Util candidates read from the chip, one value per chip sample
  std::vector<ColumnDef> diagnostics;  // read from the chip, not part of DIE-Util
  std::vector<ColumnDef> counts;       // raw totals per sample (e.g. dram__bytes.sum), may be NaN
  std::vector<ColumnDef> engines;      // NVML engines; units of DIE-Util with source nvml_engine
  double interval_ms = kDefaultIntervalMs;  // chip sampling interval
  double drain_ms = kDefaultDrainMs;        // how often the counter buffer is decoded
  double gpu_util_resolution_pct = 1;       // NVML reports whole percents
  TimeNs start_ns = 0;                      // when the measured command (or replay) started
  std::string run_type = "single";          // single | round | sustained
  std::vector<std::string> command;         // argv of the measured command, empty when none
  std::string host;
  // Duty cycling (agent): counters on for duty_on_ms of every duty_period_ms; 0 when always on.
  double duty_on_ms = 0;
  double duty_period_ms = 0;
  // How often the host probes read /proc (docs/recording-format.md#host-streams); NaN when the
  // recording has no host probes (every version-1 recording).
  double host_interval_ms = std::numeric_limits<double>::quiet_NaN();
};

struct ChipSample {
  static constexpr std::string_view kKindWord = "chip";
  TimeNs start_ns = 0;
  TimeNs end_ns = 0;
  // Views into the reader's buffers, valid until the next read; sizes match the meta's columns.
  std::span<const double> units;
  std::span<const double> diagnostics;
  std::span<const double> counts;
};
// A chip sample that owns its values.
struct OwnedChipSample {
  TimeNs start_ns = 0;
  TimeNs end_ns = 0;
  std::vector<double> units, diagnostics, counts;
};

enum class UtilSource { samples, polled };

// One NVML GPU-Util reading. Booking it to time is the analysis's job (docs/method.md#gpu-util).
struct UtilSample {
  static constexpr std::string_view kKindWord = "util";
  TimeNs ts_ns = 0;
  double pct = 0;  // NaN not allowed: an unreadable poll is simply not recorded
  UtilSource source = UtilSource::samples;
};

struct ClockReading {
  static constexpr std::string_view kKindWord = "clock";
  TimeNs ts_ns = 0;
  double sm_mhz = 0;   // NaN when unreadable
  double mem_mhz = 0;  // NaN when unreadable
};

// NVML clock-event ("throttle") reasons, bit values as NVML defines them.
enum ThrottleBit : std::uint64_t {
  throttle_gpu_idle = 0x1,
  throttle_applications_clocks = 0x2,
  throttle_sw_power_cap = 0x4,
  throttle_hw_slowdown = 0x8,
  throttle_sync_boost = 0x10,
  throttle_sw_thermal = 0x20,
  throttle_hw_thermal = 0x40,
  throttle_hw_power_brake = 0x80,
  throttle_display_clocks = 0x100,
};

struct ThrottleReading {
  static constexpr std::string_view kKindWord = "throttle";
  TimeNs ts_ns = 0;
  std::optional<std::uint64_t> mask;  // nullopt: NVML could not say
};

// One read of NVML's power figures (docs/recording-format.md#records). Before format 4 a power line
// held the limit alone: draw and energy read back as NaN.
struct PowerLimitReading {
  static constexpr std::string_view kKindWord = "power";
  TimeNs ts_ns = 0;
  double limit_w = 0;  // enforced power limit; NaN when unreadable
  // nvmlDeviceGetPowerUsage in watts; NaN when unreadable or not recorded.
  double draw_w = std::numeric_limits<double>::quiet_NaN();
  // nvmlDeviceGetTotalEnergyConsumption: millijoules since the driver loaded; NaN when unreadable or
  // not recorded. Kept as a double: exact to 2^53 mJ, 285 years at 1 kW.
  double energy_mj = std::numeric_limits<double>::quiet_NaN();
};

// Engine utilisation readings; one value per meta.engines column, NaN when unreadable.
struct EngineReading {
  static constexpr std::string_view kKindWord = "engine";
  TimeNs ts_ns = 0;
  std::span<const double> values;
};
// An engine reading that owns its values.
struct OwnedEngineReading {
  TimeNs ts_ns = 0;
  std::vector<double> values;
};

// Other processes holding the GPU, from one read of NVML's process lists (hygiene).
struct ProcessReading {
  static constexpr std::string_view kKindWord = "proc";
  TimeNs ts_ns = 0;
  int compute = -1;  // -1: the list could not be read
  int graphics = -1;
  int exited = 0;  // holders that exited before they could be traced
};

// ---- host streams (docs/recording-format.md#host-streams) ----------------------------------------

// One value of one host stream: the stream's id (HostStream::id) and its value in the stream's unit,
// NaN when it could not be read.
struct HostValue {
  std::int64_t id = 0;
  double value = 0;
  bool operator==(const HostValue&) const = default;
};

// One read of the host probes: values of some of the declared streams, ids ascending. A rate
// (per second, percent of a core) covers the time since the previous read of the same stream; a
// gauge is the level at ts_ns.
struct HostSample {
  static constexpr std::string_view kKindWord = "host";
  TimeNs ts_ns = 0;
  std::span<const HostValue> values;  // views into the reader's buffer, valid until the next read
};
// A host sample that owns its values.
struct OwnedHostSample {
  TimeNs ts_ns = 0;
  std::vector<HostValue> values;
};

enum class MarkKind { start, stop };
struct Mark {
  static constexpr std::string_view kKindWord = "mark";
  TimeNs ts_ns = 0;
  MarkKind kind = MarkKind::start;
};

// The counters were enabled or disabled. The first chip sample after each "on" spans setup.
struct CountersEvent {
  static constexpr std::string_view kKindWord = "counters";
  TimeNs ts_ns = 0;
  bool on = true;
  std::string reason;  // why they went off, empty for the ordinary end
};

struct Note {
  static constexpr std::string_view kKindWord = "note";
  TimeNs ts_ns = 0;
  std::string topic;  // e.g. "sampler", "gpu_util", "clock"
  std::string text;
};

// The wall clock stepped against the monotonic clock.
struct ClockJump {
  static constexpr std::string_view kKindWord = "jump";
  TimeNs ts_ns = 0;
  TimeNs step_ns = 0;
};

// Declares one host stream with its metric descriptor (name, type, unit, peak, scope), before any
// of its values. Renderers and the analysis need no probe-specific code: the descriptor says
// what a stream is.
struct HostStream {
  static constexpr std::string_view kKindWord = "hstream";
  TimeNs ts_ns = 0;
  std::int64_t id = 0;  // 0 or more, unique in the recording
  metrics::MetricDescriptor descriptor;
};

// A process of the measured command's tree, first seen at ts_ns: its pid, its parent's pid and its
// name (/proc/PID/comm at that time). The root is the task whose parent is not a task. A pid whose
// name changes (an exec) gets another task record; the latest names it.
struct HostTask {
  static constexpr std::string_view kKindWord = "task";
  TimeNs ts_ns = 0;
  std::int64_t pid = 0;
  std::int64_t ppid = 0;
  std::string name;
};

// ---- processes on the GPU (docs/recording-format.md#gpu-holders) --------------------------------

// Whose a process on NVIDIA's process lists is, or that it left them.
enum class HolderRole {
  command,   // the measured command or one of its descendants
  diescope,  // diescope itself or one of its own children (the counter sampler)
  other,     // any other process: its work is in every chip figure
  gone,      // the pid is on neither list any more
};

// A process that started holding the GPU at ts_ns (compute or graphics list), or left the lists
// (role gone). Written when the set of holders changes, so a reader can replay who held the GPU when.
struct GpuHolder {
  static constexpr std::string_view kKindWord = "holder";
  TimeNs ts_ns = 0;
  std::int64_t pid = 0;
  HolderRole role = HolderRole::other;
  std::string name;  // /proc/PID/comm when it could be read; empty otherwise, and for gone
};

// How the measured run ended. An end record stores it as text (format.hpp, run_ending_text());
// the report words it for people (report/wording.hpp).
struct RunEnding {
  enum class Way {
    unstated,    // the recording does not say
    exited,      // the command exited (its code is the end record's)
    signal,      // a signal ended it
    period_end,  // the agent closed one of its periods (never written to a file)
    other,       // words another writer chose, kept as they are
  };
  Way way = Way::unstated;
  int signal = 0;    // Way::signal: the signal's number
  std::string text;  // Way::other: the recorded words

  static RunEnding exit() { return {Way::exited, 0, {}}; }
  static RunEnding killed_by(int signal_number) { return {Way::signal, signal_number, {}}; }
  static RunEnding period_end() { return {Way::period_end, 0, {}}; }
  bool operator==(const RunEnding&) const = default;
};

// The measured run ended.
struct RunEnd {
  static constexpr std::string_view kKindWord = "end";
  TimeNs ts_ns = 0;
  int exit_code = 0;
  RunEnding ending;
};

}  // namespace diescope::recording
