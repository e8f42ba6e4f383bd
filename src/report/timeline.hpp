// The run on a grid, as report.html and trace.json draw it: every stream of the recording through
// the one post-processing pipeline (include/diescope/metrics/postprocess.hpp,
// docs/report.md#the-timeline), fed from the shared walk of the chip samples and from the
// recording's other streams. Memory holds the grid, never the recording.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "diescope/metrics/postprocess.hpp"
#include "diescope/report/renderer.hpp"
#include "diescope/report/samples_csv.hpp"

namespace diescope::report::detail {

enum class Role {
  die_util,        // each used sample's busiest unit
  gpu_util,        // NVML, booked as the analysis books it
  unit,            // a chip unit of DIE-Util
  engine,          // an NVML engine of DIE-Util
  diagnostic,      // SM active and the like
  rate,            // a raw count, per second
  limiting_share,  // the share of time a unit was the busiest (0..100)
  sm_clock,
  mem_clock,
  power_limit,
  power_draw,  // NVML's power draw, as read (recording format 4 on)
  throttle,    // the share of time one throttle reason held the clocks (0..100)
  host,        // a host stream, drawn from its descriptor alone
};

struct TimelineSeries {
  Role role = Role::unit;
  std::string key;    // column key, throttle reason; the metric's full name for host streams
  std::string label;  // what people call it
  std::string scope;  // host streams: whose it is, as people read it ("python3 (pid 4242)", "cpu 3")
  metrics::MetricDescriptor descriptor;  // after the pipeline's steps
  metrics::Envelope envelope;
};

struct Timeline {
  metrics::Grid grid;
  std::vector<TimelineSeries> series;
  std::vector<std::size_t> of(Role role) const;  // indices, in the order added
  // Per bin, the index (into of(Role::limiting_share)) of the unit busiest for the longest time,
  // or -1 where no used sample reached the bin or DIE-Util's mean there is under 1% (kMinBusyPct).
  std::vector<int> limiting_per_bin() const;
};

// The host streams grouped for drawing (metrics::group_into_panels: one panel per entity and unit,
// series by scope), at most `max_lines` series a panel: those with the highest mean over the run,
// the rest counted.
struct HostPanel {
  std::string title;                // "Host CPU (%)"
  std::vector<std::size_t> series;  // into Timeline::series
  std::vector<std::string> legends;
  std::optional<double> peak;  // shared by every series drawn
  std::size_t left_out = 0;
};
std::vector<HostPanel> host_panels(const Timeline& timeline, std::size_t max_lines);

struct TimelineOptions {
  std::size_t max_bins = 1000;
  double smooth_s = 0;  // boxcar kernel; 0: none
  // No bin shorter than the chip sampling interval (a short run is not cut finer than its samples).
  bool no_finer_than_samples = true;
};

class TimelineBuilder {
 public:
  // The grid covers the run (report.results' start_ns to end_ns). Throws UsageError when smoothing
  // is refused.
  TimelineBuilder(const ReportInput& input, const TimelineOptions& options);
  ~TimelineBuilder();
  TimelineBuilder(const TimelineBuilder&) = delete;
  TimelineBuilder& operator=(const TimelineBuilder&) = delete;
  // Another grid over the same run, fed by the same reads (report.html's and trace.json's grids
  // from one walk); before the first sample. Returns its index in finish_all()'s timelines (the
  // constructor's grid is 0). Throws as the constructor does.
  std::size_t add_grid(const ReportInput& input, const TimelineOptions& options);
  // One chip sample; the recording's other streams are taken up to its start, so that a recording
  // file serves them from the chip samples' read of it (docs/report.md#one-pass).
  void sample(const WalkedSample& w);
  // Takes the rest of the recording's other streams and returns the envelopes. Series that never
  // had a value are left out (a throttle reason that never held the clocks, a clock that was not
  // read).
  Timeline finish(const ReportInput& input);
  // The same for every grid, in the order added.
  std::vector<Timeline> finish_all(const ReportInput& input);

 private:
  struct Added {
    Role role;
    std::string key, label, scope;
    metrics::MetricDescriptor descriptor;
    metrics::StreamSteps steps;
  };
  static metrics::Pipeline make_pipeline(const ReportInput& input, const TimelineOptions& options);
  // Adds the streams of added_ to `p` and makes its row (set_row) of the chip samples' columns.
  void add_streams(metrics::Pipeline& p);
  std::size_t add(Role role, std::string key, std::string label, const metrics::MetricDescriptor& d,
                  const metrics::StreamSteps& steps = {});
  // Feeds the other streams' values up to time t, in one time order across them.
  void take_until(recording::TimeNs t) {
    if (t >= next_ns_) take(t);
  }
  void take(recording::TimeNs t);
  template <class F>
  void each(F&& f) {
    for (metrics::Pipeline& p : pipelines_) f(p);
  }
  struct Others;  // GPU-Util, clocks, power, throttle reasons and host streams, being read
  std::unique_ptr<Others> others_;
  recording::TimeNs next_ns_ = std::numeric_limits<recording::TimeNs>::min();
  std::vector<metrics::Pipeline> pipelines_;  // one per grid
  std::vector<bool> in_row_;                  // per pipeline: its row is set (no smoothing)
  bool fed_ = false;
  std::vector<Added> added_;
  std::size_t die_ = 0, gpu_ = 0, sm_clock_ = 0, mem_clock_ = 0, power_ = 0, power_draw_ = 0;
  std::vector<std::size_t> units_, engines_, diags_, rates_, shares_, throttle_;
  std::vector<std::uint64_t> throttle_bits_;
  std::vector<double> share_values_;  // one sample's limiting-unit shares: all 0 but while handed over
  // The row (metrics::Pipeline::set_row): DIE-Util, the units, engines, diagnostics and limiting
  // shares, in that order; row_values_ holds one sample's, NaN where it has none.
  std::vector<std::size_t> row_ids_;
  std::vector<double> row_values_;
  std::map<std::int64_t, std::size_t> host_;  // recording's stream id -> pipeline id
};

// report.html's and trace.json's timelines from one TimelineBuilder when both are written from one
// walk: GPU-Util, the clocks, power and throttle reasons are read once and each chip sample's
// columns worked out once, for each renderer's own grid (docs/report.md#one-pass). Each renderer
// joins in begin(), hands over every sample and takes its timeline in finish(); the first to join
// feeds the samples, the others' samples are the same ones.
class SharedTimeline {
 public:
  // Throws as TimelineBuilder's constructor does. Returns the renderer's place.
  std::size_t join(const ReportInput& input, const TimelineOptions& options);
  void sample(std::size_t who, const WalkedSample& w) {
    if (who == 0) builder_->sample(w);
  }
  Timeline finish(std::size_t who, const ReportInput& input);

 private:
  std::unique_ptr<TimelineBuilder> builder_;
  std::size_t joined_ = 0, taken_ = 0;
  std::vector<Timeline> done_;
};

}  // namespace diescope::report::detail
