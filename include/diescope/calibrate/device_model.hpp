// The device model calibrate fits (docs/calibration.md#device-model): a DRAM
// bandwidth ceiling from the four STREAM kernels, a cache capacity and cache bandwidth from a
// working-set sweep, an effective scalar issue rate from a line fit, and a launch-fill saturation
// from a sweep that leaves full fill. Every fit is a pure function of timed points, so each outcome
// is tested on the CPU with synthetic points (tests/calibrate/device_model_test.cpp). The kernels that
// time the points plug in through calibrate/steps.hpp.
//
// Units: bytes, seconds, operations; rates per second. A figure that is not available is NaN with
// a reason, never 0.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "diescope/workloads/stream_kernel.hpp"

namespace diescope::calibrate {

// ---------------------------------------------------------------------------------------------
// STREAM: the DRAM bandwidth ceiling
// ---------------------------------------------------------------------------------------------

// The four kernels over single-precision vectors a, b, c, as the workloads define them
// (workloads/stream_kernel.hpp): copy c = a, scale b = 0.5 a, add c = a + b, triad a = b + 0.5 c.
using workloads::StreamKernel;

inline constexpr std::uint64_t kStreamDefaultElements = std::uint64_t{1} << 26;  // 256 MiB per vector
inline constexpr std::uint64_t kStreamElementBytes = 4;                          // float
inline constexpr int kStreamDefaultRepeats = 10;
// A STREAM rate is a DRAM rate only when the vectors one launch touches are this many times the L2:
// a streaming pass can find at most L2/footprint of its bytes left in cache by the pass before
// (it reads them last, after evicting most of them), so at 4x at most a quarter, in practice none.
inline constexpr double kStreamMinL2Multiple = 4;

using workloads::stream_kernel_name;
using workloads::stream_vectors_read;
using workloads::stream_vectors_written;
// Exact bytes of one launch (reads + writes) x elements x element bytes, for a kernel with no range
// guard, which is why the element count must be a power of two (every power-of-two launch geometry
// then divides it).
using workloads::stream_bytes;

// One kernel's timed launches: each repeat's synchronised time of one launch, in seconds.
struct StreamTiming {
  StreamKernel kernel = StreamKernel::copy;
  std::uint64_t elements = kStreamDefaultElements;
  std::vector<double> seconds;
};

struct StreamKernelRate {
  StreamKernel kernel = StreamKernel::copy;
  std::uint64_t bytes = 0;  // one launch's bytes
  double best_seconds = 0;  // the fastest repeat (NaN when none counts)
  double bytes_per_s = 0;   // bytes / best_seconds (NaN with reason when not a DRAM rate)
  int repeats = 0;          // repeats with a positive, finite time
  std::string reason;       // empty when bytes_per_s is known
};

struct StreamFit {
  std::vector<StreamKernelRate> kernels;  // in the order timed
  double bandwidth_bytes_per_s = 0;       // the best kernel's rate: the ceiling (NaN with reason)
  std::string best_kernel;                // its name, empty when none
  std::string reason;                     // why there is no ceiling, empty when there is one
  std::string note;                       // what a reader must know beside it (a check skipped)
  // The DRAM peak the counter implies (the median over the DRAM unit's counted judged steps), which
  // each kernel's rate is written against; NaN with `dram_peak_reason` when no DRAM step counted.
  // Set by the calibration after the units are judged, not by fit_stream().
  double dram_implied_peak_bytes_per_s = std::numeric_limits<double>::quiet_NaN();
  std::string dram_peak_reason = "no DRAM step was counted";
};

// Best of the repeats per kernel, and the highest of those rates as the ceiling. A kernel whose
// element count is not a power of two, or whose vectors are less than kStreamMinL2Multiple times
// `l2_bytes`, gives no rate (NaN, with the reason). `l2_bytes` 0 means the L2 size is unknown: the
// footprint check is skipped and `note` says so.
StreamFit fit_stream(const std::vector<StreamTiming>& timings, std::int64_t l2_bytes);

// ---------------------------------------------------------------------------------------------
// Working-set sweep: cache capacity and cache bandwidth
// ---------------------------------------------------------------------------------------------

// One point of the sweep of an untiled contraction over reduction extents.
struct WorkingSetPoint {
  WorkingSetPoint() = default;
  WorkingSetPoint(std::int64_t k_in, std::int64_t working_set, std::int64_t requested, std::int64_t distinct,
                  double seconds_in)
      : k(k_in),
        working_set_bytes(working_set),
        requested_bytes(requested),
        distinct_bytes(distinct),
        seconds(seconds_in) {}

  std::int64_t k = 0;                  // the reduction extent
  std::int64_t working_set_bytes = 0;  // per-block read bytes x resident blocks
  std::int64_t requested_bytes = 0;    // global read bytes under per-block caching
  std::int64_t distinct_bytes = 0;     // distinct cells read and written
  double seconds = 0;                  // best synchronised time over the repeats
  // The loop extents of the nest writing the output, outermost first ({n, m, k} for the contraction:
  // blocks over n's and m's tiles, then each thread's k loop; {passes, buffer floats} for the re-read).
  std::vector<std::int64_t> loops;
  // Filled by fit_device_model() (steps.hpp) once the device model is fitted
  // (docs/calibration.md#device-model): the model's time for the point, and its distinct-byte roofline lower
  // bound; NaN with no model.
  double rank_ms = std::numeric_limits<double>::quiet_NaN();
  double bound_ms = std::numeric_limits<double>::quiet_NaN();
};

// A point's requested rate: requested bytes over its time (NaN when the time is not positive).
double requested_rate(const WorkingSetPoint& point);

// The sweep sits on both sides of the capacity.
struct CapacityTransition {
  std::int64_t cached_ws = 0;   // the largest working set still served at the cache rate
  std::int64_t spilled_ws = 0;  // the smallest working set served at the DRAM rate
  std::int64_t capacity = 0;    // their geometric mean: the fitted cache capacity
  bool monotone = true;         // every cached working set is below every spilled one; false: a guess
  double cache_rate = 0;        // median requested rate of the cached points, bytes/s
};
// Every point at the cache rate: the capacity is at least largest_ws and the sweep says no more.
struct CapacityAllCached {
  std::int64_t largest_ws = 0;
  double cache_rate = 0;
};
// Every point at the DRAM rate: the capacity is below smallest_ws.
struct CapacityAllSpilled {
  std::int64_t smallest_ws = 0;
};
// No DRAM rate was given and the fastest and slowest rates differ by less than kMinCapacityContrast:
// the sweep cannot tell which side of the capacity it sits on.
struct CapacityNoTransition {
  double contrast = 0;
};
struct CapacityTooFewPoints {
  std::string reason;
};
using CapacityFit = std::variant<CapacityTransition, CapacityAllCached, CapacityAllSpilled,
                                 CapacityNoTransition, CapacityTooFewPoints>;

inline constexpr double kMinCapacityContrast = 2;

// Drops points with a smaller working set than the fastest point (too short to amortise the launch:
// a low rate for a reason that is not the cache), then calls a point cached when its rate is at
// least the geometric mean of the fastest rate and `dram_rate` (or, without one, of the fastest and
// slowest rates, which needs a contrast of kMinCapacityContrast). Points whose time is not positive
// and finite, or whose byte counts are not positive, are left out first.
CapacityFit fit_capacity(const std::vector<WorkingSetPoint>& points,
                         std::optional<double> dram_rate = std::nullopt);

// ---------------------------------------------------------------------------------------------
// Launch fill
// ---------------------------------------------------------------------------------------------

// One parallel context of a kernel: `blocks` blocks of `threads_per_block` threads doing
// `scalar_ops` scalar operations (and `mma_ops` tile-MMA operations, which the fill does not model).
struct LaunchContext {
  std::int64_t blocks = 0;
  std::int64_t threads_per_block = 0;
  double scalar_ops = 0;
  double mma_ops = 0;
};

// capped: each block counts at most t threads, fill = min(1, B x min(T, t) / (P x t)).
// uncapped: fill = min(1, B x T / (P x t)), the alternative reported for comparison.
// The two coincide on contexts whose blocks are no wider than t.
enum class FillForm { capped, uncapped };

// P multiprocessors saturating at t threads each. NaN when P, t, B or T is not positive.
double context_fill(const LaunchContext& context, int multiprocessors, int fill_threads,
                    FillForm form = FillForm::capped);
// The contexts' scalar operations, each divided by its fill.
double effective_ops(const std::vector<LaunchContext>& contexts, int multiprocessors, int fill_threads,
                     FillForm form = FillForm::capped);
// A kernel's fill: its scalar operations over its effective operations (NaN without operations).
double kernel_fill(const std::vector<LaunchContext>& contexts, int multiprocessors, int fill_threads,
                   FillForm form = FillForm::capped);

struct FillModel {
  int multiprocessors = 0;
  int fill_threads = 0;
  FillForm form = FillForm::capped;
};

// ---------------------------------------------------------------------------------------------
// Issue rate
// ---------------------------------------------------------------------------------------------

struct IssuePoint {
  std::int64_t k = 0;                   // the reduction extent
  double scalar_ops = 0;                // scalar operations of the timed kernel
  double mma_ops = 0;                   // tile-MMA operations (0 for the scalar sketch)
  int kernels = 1;                      // kernels the routine shipped
  double seconds = 0;                   // best synchronised time over the repeats
  std::vector<LaunchContext> contexts;  // what a fill model needs to normalise the point
  std::int64_t m = 0, n = 0;            // the output's shape (0: the device side did not say)
  std::int64_t distinct_bytes = 0;      // distinct cells read and written (0: not known)
  std::vector<std::int64_t> loops;      // {m, n, k}: blocks over m's and n's tiles, then the k loop
  // As WorkingSetPoint's: the fitted line's time for the point and its distinct-byte bound.
  double rank_ms = std::numeric_limits<double>::quiet_NaN();
  double bound_ms = std::numeric_limits<double>::quiet_NaN();
};

struct IssueFit {
  double rate = 0;          // scalar operations per second: the slope's reciprocal
  double latency_s = 0;     // the intercept: time not proportional to the operations
  double max_residual = 0;  // largest |predicted - measured| / measured over the points
  int points = 0;
};
struct IssueUnfittable {
  std::string reason;
};
using IssueRateFit = std::variant<IssueFit, IssueUnfittable>;

// Least-squares line seconds = latency + ops / rate over the points with scalar operations. Under
// `fill`, each point's operations are divided by its kernel's fill first (the fill-normalised rate,
// equal to the plain one where every point fills the device).
IssueRateFit fit_issue_rate(const std::vector<IssuePoint>& points,
                            std::optional<FillModel> fill = std::nullopt);

// ---------------------------------------------------------------------------------------------
// Launch-fill fit
// ---------------------------------------------------------------------------------------------

struct LaunchPoint {
  std::string geometry;  // the pinned block tile, e.g. "32x32x8/4x4"
  std::int64_t m = 0, n = 0, k = 0;
  std::vector<LaunchContext> contexts;
  double seconds = 0;  // best synchronised time over the repeats
};

struct FillFit {
  int cores = 0;                   // the P given
  int saturation = 0;              // the fitted t
  double rate = 0;                 // full-fill scalar rate of the lead geometry, operations/s
  double max_residual = 0;         // largest relative error over the fitted points
  int partial_points = 0;          // fitted points below kPartialFill under the fitted t
  int points = 0;                  // points fitted
  int starved_points = 0;          // points left out as latency-starved
  std::optional<double> raw_rate;  // the same proportional fit over raw operations
  std::optional<double> raw_residual;
  std::optional<std::pair<int, double>> uncapped;  // best t under the uncapped form, its largest residual
};
struct FillUnfittable {
  std::string reason;
};
using LaunchFillFit = std::variant<FillFit, FillUnfittable>;

inline constexpr double kDefaultStarved = 1.0 / 8;
inline constexpr double kPartialFill = 0.9;

// Candidate saturations, threads per multiprocessor: 64 to 2048 (the most an SM holds from Volta on).
const std::vector<int>& default_fill_candidates();

// For each candidate t, per geometry, the proportional fit seconds = effective_ops / rate that
// minimises the squared relative residuals (per geometry: a wider tile runs at its own rate while
// the saturation is the device's; relative: the times span orders of magnitude; through the origin:
// an intercept would trade against the rate). The t with the smallest summed squared residuals
// wins (the first in `candidates` on a tie). Points below `starved` of their geometry's best raw
// throughput are left out first.
LaunchFillFit fit_fill(const std::vector<LaunchPoint>& points, int multiprocessors,
                       const std::vector<int>& candidates = default_fill_candidates(),
                       double starved = kDefaultStarved);

// ---------------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------------
// Each point against the fitted model
// ---------------------------------------------------------------------------------------------

// A working-set point's model time in ms: its requested bytes at the cache rate when the capacity
// fit says its working set is served from cache (a transition's capacity or more, or all cached), at
// `dram_rate` when it spilled; NaN when the fit cannot say or a rate is missing.
double working_set_rank_ms(const WorkingSetPoint& point, const CapacityFit& capacity,
                           std::optional<double> dram_rate);
// An issue point's model time in ms: latency + operations / rate, the operations divided by the
// kernel's fill under `fill` as the fit did.
double issue_rank_ms(const IssuePoint& point, const IssueFit& fit, std::optional<FillModel> fill);
// The distinct-byte roofline lower bound in ms: distinct bytes at the DRAM ceiling (NaN without one,
// or without distinct bytes).
double distinct_bound_ms(std::int64_t distinct_bytes, std::optional<double> dram_rate);

// Median of the values (mean of the middle two for an even count); NaN for none.
double median(std::vector<double> values);

}  // namespace diescope::calibrate
