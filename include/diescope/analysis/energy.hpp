// Energy from a recording's power records (docs/energy.md): NVML's energy counter over a span, or
// the power draw integrated where the counter is absent or goes back, and the energy spent while
// DIE-Util was low ("energy stranded"). analyze() fills SpanResults::energy with these rules; they
// are public so that spans other than the run and the window (steps, regions, jobs) use the same.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "diescope/analysis/result.hpp"
#include "diescope/recording/recording.hpp"

namespace diescope::analysis {

// A chip sample whose DIE-Util is under this (percent of the busiest unit's peak) counts its energy
// as stranded (docs/energy.md#energy-stranded). Chosen, not measured.
inline constexpr double kStrandedEnergyDieUtilPct = 10.0;

// Energy over parts of the time between power readings, summed: the counter interpolated linearly
// between readings, and the draw integrated by the trapezoid rule (docs/energy.md#the-rules).
struct EnergySums {
  recording::TimeNs covered_ns = 0;
  double counter_j = 0;
  double draw_j = 0;
  bool counter_absent = false;     // some reading of the counter was NaN
  bool counter_went_back = false;  // the counter decreased between two readings
  bool draw_absent = false;        // some reading of the draw was NaN
  // Adds [lo, hi) of the stretch between readings p and q (p.ts_ns <= lo < hi <= q.ts_ns).
  void add(const recording::PowerLimitReading& p, const recording::PowerLimitReading& q, recording::TimeNs lo,
           recording::TimeNs hi);
  void add(const EnergySums& other);
};

// The figures of one span from its sums: the counter where it was read throughout and never went
// back, else the draw, else none with the reason (docs/energy.md#the-rules). `format_version` is the
// recording's: before 4 neither was recorded, which names the reason when neither was read. chip_sampled and
// stranded are the sums over the span's usable chip samples and over those under the threshold.
EnergyFigures energy_figures(const EnergySums& span, const EnergySums& chip_sampled,
                             const EnergySums& stranded, recording::TimeNs span_ns, int format_version);

// Joules per TFLOP (1e12 FLOPs): NaN when either is not a positive finite number.
double joules_per_tflop(double energy_j, double flops);

// The program's FLOPs in a recording (docs/energy.md#telling-diescope-the-flops): the first flops note
// of each scope; NaN where it gave none.
struct ProgramFlops {
  double window = kNaN;
  double run = kNaN;
  bool any() const;
};
ProgramFlops program_flops(const std::vector<recording::Note>& notes);
// Puts `flops` (NaN: given for the other span, `missing`) and the joules per TFLOP into `e`.
void set_span_flops(EnergyFigures& e, double flops, FlopsMissing missing);

// The power readings around a moving time, read once from the recording's stream: answers the sums
// over [lo, hi) for lo at or after the last advance(), holding only the readings such a span needs.
class PowerTimeline {
 public:
  explicit PowerTimeline(const recording::Recording& source);
  // Forget what no span from `t` on needs; `t` never decreases between calls.
  void advance(recording::TimeNs t);
  // Adds [lo, hi) to `sums` (lo >= the last advance()).
  void add(recording::TimeNs lo, recording::TimeNs hi, EnergySums& sums);

 private:
  void load_until(recording::TimeNs t);
  std::unique_ptr<recording::RecordStream<recording::PowerLimitReading>> stream_;
  std::deque<recording::PowerLimitReading> held_;
  bool done_ = false;
  std::string name_;
};

// The sums over [lo, hi) of a recording's power records, in one pass (memory flat).
EnergySums energy_sums_over(const recording::Recording& source, recording::TimeNs lo, recording::TimeNs hi);
// The energy over [lo, hi) of a recording (one pass over its power records, memory flat), without
// the chip-sample figures (stranded is NaN).
EnergyFigures energy_over(const recording::Recording& source, recording::TimeNs lo, recording::TimeNs hi);

}  // namespace diescope::analysis
