// Pieces of the analysis shared between its source files. Not a public interface.
#pragma once

#include <algorithm>
#include <cmath>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "diescope/analysis/analyze.hpp"
#include "diescope/analysis/result.hpp"
#include "diescope/recording/recording.hpp"

namespace diescope::analysis::detail {

// A half-open stretch of time [lo, hi). Empty when hi <= lo.
struct Interval {
  recording::TimeNs lo = 0;
  recording::TimeNs hi = 0;
  recording::TimeNs length() const { return hi > lo ? hi - lo : 0; }
};

inline recording::TimeNs overlap_ns(recording::TimeNs a_lo, recording::TimeNs a_hi, recording::TimeNs b_lo,
                                    recording::TimeNs b_hi) {
  const recording::TimeNs lo = std::max(a_lo, b_lo);
  const recording::TimeNs hi = std::min(a_hi, b_hi);
  return hi > lo ? hi - lo : 0;
}

inline double seconds(recording::TimeNs ns) {
  return static_cast<double>(ns) * 1e-9;
}

// Turns the GPU-Util stream into booked spans, one at a time, in time order.
class UtilBooker {
 public:
  UtilBooker(std::unique_ptr<recording::RecordStream<recording::UtilSample>> stream, std::string source_name);
  // The next booked span; false at the end of the stream.
  bool next(BookedUtil& out);

 private:
  std::unique_ptr<recording::RecordStream<recording::UtilSample>> stream_;
  std::string source_name_;
  bool have_prev_ = false;
  recording::TimeNs prev_ts_ = 0;
  long index_ = 0;
};

// The booked spans that can still overlap chip samples, for a two-pointer merge with the chip
// stream. Holds only the spans that reach past the current sample's start, so its size is bounded
// by how many NVML samples fall inside one chip sample.
// GPU-Util over a whole span (not only its chip-sampled time): overlap-weighted mean and coverage.
struct UtilOverSpan {
  double pct = kNaN;
  double coverage_pct = kNaN;
  bool from_samples = false;  // some booked span inside came from NVML's timestamped samples
  bool from_polled = false;   // some came from polling
};

class UtilWindow {
 public:
  // `whole_spans`: spans over which every booked sample is also summed, chip samples or not, so the
  // whole-span GPU-Util needs no second pass over the stream.
  UtilWindow(UtilBooker booker, std::vector<Interval> whole_spans);
  // Make every booked span that overlaps [lo, hi) available; lo never decreases between calls.
  void prepare(recording::TimeNs lo, recording::TimeNs hi);
  struct Overlap {
    double weighted = 0;  // pct x ns
    recording::TimeNs covered_ns = 0;
    bool from_samples = false;
    bool from_polled = false;
  };
  // Overlap of the prepared spans with [lo, hi), which must lie inside the last prepare() range.
  void overlap(recording::TimeNs lo, recording::TimeNs hi, Overlap& acc) const;
  // Reads the rest of the stream and returns GPU-Util over each whole span, in the order given.
  std::vector<UtilOverSpan> finish_whole_spans();

 private:
  bool load_next();

  UtilBooker booker_;
  std::deque<BookedUtil> live_;
  bool done_ = false;
  std::vector<Interval> whole_spans_;
  std::vector<double> whole_weighted_;
  std::vector<recording::TimeNs> whole_covered_;
  std::vector<UtilOverSpan> whole_from_;  // only from_samples and from_polled are kept here
};

// Clocks, throttle reasons and power limits over each span (docs/method.md, "Hardware state"), one
// pass per stream for all of them.
struct HardwareSpan {
  Interval span;
  SpanResults* out = nullptr;
};
// The same, read as the chip samples are: opened before the first chip sample is read, taken up to
// each sample's start (take_until), so that a recording file serves these streams from the chip
// samples' read of it (docs/recording-format.md#reading-a-recording); each statistic sees its own
// stream's readings in their order, so when they are taken changes no figure.
class HardwareReader {
 public:
  // Opens the streams; reads nothing yet.
  HardwareReader(const recording::Recording& source, const std::vector<Interval>& spans);
  ~HardwareReader();
  HardwareReader(const HardwareReader&) = delete;
  HardwareReader& operator=(const HardwareReader&) = delete;
  // Takes every reading up to time t.
  void take_until(recording::TimeNs t) {
    if (t >= next_ns_) take(t);
  }
  // Takes the rest and writes each span's figures into spans[i].out (the spans given above, in order).
  void finish(const std::vector<HardwareSpan>& spans);

 private:
  void take(recording::TimeNs t);
  struct State;
  std::unique_ptr<State> state_;
  recording::TimeNs next_ns_;  // the earliest reading not taken (the lowest time until the first)
};

// Other holders of the GPU and clock jumps over the whole recording.
Hygiene hygiene_of(const recording::Recording& source);

}  // namespace diescope::analysis::detail
