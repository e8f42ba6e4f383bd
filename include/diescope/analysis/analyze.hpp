// The method's analysis (docs/method.md): from a recording to the figures a report prints.
// It never talks to a GPU; it reads a Recording in one streaming pass per record kind, in
// memory that does not grow with the recording's length.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <optional>
#include <string>
#include <string_view>
#include <cstddef>

#include "diescope/analysis/result.hpp"
#include "diescope/recording/recording.hpp"

namespace diescope::analysis {

// The method's thresholds (docs/method.md#thresholds-at-a-glance). Chosen, not measured.
// A unit must have a value for at least this share of the usable chip time to be the limiting unit.
inline constexpr double kMinLimitingAvailabilityPct = 90.0;
// A unit whose time-weighted mean is under this share of its peak is idle: never the limiting unit.
inline constexpr double kMinBusyPct = 1.0;
// GPU-Util must cover this share of the chip-sampled time for the gap and the split to be computed.
inline constexpr double kMinGpuUtilCoveragePct = 90.0;
// Usable chip samples must cover this share of the span (or of the scheduled counter time) or the
// result is partial.
inline constexpr double kMinChipCoveragePct = 90.0;
// A partial result shows GPU-Util over the whole span when NVML covered at least this share of it.
inline constexpr double kMinWholeSpanGpuUtilCoveragePct = 90.0;
// An NVML GPU-Util sample is booked to at most this long before its timestamp (NVML's longest
// documented averaging period).
inline constexpr recording::TimeNs kMaxNvmlPeriodNs = recording::kNsPerSecond;
// A chip unit or diagnostic (a percent of its counter's sustained peak) above this, or below 0, is no
// reading: the sample is broken (docs/method.md#which-chip-samples-are-used). No unit does twice
// what it can sustain.
inline constexpr double kMaxPctOfPeak = 200.0;

// docs/method.md#gpm-as-a-second-chip-source: how long before its sample's start a GPM reading can
// begin: the driver's 100 ms refresh period plus the about 45 ms its readings lag the counters (both
// measured on the H200); a steady window over GPM samples leaves out the samples that start within it
// of the window's start, and those that end after the window.
inline constexpr recording::TimeNs kGpmReadingLeadNs = 150'000'000;

// Stranded idle explained (docs/method.md#stranded-idle-explained).
// Below this idle share (points) there is nothing to explain.
inline constexpr double kMinIdlePointsToExplain = 5.0;
// The host samples must cover at least this much GPU-idle time (seconds) for a verdict.
inline constexpr double kMinIdleSecondsObserved = 1.0;
// A host sample whose time GPU-Util covers less than this share of gets no weight.
inline constexpr double kMinHostSampleUtilCoverage = 0.5;
// own_io_bound: while the GPU idled the command read at least kOwnReadMinBytesPerS from storage; for
// at least kOwnReadMinIdleShare of that time it was doing I/O (reading at least kOwnReadMinBytesPerS,
// or with at least kOwnBlockedMinThreads threads blocked on I/O); and over that time the processes
// doing it spent at least kOwnIoMinCores cores, and at least kOwnIoMinShare of their time, in the
// kernel or blocked on I/O.
inline constexpr double kOwnReadMinBytesPerS = 10e6;
inline constexpr double kOwnBlockedMinThreads = 0.5;
inline constexpr double kOwnReadMinIdleShare = 0.5;
inline constexpr double kOwnIoMinCores = 0.5;
inline constexpr double kOwnIoMinShare = 0.5;
// input_bound: the workers' CPU at least this share of their capacity.
inline constexpr double kLoaderSaturatedPct = 85.0;
// one_thread_bound: a process's busiest thread at least this percent of one core.
inline constexpr double kOneThreadBoundPct = 90.0;
// host_cpu_saturated: host CPU busy at least this percent of all logical CPUs.
inline constexpr double kHostCpuSaturatedPct = 90.0;
// io_bound: iowait at least this percent of CPU time, or a disk busy at least kDiskBusyBoundPct.
inline constexpr double kIoWaitBoundPct = 20.0;
inline constexpr double kDiskBusyBoundPct = 90.0;
// memory_pressure: available memory below this percent of capacity.
inline constexpr double kLowMemoryAvailablePct = 5.0;

// The explanation of a span's idle time from the recording's host streams. `idle_points` is the
// span's idle share (NaN when unknown). analyze() fills SpanResults::idle_explained with it.
IdleExplanation explain_idle(const recording::Recording& source, recording::TimeNs span_start,
                             recording::TimeNs span_end, double idle_points);

// Why the analysis leaves a chip sample out (docs/method.md, "Which chip samples are used").
enum class SampleDrop { none, first, broken };

// Where a broken sample broke: the first of these that holds.
struct SampleBreak {
  enum class Part { none, empty_span, unit, diagnostic };
  // What was wrong with a unit's or diagnostic's value (docs/method.md#which-chip-samples-are-used).
  enum class Value { not_finite, negative, above_peak };
  Part part = Part::none;
  std::size_t column = 0;  // unit or diagnostic: its index in the meta's columns
  Value value = Value::not_finite;
  double read = 0;  // negative or above_peak: the value as read
  explicit operator bool() const { return part != Part::none; }
};

// One chip sample as analyze() saw it, for outputs that show every sample (samples.csv, HTML,
// trace), so that they apply the analysis's own rules rather than copies of them.
struct ObservedSample {
  std::int64_t index = 0;  // position in the chip-sample stream, from 0
  const recording::ChipSample* sample = nullptr;
  // The drop rules, which do not depend on the run: a sample outside it still gets its verdict.
  SampleDrop drop = SampleDrop::none;
  SampleBreak broken;   // where a broken sample (drop == broken) broke
  bool in_run = false;  // it touches the run; the analysis reads only those
  // The engine reading matched to a sample that is not dropped (the first at or after its end),
  // inside the run or not; empty when none follows or the sample is dropped.
  std::span<const double> engines;
  double die_util_pct = kNaN;  // die_util_of_sample() of its units and those engines
};

// Whether the steady window is summarised (docs/method.md#the-steady-window): `markers` summarises
// the one the markers (or a printed window line) give, when there is one; `none` the run alone.
// window_mode_name gives the word `run --window` takes, window_mode_from_name reads it.
enum class WindowMode { none, markers };
std::string_view window_mode_name(WindowMode mode);  // "none", "markers"
std::optional<WindowMode> window_mode_from_name(std::string_view name);

struct AnalysisOptions {
  WindowMode window = WindowMode::markers;
  // Called for every chip sample in stream order, when set. Observing never changes the results.
  std::function<void(const ObservedSample&)> observe_sample;
  // Called once, when set, after the run and the steady window are found and before any chip sample
  // is read: with the meta, the notes, window.found and window.finding, and the bounds of the run
  // (run.start_ns, run.end_ns) and of the window (window.results.start_ns, end_ns); every figure
  // still empty. The outputs that show each sample start from it, so that one pass feeds them all
  // (docs/report.md#one-pass).
  std::function<void(const Analysis&)> before_samples;
};

// Throws InputError when a stream breaks the Recording promises (time order, column counts).
Analysis analyze(const recording::Recording& source, const AnalysisOptions& options = {});

// DIE-Util of one sample: the busiest available unit, as read (not clamped). NaN when no unit is
// available. `engines` holds the engine values matched to this sample (may be empty). Non-finite
// values are unavailable.
double die_util_of_sample(std::span<const double> units, std::span<const double> engines);

// One NVML GPU-Util sample booked to the time it describes: (max(previous ts, ts - 1 s), ts]
// (docs/method.md, "GPU-Util").
struct BookedUtil {
  recording::TimeNs lo = 0;
  recording::TimeNs hi = 0;
  double pct = 0;
  recording::UtilSource source = recording::UtilSource::samples;
};

// Books every GPU-Util sample of the recording in time order, by the rule analyze() weighs them
// with; for outputs that draw GPU-Util over time. Throws InputError as analyze() would.
void for_each_booked_util(const recording::Recording& source,
                          const std::function<void(const BookedUtil&)>& visit);

namespace detail {
class UtilBooker;
}

// The same, one booked sample at a time, for a reader that takes GPU-Util in time order beside the
// recording's other streams (so that one read of a recording file serves them all).
class BookedUtilReader {
 public:
  explicit BookedUtilReader(const recording::Recording& source);
  ~BookedUtilReader();
  BookedUtilReader(const BookedUtilReader&) = delete;
  BookedUtilReader& operator=(const BookedUtilReader&) = delete;
  // The next booked sample; false after the last. Throws InputError as analyze() would.
  bool next(BookedUtil& out);

 private:
  std::unique_ptr<detail::UtilBooker> booker_;
};

// What the headline is computed from; analyze() fills it from a span's results.
struct HeadlineInputs {
  double gpu_util_pct = kNaN;
  double gpu_util_coverage_pct = kNaN;  // share of the chip-sampled time GPU-Util covers
  double die_util_pct = kNaN;           // already clamped to 0..100
  double gpu_util_resolution_pct = 1;   // meta.gpu_util_resolution_pct
  // Label of the limiting unit when it is one GPU-Util does not count (a video engine), else empty:
  // names the likely cause of a negative gap.
  std::string uncounted_limiting_unit;
};

// The headline in whole tenths, from rounded inputs so that stranded = idle + active exactly, with
// the noise floor (half of GPU-Util's resolution) applied to the gap.
Headline make_headline(const HeadlineInputs& in);

}  // namespace diescope::analysis
