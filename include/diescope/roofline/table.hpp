// The roofline table: one row per kernel launch (or per aggregated group), with the work, the bytes,
// the clocks and both kinds of ceiling (docs/roofline.md). Results only: the CSV, SVG and HTML
// writers are in csv.hpp and plot.hpp.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

namespace diescope::roofline {

// Where FLOPs are counted (docs/roofline.md#flops). The CUDA-core precisions come from executed SASS
// thread instructions, the tensor ones from the tensor path's math operations.
enum class Precision {
  fp16,
  fp32,
  fp64,
  tensor_fp16,
  tensor_bf16,
  tensor_tf32,
  tensor_fp8,
  tensor_int8,
  tensor_fp64
};
inline constexpr std::size_t kPrecisions = 9;
inline constexpr std::array<Precision, kPrecisions> kAllPrecisions = {
    Precision::fp16,        Precision::fp32,        Precision::fp64,
    Precision::tensor_fp16, Precision::tensor_bf16, Precision::tensor_tf32,
    Precision::tensor_fp8,  Precision::tensor_int8, Precision::tensor_fp64};
// "fp32", "tensor bf16": the words in CSV headers and plot labels.
std::string_view precision_name(Precision p);
// "FLOP", or "OP" for int8 (integer operations).
std::string_view precision_unit(Precision p);
bool is_tensor(Precision p);

// The memory levels bytes are counted at (docs/roofline.md#bytes).
enum class Level { dram, l2, l1 };
inline constexpr std::size_t kLevels = 3;
inline constexpr std::array<Level, kLevels> kAllLevels = {Level::dram, Level::l2, Level::l1};
std::string_view level_name(Level l);  // "dram", "l2", "l1"

template <class E>
constexpr std::size_t index(E e) {
  return static_cast<std::size_t>(e);
}

using PerPrecision = std::array<double, kPrecisions>;
using PerLevel = std::array<double, kLevels>;
PerPrecision nan_per_precision();
PerLevel nan_per_level();

// The backend that measured a row (docs/roofline.md#backends); profiler_name is the word the CSV
// table, the plot and the printed table use, profiler_from_name reads it back.
enum class Profiler { ncu, range, sampled };
std::string_view profiler_name(Profiler profiler);  // "ncu", "range", "sampled"
std::optional<Profiler> profiler_from_name(std::string_view name);

// One row. "Not available" is NaN (a metric the report lacks, a ceiling with no calibration).
struct Row {
  Profiler profiler = Profiler::ncu;  // the backend that measured it (docs/roofline.md#backends)
  std::string executable;             // the target's name (the file name of what was profiled)
  std::string kernel;                 // the kernel's (demangled) name as ncu prints it
  std::int64_t launch = 0;            // ncu's launch ID; for an aggregated row the first launch of the group
  std::string region;         // the NVTX region (docs/roofline.md#regions); empty: outside every region
  std::string grid, block;    // "(x, y, z)"; empty for an aggregated row of several shapes
  std::int64_t launches = 1;  // launches this row stands for
  std::string gpu;            // "NVIDIA H200"
  std::string driver;         // "580.159.04": what the calibration lookup matches; empty when unknown
  double duration_s = 0;      // gpu__time_duration.sum (summed for an aggregated row)

  double sm_hz = 0;                     // sm__cycles_elapsed.avg.per_second
  PerLevel level_hz = nan_per_level();  // dram__ / lts__ / l1tex__cycles_elapsed.avg.per_second
  PerPrecision flop = nan_per_precision();
  // docs/roofline.md#packed-half-precision: the FP16 thread instructions (HADD2, HMUL2, HFMA2, in
  // that order; NaN: not counted). flop[fp16] counts each with the lanes its kernel's SASS shows;
  // where they are not known it is the bottom of a range whose top (every instruction two lanes) is
  // fp16_flop_high, and fp16_why says why (NaN and empty when known).
  std::array<double, 3> fp16_inst = {std::numeric_limits<double>::quiet_NaN(),
                                     std::numeric_limits<double>::quiet_NaN(),
                                     std::numeric_limits<double>::quiet_NaN()};
  double fp16_flop_high = std::numeric_limits<double>::quiet_NaN();
  std::string fp16_why;
  double tensor_inst = 0;  // sm__inst_executed_pipe_tensor.sum: warp instructions on the tensor pipe
  PerLevel bytes = nan_per_level();

  // Counter peaks per cycle of the whole GPU (…peak_sustained), times the clock the unit ran at.
  PerPrecision peak_flop_per_cycle = nan_per_precision();
  PerLevel peak_bytes_per_cycle = nan_per_level();
  // Ceilings measured by `diescope calibrate` (docs/roofline.md#ceilings), NaN where none.
  PerPrecision measured_flop_per_s = nan_per_precision();
  PerLevel measured_bytes_per_s = nan_per_level();
  std::string calibration;  // the calibration file's name, or why there is none
  // The caches each launch started from (docs/roofline.md#dram-bytes-and-the-cache-flush): "flushed"
  // (ncu's default: flushed before every kernel), "unflushed" (ncu with --cache-control none: as
  // ncu's previous replay pass left them), "program" (the range and sampled backends: as the program
  // left them); empty: not recorded.
  std::string caches;
  // docs/roofline.md#energy: the joules over the row's kernel windows from the recording's power
  // readings (the sampled backend; NaN for the others) and their source: "counter" (NVML's energy
  // counter), "power_draw" (the draw integrated), empty where none was read.
  double energy_j = std::numeric_limits<double>::quiet_NaN();
  std::string energy_source;
};

// The values of Row::energy_source.
inline constexpr const char* kEnergyCounter = "counter";
inline constexpr const char* kEnergyPowerDraw = "power_draw";

// The values of Row::caches.
inline constexpr const char* kCachesFlushed = "flushed";
inline constexpr const char* kCachesUnflushed = "unflushed";
inline constexpr const char* kCachesProgram = "program";

// A warning when `rows` hold launches measured from caches in more than one of those states (their
// DRAM bytes are not comparable); nullopt when they do not.
std::optional<std::string> mixed_caches_warning(const std::vector<Row>& rows);

// Derived figures (docs/roofline.md#derived), computed from a row, never stored apart from it.
double counter_peak_flop_per_s(const Row& r, Precision p);  // peak per cycle x sm_hz
double counter_peak_bytes_per_s(const Row& r, Level l);     // peak per cycle x that level's clock
// The precision with the most FLOPs; nullopt when the row has none.
std::optional<Precision> dominant_precision(const Row& r);
double dominant_flop(const Row& r);       // FLOPs of the dominant precision (0 when none)
double intensity(const Row& r, Level l);  // dominant FLOPs / bytes at l (NaN without bytes)
double performance(const Row& r);         // dominant FLOPs / duration
// The lowest roof over the dominant precision's compute ceiling and intensity x bandwidth at every
// level; measured ceilings where the calibration has them, else counter peaks.
struct Roof {
  double flop_per_s = 0;  // NaN when the row has no FLOPs or no ceilings
  std::string which;      // "fp32", "dram", ...
  bool measured = false;  // from the calibration (else a counter peak)
};
Roof binding_roof(const Row& r);
double pct_of_roof(const Row& r);  // performance / roof x 100
// docs/roofline.md#energy: energy over the row's work (the dominant precision's FLOPs) in 1e12;
// NaN where either is unknown, and why.
double joules_per_tflop(const Row& r);
std::string joules_per_tflop_missing(const Row& r);  // empty when known

// docs/roofline.md#regions: launches outside every NVTX region are dropped, except in an executable
// with no region at all (kept whole; a warning says why). `keep` (when given) keeps only regions
// that match it (std::regex_search). Warnings are appended.
std::vector<Row> filter_regions(std::vector<Row> rows, const std::optional<std::regex>& keep,
                                std::vector<std::string>& warnings);

// Keeps the rows whose kernel name matches `kernel` (std::regex_search).
std::vector<Row> filter_kernels(std::vector<Row> rows, const std::regex& kernel);

enum class Aggregate { none, sum, dominant };
Aggregate parse_aggregate(std::string_view text);  // throws UsageError
// docs/roofline.md#aggregation. sum: one row per executable and region, work and time added;
// dominant: per executable and region, the kernel (by name) with the most time, its launches added.
std::vector<Row> aggregate(const std::vector<Row>& rows, Aggregate how);

// docs/roofline.md#the-sampled-backend: a row without counter peaks per cycle (the sampled backend reads
// none) takes those of the first row of the same GPU model that has them (a peak per cycle is the GPU's,
// not the launch's). Returns the indexes of the rows that took them.
std::vector<std::size_t> borrow_counter_peaks(std::vector<Row>& rows);

// Concatenates tables, keeping the first row for each backend, executable, region and launch ID.
std::vector<Row> concatenate(const std::vector<std::vector<Row>>& tables);

}  // namespace diescope::roofline
