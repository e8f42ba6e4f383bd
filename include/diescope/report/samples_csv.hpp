// samples.csv: one row per chip sample as read, in recording order, with each sample's DIE-Util
// and whether the analysis used it. Streamed from the recording: memory does not grow with its
// length. Columns (docs/report.md, "samples.csv"):
//   index,start_ns,end_ns,duration_ms,unit.<key>...,diag.<key>...,count.<key>...,engine.<key>...,
//   die_util_pct,use,drop_reason,window_share
// A value that could not be read is written as NaN. With smoothing (--smooth MS), every value column
// of the used rows is the pipeline's boxcar over the used rows around it
// (docs/report.md#samplescsv); dropped rows keep their values as read and stay out of every window.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "diescope/analysis/analyze.hpp"
#include "diescope/analysis/result.hpp"
#include "diescope/metrics/postprocess.hpp"
#include "diescope/recording/recording.hpp"

namespace diescope::report {

enum class SampleUse { used, dropped_first, dropped_broken, outside_run };

struct SampleVerdict {
  SampleUse use = SampleUse::used;
  std::string reason;  // empty when used
};

// One chip sample as the report's per-sample outputs see it.
struct WalkedSample {
  std::int64_t index = 0;  // position in the chip-sample stream
  const recording::ChipSample* sample = nullptr;
  SampleVerdict verdict;
  // The engine reading matched to a used sample (the first at or after its end), one value per
  // engine column; all NaN for dropped samples and when no reading followed.
  std::span<const double> engines;
  double die_util_pct = analysis::kNaN;  // busiest available unit, engines included; not clamped
};

// Streams every chip sample through `visit` with its verdict, matched engines and DIE-Util, as
// analyze() classifies and matches them (its per-sample observer): the report's tests check that
// these verdicts add up to the analysis's own counts. With `analysis` null there is no run to be
// outside of: every sample gets the verdict of the drop rules alone. A sample outside the run is
// shown unmatched to engines, as the analysis never reads it.
void walk_samples(const recording::Recording& source, const analysis::Analysis* analysis,
                  const std::function<void(const WalkedSample&)>& visit);

// The analysis's per-sample observer behind walk_samples(): each observed sample becomes a
// WalkedSample for `visit`. `in_analysis` false: there is no run to be outside of (a null analysis
// above). Set as AnalysisOptions::observe_sample of the report's own analysis, it feeds the
// per-sample outputs from that one pass (docs/report.md#one-pass).
std::function<void(const analysis::ObservedSample&)> sample_walker(
    const recording::Recording& source, bool in_analysis, std::function<void(const WalkedSample&)> visit);

struct SamplesCsvStats {
  std::int64_t rows = 0;
  std::int64_t used = 0;
  std::int64_t dropped_first = 0;
  std::int64_t dropped_broken = 0;
  std::int64_t outside_run = 0;
};

// Formats the CSV row by row and hands it to `sink` in pieces: the header on construction, rows
// as they come, the rest on finish(). `analysis` (may be null) gives the steady window for
// window_share (0..1: the part of the sample inside the window; NaN when there is no window).
class SamplesCsvWriter {
 public:
  // `smooth_s` above 0 smooths the value columns with a boxcar of that many seconds; rows then come
  // out once their window is complete. Throws UsageError when the kernel is refused.
  SamplesCsvWriter(const recording::RecordingMeta& meta, const analysis::Analysis* analysis,
                   std::function<void(std::string_view)> sink, double smooth_s = 0);
  void row(const WalkedSample& w);
  SamplesCsvStats finish();

 private:
  struct Pending {
    std::int64_t index;
    recording::TimeNs start_ns, end_ns;
    SampleVerdict verdict;
    std::vector<double> values;  // as read
  };
  void write_row(const Pending& p, std::span<const double> values);
  std::function<void(std::string_view)> sink_;
  std::optional<metrics::BoxcarWindow> smooth_;
  std::deque<Pending> pending_;  // rows waiting for their smoothing window
  std::vector<double> values_, unused_;
  bool window_ = false;
  recording::TimeNs window_start_ = 0, window_end_ = 0;
  SamplesCsvStats stats_;
  std::string out_, line_;
};

// The whole CSV: walk_samples() through a SamplesCsvWriter.
SamplesCsvStats write_samples_csv(const recording::Recording& source, const analysis::Analysis* analysis,
                                  const std::function<void(std::string_view)>& sink);

}  // namespace diescope::report
