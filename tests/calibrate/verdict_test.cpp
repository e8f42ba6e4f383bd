// The method's calibrate verdicts on hand-computed steps: pass, fail and inconclusive for each kind
// of check, with the arithmetic in the comments.
#include <gtest/gtest.h>

#include <cmath>

#include "diescope/calibrate/verdict.hpp"

namespace diescope::calibrate {
namespace {

constexpr recording::TimeNs kSecond = 1'000'000'000;
// An H200-like device: 132 SMs, FMA pipe 4 warp instructions per SM per cycle, 1980 MHz.
// Capacity of the device per second: 132 x 4 x 1.98e9 = 1.04544e12 warp instructions.
constexpr double kFmaPerSecond = 132 * 4 * 1.98e9;

MeasuredStep fp32_step(const std::string& name, int loaded, double share_of_device, double reading,
                       StepRole role = StepRole::judged) {
  MeasuredStep s;
  s.unit = "fp32";
  s.name = name;
  s.role = role;
  s.loaded_sms = loaded;
  s.sm_count = 132;
  s.peak_per_sm_per_cycle = 4;
  s.sm_clock_mhz = 1980;
  s.counter_window = {0, kSecond};
  s.work_intervals = {{0, kSecond}};  // the work covers the whole 1-s window
  s.work = share_of_device * kFmaPerSecond;
  s.reading_pct = reading;
  s.counted_bytes = std::nan("");
  s.mem_clock_min_mhz = s.mem_clock_max_mhz = std::nan("");
  return s;
}

const UnitRule& rule(const char* unit) {
  const UnitRule* r = unit_rule(unit);
  if (r == nullptr) throw std::runtime_error(std::string("no rule for ") + unit);
  return *r;
}

TEST(Coverage, UnionOfTheWorkInsideTheWindow) {
  // Window 0..1 s; work 0..0.2 s and 0.3..1 s: 0.9 s covered.
  const std::vector<Interval> work = {{0, kSecond / 5}, {3 * kSecond / 10, kSecond}};
  EXPECT_DOUBLE_EQ(covered_ns(work, {0, kSecond}), 0.9e9);
  // Overlaps count once: -0.5..0.5 s and 0.4..1.5 s make one 2-s span, 1 s of it in the window.
  const std::vector<Interval> overlapping = {{-kSecond / 2, kSecond / 2},
                                             {4 * kSecond / 10, 3 * kSecond / 2}};
  EXPECT_DOUBLE_EQ(union_ns(overlapping), 2e9);
  EXPECT_DOUBLE_EQ(covered_ns(overlapping, {0, kSecond}), 1e9);
  // Work 2e12 over its own 2 s, half of it inside the window: 1e12 in the window.
  MeasuredStep s = fp32_step("s", 132, 1, 100);
  s.work_intervals = overlapping;
  s.work = 2e12;
  EXPECT_DOUBLE_EQ(coverage(s), 1.0);
  EXPECT_DOUBLE_EQ(work_in_window(s), 1e12);
}

TEST(ExpectedReading, FromWorkPeakSmsClockAndTime) {
  // 0.49 x 1.04544e12 instructions in 1 s over 132 x 4 x 1.98e9 per second: 49.00%.
  EXPECT_NEAR(expected_reading_pct(fp32_step("half", 66, 0.49, 0)), 49.0, 1e-9);
  // Tolerance: 1% of 49 = 0.49 points; 1% of 0.74 is 0.0074, so the 0.1-point floor applies.
  EXPECT_DOUBLE_EQ(tolerance_points(rule("fp32"), 49.0), 0.49);
  EXPECT_DOUBLE_EQ(tolerance_points(rule("fp32"), 0.74), 0.1);
  // The new units' bands: Tensor 3% / 1 point, FP64 2% / 0.2 point.
  EXPECT_DOUBLE_EQ(tolerance_points(rule("tensor"), 80), 2.4);
  EXPECT_DOUBLE_EQ(tolerance_points(rule("tensor"), 10), 1.0);
  EXPECT_DOUBLE_EQ(tolerance_points(rule("fp64"), 50), 1.0);
  EXPECT_DOUBLE_EQ(tolerance_points(rule("fp64"), 5), 0.2);
  MeasuredStep no_clock = fp32_step("x", 132, 1, 0);
  no_clock.sm_clock_mhz = std::nan("");
  EXPECT_TRUE(std::isnan(expected_reading_pct(no_clock)));
}

// Expected 98.00% (tolerance 0.98), 49.00% (0.49) and 0.74% (0.1).
std::vector<MeasuredStep> fp32_ladder(double full, double half, double one) {
  return {fp32_step("ffma 132/132 SMs", 132, 0.98, full), fp32_step("ffma 66/132 SMs", 66, 0.49, half),
          fp32_step("ffma 1/132 SMs", 1, 0.0074, one)};
}

TEST(Fp32, PassAtEveryLoad) {
  // |97.5 - 98| = 0.5 <= 0.98; |49.3 - 49| = 0.3 <= 0.49; |0.80 - 0.74| = 0.06 <= 0.1 (the floor:
  // 1% alone would allow only 0.0074).
  std::vector<MeasuredStep> steps = fp32_ladder(97.5, 49.3, 0.80);
  // Reported steps are evaluated but never judged: integer multiply-add reading far off its expected.
  steps.push_back(fp32_step("imad alone", 132, 0.4993, 30.0, StepRole::reported));
  const UnitCheck u = check_unit(rule("fp32"), steps);
  EXPECT_EQ(u.verdict, Verdict::pass) << u.reason;
  EXPECT_DOUBLE_EQ(u.ceiling_pct, 97.5);
  ASSERT_EQ(u.steps.size(), 4u);
  EXPECT_TRUE(u.steps[2].within.value());
  EXPECT_NEAR(u.steps[3].expected_pct, 49.93, 1e-9);
  EXPECT_FALSE(u.steps[3].within.value());
  EXPECT_EQ(u.reason, "3 judged step(s) at 132, 66, 1 SMs agree with the work; 97.50% at full load");
}

TEST(Fp32, FailOutsideTolerance) {
  // |48.4 - 49| = 0.6 > 0.49 at 66 SMs; |0.86 - 0.74| = 0.12 > 0.1 at 1 SM.
  const UnitCheck u = check_unit(rule("fp32"), fp32_ladder(97.5, 48.4, 0.86));
  EXPECT_EQ(u.verdict, Verdict::fail);
  EXPECT_EQ(u.reason,
            "ffma 66/132 SMs read 48.40% against 49.00% expected (tolerance 0.49 points); "
            "ffma 1/132 SMs read 0.86% against 0.74% expected (tolerance 0.10 points)");
}

TEST(Fp32, FailUnderTheCeiling) {
  // Work at 88% and 44%: the counter reads it (|88.2 - 88| = 0.2 <= 0.88), but full load is under 90%.
  const UnitCheck u =
      check_unit(rule("fp32"), {fp32_step("full", 132, 0.88, 88.2), fp32_step("half", 66, 0.44, 44.1)});
  EXPECT_EQ(u.verdict, Verdict::fail);
  EXPECT_EQ(u.reason, "at full load it read 88.20%, under the 90% ceiling");
  EXPECT_DOUBLE_EQ(u.ceiling_pct, 88.2);
}

TEST(Fp32, InconclusiveWhenFullLoadIsNotCovered) {
  std::vector<MeasuredStep> steps = fp32_ladder(97.5, 49.3, 0.80);
  // The full-load work starts 20 ms into the 1-s window: 98% coverage, under 99%.
  steps[0].work_intervals = {{kSecond / 50, kSecond}};
  const UnitCheck u = check_unit(rule("fp32"), steps);
  EXPECT_EQ(u.verdict, Verdict::inconclusive);
  EXPECT_FALSE(u.steps[0].counted);
  EXPECT_EQ(u.steps[0].not_counted,
            "the work's own timestamps cover 98.00% of the counter window; a step needs 99%");
  EXPECT_EQ(u.reason, "no counted step at full load (132 SMs)");
  EXPECT_TRUE(std::isnan(u.ceiling_pct));
  // 99.5% coverage counts.
  steps[0].work_intervals = {{kSecond / 200, kSecond}};
  EXPECT_EQ(check_unit(rule("fp32"), steps).verdict, Verdict::pass);
}

TEST(Fp32, InconclusiveWithOneLoadOrNoReading) {
  const UnitCheck one = check_unit(rule("fp32"), {fp32_step("full", 132, 0.98, 97.5)});
  EXPECT_EQ(one.verdict, Verdict::inconclusive);
  EXPECT_EQ(one.reason, "only one load counted (132 SMs); the check needs 2 loads");
  MeasuredStep unread = fp32_step("full", 132, 0.98, std::nan(""));
  const UnitCheck none = check_unit(rule("fp32"), {unread});
  EXPECT_EQ(none.verdict, Verdict::inconclusive);
  EXPECT_EQ(none.reason, "no judged step counted: full: the counter gave no reading");
  EXPECT_EQ(check_unit(rule("fp32"), {}).reason, "no judged step ran");
}

// ---- DRAM ----

MeasuredStep dram_step(const std::string& name, int loaded, double bytes, double reading, double counted,
                       double mem_mhz) {
  MeasuredStep s = fp32_step(name, loaded, 0, reading);
  s.unit = "dram";
  s.work = bytes;
  s.peak_per_sm_per_cycle = std::nan("");
  s.counted_bytes = counted;
  s.mem_clock_min_mhz = s.mem_clock_max_mhz = mem_mhz;
  return s;
}

TEST(Dram, PassInProportionAtOneClock) {
  // Implied peaks 4e12/0.83 = 4.8193e12 and 2e12/0.418 = 4.7847e12: spread (4 x 0.418)/(2 x 0.83) - 1
  // = 1.672/1.66 - 1 = 0.72% <= 3%. Byte ratios 3.96/4 = 0.99 and 2.02/2 = 1.01, within 5%.
  const UnitCheck u = check_unit(rule("dram"), {dram_step("triad 132", 132, 4e12, 83.0, 3.96e12, 3201),
                                                dram_step("triad 66", 66, 2e12, 41.8, 2.02e12, 3201)});
  EXPECT_EQ(u.verdict, Verdict::pass) << u.reason;
  EXPECT_NEAR(u.implied_peak_spread, 1.672 / 1.66 - 1, 1e-12);
  EXPECT_NEAR(u.steps[0].implied_peak, 4e12 / 0.83, 1);
  EXPECT_NEAR(u.steps[0].bytes_ratio, 0.99, 1e-12);
  EXPECT_DOUBLE_EQ(u.ceiling_pct, 83.0);
}

TEST(Dram, FailOnSpreadBytesOrCeiling) {
  // Half load reads 39%: (2/0.39)/(4/0.83) - 1 = 1.66/1.56 - 1 = 6.4% > 3%.
  const UnitCheck spread = check_unit(rule("dram"), {dram_step("full", 132, 4e12, 83.0, 4e12, 3201),
                                                     dram_step("half", 66, 2e12, 39.0, 2e12, 3201)});
  EXPECT_EQ(spread.verdict, Verdict::fail);
  EXPECT_NEAR(spread.implied_peak_spread, 1.66 / 1.56 - 1, 1e-12);
  EXPECT_NE(spread.reason.find("differ by 6.4%"), std::string::npos) << spread.reason;
  // Counter total 4.3e12 of 4e12 launched: 1.075, outside 5%.
  const UnitCheck bytes = check_unit(rule("dram"), {dram_step("full", 132, 4e12, 83.0, 4.3e12, 3201),
                                                    dram_step("half", 66, 2e12, 41.5, 2e12, 3201)});
  EXPECT_EQ(bytes.verdict, Verdict::fail);
  EXPECT_EQ(bytes.reason, "full: the byte counter read 1.075 of the bytes launched; within 5% is allowed");
  // Implied 3.744e12/0.78 = 4.8e12 and 1.872e12/0.39 = 4.8e12 agree, but 78% < 80% at full load.
  const UnitCheck ceiling = check_unit(rule("dram"), {dram_step("full", 132, 3.744e12, 78.0, 3.744e12, 3201),
                                                      dram_step("half", 66, 1.872e12, 39.0, 1.872e12, 3201)});
  EXPECT_EQ(ceiling.verdict, Verdict::fail);
  EXPECT_EQ(ceiling.reason, "at full load it read 78.00%, under the 80% ceiling");
}

TEST(Dram, InconclusiveWhenTheMemoryClockMoves) {
  // The half-load step ran at 2619 MHz: (3201 - 2619)/3201 = 18% > 0.5%. The 6.4% spread is then not
  // judged (a clock change moves the implied peak), so the verdict is inconclusive, not fail.
  const UnitCheck u = check_unit(rule("dram"), {dram_step("full", 132, 4e12, 83.0, 4e12, 3201),
                                                dram_step("half", 66, 2e12, 39.0, 2e12, 2619)});
  EXPECT_EQ(u.verdict, Verdict::inconclusive);
  EXPECT_EQ(u.reason, "the memory clock was not steady across the steps, 2619 to 3201 MHz");
  // A clock that moves within one step leaves that step out.
  MeasuredStep moving = dram_step("half", 66, 2e12, 41.5, 2e12, 3201);
  moving.mem_clock_min_mhz = 2619;
  const StepCheck c = check_step(rule("dram"), moving);
  EXPECT_FALSE(c.counted);
  EXPECT_EQ(c.not_counted, "the memory clock moved within the step, 2619 to 3201 MHz");
  // No byte total: not counted.
  EXPECT_FALSE(check_step(rule("dram"), dram_step("x", 66, 2e12, 41.5, std::nan(""), 3201)).counted);
}

// ---- Load/store and L2: proportional checks of SM-clocked counters ----

TEST(LoadStore, ImpliedPeakPerSmPerCycle) {
  // 1.3068e11 wavefronts in 1 s reading 50% at 1980 MHz: 1.3068e11 / 0.5 / (132 x 1.98e9) = 1.0 per SM per
  // cycle. 4.95e10 wavefronts reading 25% at 1500 MHz: 4.95e10 / 0.25 / (132 x 1.5e9) = 1.0. Spread 0: pass,
  // and the ceiling is recorded, not judged.
  MeasuredStep a = fp32_step("lds 132", 132, 0, 50);
  a.unit = "ldst";
  a.work = 1.3068e11;
  MeasuredStep b = a;
  b.name = "lds 33";
  b.loaded_sms = 33;
  b.work = 4.95e10;
  b.reading_pct = 25;
  b.sm_clock_mhz = 1500;
  const UnitCheck u = check_unit(rule("ldst"), {a, b});
  EXPECT_EQ(u.verdict, Verdict::pass) << u.reason;
  EXPECT_NEAR(u.steps[0].implied_peak, 1.0, 1e-12);
  EXPECT_NEAR(u.steps[1].implied_peak, 1.0, 1e-12);
  EXPECT_DOUBLE_EQ(u.ceiling_pct, 50);
  // 4% allowed: at 25.9% the second implies 4.95e10/0.259/1.98e11 = 0.96525, spread 1/0.96525 - 1 = 3.6%:
  // pass; at 26.2%, 0.95420 and 4.8%: fail.
  b.reading_pct = 25.9;
  EXPECT_EQ(check_unit(rule("ldst"), {a, b}).verdict, Verdict::pass);
  b.reading_pct = 26.2;
  EXPECT_EQ(check_unit(rule("ldst"), {a, b}).verdict, Verdict::fail);
}

TEST(L2, NeedsOneSteadySmClock) {
  MeasuredStep a = fp32_step("l2 132", 132, 0, 60);
  a.unit = "l2";
  a.work = 3e12;
  MeasuredStep b = a;
  b.name = "l2 66";
  b.loaded_sms = 66;
  b.work = 1.5e12;
  b.reading_pct = 30;
  EXPECT_EQ(check_unit(rule("l2"), {a, b}).verdict, Verdict::pass);
  b.sm_clock_mhz = 1500;  // (1980 - 1500)/1980 = 24% > 0.5%
  const UnitCheck u = check_unit(rule("l2"), {a, b});
  EXPECT_EQ(u.verdict, Verdict::inconclusive);
  EXPECT_EQ(u.reason, "the SM clock was not steady across the steps, 1500 to 1980 MHz");
}

TEST(Rules, EveryCheckedUnitHasAnArgument) {
  for (const char* key : {"fp32", "dram", "tensor", "fp64", "ldst", "l2"}) {
    const UnitRule* r = unit_rule(key);
    ASSERT_NE(r, nullptr) << key;
    EXPECT_GT(r->why.size(), 40u) << key;
  }
  EXPECT_EQ(unit_rule("l1_fill"), nullptr);
  EXPECT_EQ(verdict_from_name("no_check"), Verdict::no_check);
  EXPECT_FALSE(verdict_from_name("passed").has_value());
}

}  // namespace
}  // namespace diescope::calibrate
