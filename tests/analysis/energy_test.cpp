// The energy rules (docs/energy.md), on small recordings whose answers are worked out by hand below.
#include <gtest/gtest.h>

#include <cmath>

#include "builder.hpp"
#include "diescope/analysis/energy.hpp"

namespace diescope {
namespace {

using analysis::CounterUnused;
using analysis::EnergyMissing;
using analysis::EnergySource;
using testing::Builder;
using testing::kNaNv;

// Run [0, 1000) ms; the counter reads 1000 J at 0, 1100 J at 400, 1300 J at 800, 1350 J at 1000.
// Chip samples: the setup sample [0, 100) (dropped), DIE-Util 5% over [100, 500), 50% over [500, 1000).
Builder counter_run() {
  Builder b({"fp32"});
  b.setup_sample(0, 100).sample(100, 500, {5}).sample(500, 1000, {50});
  b.power_reading(0, 700, 250, 1'000'000).power_reading(400, 700, 250, 1'100'000);
  b.power_reading(800, 700, 500, 1'300'000).power_reading(1000, 700, 250, 1'350'000);
  return b;
}

TEST(Energy, CounterOverTheRunAndStrandedUnderTheThreshold) {
  const analysis::Analysis a = counter_run().analyze();
  const analysis::EnergyFigures& e = a.run.energy;
  EXPECT_EQ(e.source, EnergySource::counter);
  EXPECT_EQ(e.counter_unused, CounterUnused::none);
  EXPECT_EQ(e.missing, EnergyMissing::none);
  // 1,350,000 mJ - 1,000,000 mJ = 350 J over 1.0 s: 350 W.
  EXPECT_NEAR(e.energy_j, 350.0, 1e-9);
  EXPECT_NEAR(e.covered_s, 1.0, 1e-12);
  EXPECT_NEAR(e.coverage_pct, 100.0, 1e-9);
  EXPECT_NEAR(e.mean_power_w, 350.0, 1e-9);
  // Chip-sampled [100, 1000): the counter at 100 is 1000 + 100 x 100/400 = 1025 J, so 1350 - 1025 = 325 J.
  EXPECT_NEAR(e.chip_sampled_j, 325.0, 1e-9);
  // DIE-Util 5% < 10% over [100, 500): the counter at 500 is 1100 + 200 x 100/400 = 1150 J;
  // 1150 - 1025 = 125 J stranded, 125 / 325 = 38.4615...% of the chip-sampled energy.
  EXPECT_NEAR(e.stranded_j, 125.0, 1e-9);
  EXPECT_NEAR(e.stranded_pct, 100.0 * 125.0 / 325.0, 1e-9);
}

TEST(Energy, WindowInterpolatesTheCounterAtItsEnds) {
  Builder b = counter_run();
  b.mark(200, recording::MarkKind::start).mark(900, recording::MarkKind::stop);
  const analysis::Analysis a = b.analyze();
  ASSERT_TRUE(a.window.found);
  const analysis::EnergyFigures& e = a.window.results.energy;
  // At 200: 1000 + 100 x 200/400 = 1050 J; at 900: 1300 + 50 x 100/200 = 1325 J; 275 J over 0.7 s.
  EXPECT_EQ(e.source, EnergySource::counter);
  EXPECT_NEAR(e.energy_j, 275.0, 1e-9);
  EXPECT_NEAR(e.covered_s, 0.7, 1e-12);
  EXPECT_NEAR(e.mean_power_w, 275.0 / 0.7, 1e-9);
  // All of the window is chip-sampled; stranded is [200, 500): 1150 - 1050 = 100 J.
  EXPECT_NEAR(e.chip_sampled_j, 275.0, 1e-9);
  EXPECT_NEAR(e.stranded_j, 100.0, 1e-9);
  // The same span through energy_over (steps, regions): the same joules, no chip figures.
  const analysis::EnergyFigures over = analysis::energy_over(b.rec, testing::at_ms(200), testing::at_ms(900));
  EXPECT_NEAR(over.energy_j, 275.0, 1e-9);
  EXPECT_TRUE(std::isnan(over.stranded_j));
}

TEST(Energy, CounterThatGoesBackFallsBackToThePowerDraw) {
  Builder b({"fp32"});
  b.setup_sample(0, 100).sample(100, 1000, {50});
  // The counter goes back at 500 (a driver reload): the draw is integrated instead.
  b.power_reading(0, 700, 100, 5000).power_reading(500, 700, 300, 2000).power_reading(1000, 700, 300, 3000);
  const analysis::EnergyFigures e = b.analyze().run.energy;
  EXPECT_EQ(e.source, EnergySource::power_draw);
  EXPECT_EQ(e.counter_unused, CounterUnused::went_back);
  // Trapezoids: (100 + 300) / 2 W x 0.5 s = 100 J, then 300 W x 0.5 s = 150 J: 250 J.
  EXPECT_NEAR(e.energy_j, 250.0, 1e-9);
  // Chip-sampled [100, 1000): the draw at 100 is 100 + 200 x 100/500 = 140 W;
  // (140 + 300) / 2 x 0.4 s = 88 J, plus 150 J: 238 J. No sample is under 10%: 0 J stranded.
  EXPECT_NEAR(e.chip_sampled_j, 238.0, 1e-9);
  EXPECT_EQ(e.stranded_j, 0.0);
  EXPECT_EQ(e.stranded_pct, 0.0);
}

TEST(Energy, CounterNotReadFallsBackToTheDraw) {
  Builder b({"fp32"});
  b.power_reading(0, 700, 200, kNaNv).power_reading(1000, 700, 400, kNaNv);
  const analysis::EnergyFigures e = b.analyze().run.energy;
  EXPECT_EQ(e.source, EnergySource::power_draw);
  EXPECT_EQ(e.counter_unused, CounterUnused::absent);
  EXPECT_NEAR(e.energy_j, 300.0, 1e-9);   // (200 + 400) / 2 W x 1 s
  EXPECT_TRUE(std::isnan(e.stranded_j));  // no usable chip sample: not known, not 0
}

TEST(Energy, NeitherReadIsNaNWithTheReason) {
  Builder b({"fp32"});
  b.power_reading(0, 700, kNaNv, kNaNv).power_reading(1000, 700, kNaNv, kNaNv);
  analysis::Analysis a = b.analyze();
  EXPECT_EQ(a.run.energy.source, EnergySource::none);
  EXPECT_TRUE(std::isnan(a.run.energy.energy_j));
  // A file before format 4 recorded neither: that is the reason, not an unreadable counter.
  b.rec.meta_data.format_version = 3;
  EXPECT_EQ(b.analyze().run.energy.missing, EnergyMissing::not_recorded);
  b.rec.meta_data.format_version = 4;
  EXPECT_EQ(b.analyze().run.energy.missing, EnergyMissing::unreadable);
}

TEST(Energy, OneReadingCoversNothing) {
  Builder b({"fp32"});
  b.power_reading(500, 700, 300, 1000);
  const analysis::EnergyFigures e = b.analyze().run.energy;
  EXPECT_EQ(e.missing, EnergyMissing::no_readings);
  EXPECT_TRUE(std::isnan(e.energy_j));
  EXPECT_EQ(e.covered_s, 0.0);
}

TEST(Energy, OnlyTheTimeBetweenReadingsIsCovered) {
  Builder b({"fp32"});
  b.power_reading(200, 700, 300, 10'000).power_reading(800, 700, 300, 190'000);
  const analysis::EnergyFigures e = b.analyze().run.energy;
  // Readings cover [200, 800) of the run's [0, 1000): 0.6 s, 60%; 180 J over them, 300 W.
  EXPECT_NEAR(e.covered_s, 0.6, 1e-12);
  EXPECT_NEAR(e.coverage_pct, 60.0, 1e-9);
  EXPECT_NEAR(e.energy_j, 180.0, 1e-9);
  EXPECT_NEAR(e.mean_power_w, 300.0, 1e-9);
}

TEST(Energy, JoulesPerTflop) {
  EXPECT_DOUBLE_EQ(analysis::joules_per_tflop(500.0, 2e12), 250.0);  // 500 J / 2 TFLOP
  EXPECT_TRUE(std::isnan(analysis::joules_per_tflop(500.0, 0.0)));
  EXPECT_TRUE(std::isnan(analysis::joules_per_tflop(kNaNv, 1e12)));
}

// docs/energy.md#joules-per-tflop: the program's FLOPs, each over the span it named.
TEST(Energy, JoulesPerTflopOverTheWindowTheProgramNamed) {
  Builder b = counter_run();
  b.mark(200, recording::MarkKind::start).mark(900, recording::MarkKind::stop);
  // The window's 275 J (above) over 5.5e13 FLOPs = 55 TFLOP: 275 / 55 = 5 J per TFLOP. A second
  // window line is not the first: it is ignored; a note of another topic and a bad text are too.
  b.note(950, "flops", "5.5e+13 window").note(960, "flops", "1e+20 window");
  b.note(960, "window", "1e+12 run").note(970, "flops", "many window");
  const analysis::Analysis a = b.analyze();
  ASSERT_TRUE(a.window.found);
  const analysis::EnergyFigures& w = a.window.results.energy;
  EXPECT_TRUE(w.flops_told);
  EXPECT_DOUBLE_EQ(w.flops, 5.5e13);
  EXPECT_EQ(w.flops_source, analysis::FlopsSource::program);
  EXPECT_NEAR(w.joules_per_tflop, 5.0, 1e-12);
  // The run has the program's FLOPs for the window only: none, with why.
  const analysis::EnergyFigures& r = a.run.energy;
  EXPECT_TRUE(r.flops_told);
  EXPECT_TRUE(std::isnan(r.flops));
  EXPECT_EQ(r.flops_missing, analysis::FlopsMissing::window_only);
  EXPECT_TRUE(std::isnan(r.joules_per_tflop));
}

TEST(Energy, JoulesPerTflopOverTheRun) {
  Builder b = counter_run();
  // The run's 350 J over 7e13 FLOPs (70 TFLOP): 5 J per TFLOP.
  b.note(990, "flops", "7e+13 run");
  const analysis::Analysis a = b.analyze();
  EXPECT_NEAR(a.run.energy.joules_per_tflop, 5.0, 1e-12);
}

TEST(Energy, NoFlopsNoteLeavesTheFiguresOut) {
  const analysis::Analysis a = counter_run().analyze();
  EXPECT_FALSE(a.run.energy.flops_told);
  EXPECT_TRUE(std::isnan(a.run.energy.joules_per_tflop));
}

TEST(Energy, PowerReadingsOutOfOrderAreRefused) {
  Builder b({"fp32"});
  b.power_reading(500, 700, 300, 1000).power_reading(400, 700, 300, 2000);
  EXPECT_THROW(b.analyze(), core::InputError);
}

}  // namespace
}  // namespace diescope
