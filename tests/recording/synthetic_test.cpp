// The synthetic generator makes the records its header promises (values checked by hand), the
// same in memory and on disk; the bundled recording reads and has the probe's shape.
#include <algorithm>

#include "diescope/recording/synthetic.hpp"
#include "test_files.hpp"

namespace diescope {
namespace {

using testing::TempDir;

// One unit (fp32), one count (dram_bytes), no diagnostics or engines.
recording::SyntheticSpec two_phase_spec() {
  recording::SyntheticSpec s;
  s.meta = testing::small_meta();
  s.meta.units.resize(1);
  s.meta.diagnostics.clear();
  s.meta.engines.clear();
  s.meta.interval_ms = 10;
  // A: 15 ms at 40%, 1000 bytes/s, GPU-Util 100. B: 25 ms at 80%, 3000 bytes/s, GPU-Util 0.
  s.phases = {{"A", 0.015, {40}, {}, {1000}, 100}, {"B", 0.025, {80}, {}, {3000}, 0}};
  s.util_period_ns = 20 * recording::kNsPerMs;
  s.clock_period_ns = 10 * recording::kNsPerMs;
  s.mem_mhz = 1593;
  s.jitter = 0;
  s.significant_digits = 0;
  return s;
}

TEST(Synthetic, SamplesMixThePhasesTheyOverlap) {
  const recording::SyntheticSpec spec = two_phase_spec();
  const auto r = make_synthetic_recording(spec);
  const recording::TimeNs t0 = spec.meta.start_ns;
  ASSERT_EQ(r->list<recording::ChipSample>().size(), 4u);  // 40 ms of phases / 10 ms
  // [0,10): all A -> 40%, 1000 B/s * 0.010 s = 10 bytes.
  // [10,20): 5 ms A + 5 ms B -> 40*0.5 + 80*0.5 = 60%; 1000*0.005 + 3000*0.005 = 20 bytes.
  // [20,30) and [30,40): all B -> 80%, 3000*0.010 = 30 bytes.
  const double want_unit[] = {40, 60, 80, 80};
  const double want_count[] = {10, 20, 30, 30};
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(r->list<recording::ChipSample>()[i].start_ns,
              t0 + static_cast<recording::TimeNs>(i) * 10 * recording::kNsPerMs);
    EXPECT_EQ(r->list<recording::ChipSample>()[i].end_ns,
              t0 + static_cast<recording::TimeNs>(i + 1) * 10 * recording::kNsPerMs);
    EXPECT_DOUBLE_EQ(r->list<recording::ChipSample>()[i].units[0], want_unit[i]) << i;
    EXPECT_DOUBLE_EQ(r->list<recording::ChipSample>()[i].counts[0], want_count[i]) << i;
  }
  // GPU-Util at 20 ms covers [0,20): 15 ms at 100 + 5 ms at 0 -> 75; at 40 ms: all B -> 0.
  ASSERT_EQ(r->list<recording::UtilSample>().size(), 2u);
  EXPECT_EQ(r->list<recording::UtilSample>()[0].ts_ns, t0 + 20 * recording::kNsPerMs);
  EXPECT_EQ(r->list<recording::UtilSample>()[0].pct, 75);
  EXPECT_EQ(r->list<recording::UtilSample>()[1].pct, 0);
  // Clocks every 10 ms before the end; throttle gpu_idle while the phase's GPU-Util is 0 (B).
  ASSERT_EQ(r->list<recording::ClockReading>().size(), 4u);
  EXPECT_EQ(r->list<recording::ClockReading>()[3].mem_mhz, 1593);
  ASSERT_EQ(r->list<recording::ThrottleReading>().size(), 4u);
  EXPECT_EQ(r->list<recording::ThrottleReading>()[0].mask, std::uint64_t{0});
  EXPECT_EQ(r->list<recording::ThrottleReading>()[1].mask, std::uint64_t{0});
  EXPECT_EQ(r->list<recording::ThrottleReading>()[2].mask, std::uint64_t{recording::throttle_gpu_idle});
  EXPECT_EQ(r->list<recording::ThrottleReading>()[3].mask, std::uint64_t{recording::throttle_gpu_idle});
  // Counters on at the start, off and the end at 40 ms.
  const recording::SideRecords& side = r->side();
  ASSERT_EQ(side.counters.size(), 2u);
  EXPECT_TRUE(side.counters[0].on);
  EXPECT_EQ(side.counters[1].ts_ns, t0 + 40 * recording::kNsPerMs);
  ASSERT_TRUE(side.end.has_value());
  EXPECT_EQ(side.end->ts_ns, t0 + 40 * recording::kNsPerMs);
  EXPECT_EQ(side.last_ts_ns, t0 + 40 * recording::kNsPerMs);
  // 2 header lines + 4 chip + 2 util + 4 clock + 4 throttle + power + proc + 2 counters + end = 21.
  EXPECT_EQ(side.complete_lines, 21);
}

TEST(Synthetic, SetupSampleAndCycles) {
  recording::SyntheticSpec spec = two_phase_spec();
  spec.setup_ns = 5 * recording::kNsPerMs;
  spec.setup_units = {0.5};
  spec.setup_counts = {7};
  spec.cycles = 2;
  const auto r = make_synthetic_recording(spec);
  const recording::TimeNs t0 = spec.meta.start_ns;
  // Setup [0,5) then 80 ms of phases in 8 samples of 10 ms.
  ASSERT_EQ(r->list<recording::ChipSample>().size(), 9u);
  EXPECT_EQ(r->list<recording::ChipSample>()[0].end_ns - r->list<recording::ChipSample>()[0].start_ns,
            5 * recording::kNsPerMs);
  EXPECT_EQ(r->list<recording::ChipSample>()[0].units[0], 0.5);
  EXPECT_EQ(r->list<recording::ChipSample>()[0].counts[0], 7);
  // Second cycle starts at 5 + 40 = 45 ms: sample [45,55) is all A (40%); [55,65) mixes like [15,25).
  EXPECT_EQ(r->list<recording::ChipSample>()[5].start_ns, t0 + 45 * recording::kNsPerMs);
  EXPECT_DOUBLE_EQ(r->list<recording::ChipSample>()[5].units[0], 40);
  EXPECT_DOUBLE_EQ(r->list<recording::ChipSample>()[6].units[0], 60);
  EXPECT_EQ(r->side().end->ts_ns, t0 + 85 * recording::kNsPerMs);
}

TEST(Synthetic, RunSecondsCutsTheCycles) {
  recording::SyntheticSpec spec = two_phase_spec();
  spec.cycles = 100;
  spec.run_seconds = 0.055;  // 5 whole samples; the half sample at the end is left out
  const auto r = make_synthetic_recording(spec);
  EXPECT_EQ(r->list<recording::ChipSample>().size(), 5u);
  EXPECT_EQ(r->side().end->ts_ns, spec.meta.start_ns + 55 * recording::kNsPerMs);
}

TEST(Synthetic, JitterAndRoundingStayNearTheValue) {
  recording::SyntheticSpec spec = two_phase_spec();
  spec.jitter = 0.01;
  spec.significant_digits = 4;
  spec.cycles = 50;
  const auto r = make_synthetic_recording(spec);
  bool any_differs = false;
  for (const recording::OwnedChipSample& c : r->list<recording::ChipSample>()) {
    const double v = c.units[0];
    // Each value is 40, 60 or 80 times (1 +- 0.01), rounded to 4 digits (at most 0.05/40 = 0.125%
    // more), so within 1.13% of one of them.
    const double tol = 0.01 + 0.00125;
    const bool near =
        std::abs(v / 40 - 1) <= tol || std::abs(v / 60 - 1) <= tol || std::abs(v / 80 - 1) <= tol;
    EXPECT_TRUE(near) << v;
    any_differs |= (v != 40 && v != 60 && v != 80);
  }
  EXPECT_TRUE(any_differs);
  // Deterministic: the same spec gives the same values.
  const auto again = make_synthetic_recording(spec);
  for (std::size_t i = 0; i < r->list<recording::ChipSample>().size(); ++i)
    EXPECT_EQ(r->list<recording::ChipSample>()[i].units[0], again->list<recording::ChipSample>()[i].units[0]);
}

TEST(Synthetic, MismatchedSpecIsRejected) {
  recording::SyntheticSpec spec = two_phase_spec();
  spec.phases[1].units = {1, 2};
  EXPECT_THROW(make_synthetic_recording(spec), core::Error);
}

TEST(Synthetic, FileAndMemoryHoldTheSameRecords) {
  TempDir dir;
  recording::SyntheticSpec spec = recording::h200_probe_shape_spec();
  const auto path = dir / "probe.dsrec";
  write_synthetic_recording(path, spec);
  const auto file = recording::open_recording(path);
  const auto memory = make_synthetic_recording(spec);
  recording::ChipSample a, b;
  auto fa = file->stream<recording::ChipSample>(), fb = memory->stream<recording::ChipSample>();
  long n = 0;
  while (fa->next(a)) {
    ASSERT_TRUE(fb->next(b));
    EXPECT_EQ(a.start_ns, b.start_ns);
    EXPECT_EQ(a.end_ns, b.end_ns);
    EXPECT_TRUE(std::equal(a.units.begin(), a.units.end(), b.units.begin(), b.units.end()));
    EXPECT_TRUE(std::equal(a.counts.begin(), a.counts.end(), b.counts.begin(), b.counts.end()));
    ++n;
  }
  EXPECT_FALSE(fb->next(b));
  EXPECT_EQ(n, 294);
  EXPECT_EQ(file->side().complete_lines, memory->side().complete_lines);
  EXPECT_EQ(file->side().last_ts_ns, memory->side().last_ts_ns);
  EXPECT_EQ(file->side().notes.size(), memory->side().notes.size());
}

TEST(Synthetic, LongRunHasTheAdvertisedRates) {
  // 0.01 h = 36 s: 3600 chip samples of 10 ms, GPU-Util every 200 ms (180), clocks every 100 ms (360).
  const auto r = make_synthetic_recording(recording::long_run_spec(0.01));
  EXPECT_EQ(r->meta().units.size(), 8u);
  EXPECT_EQ(r->meta().diagnostics.size(), 2u);
  EXPECT_EQ(r->meta().counts.size(), 1u);
  EXPECT_EQ(r->list<recording::ChipSample>().size(), 3600u);
  EXPECT_EQ(r->list<recording::UtilSample>().size(), 180u);
  EXPECT_EQ(r->list<recording::ClockReading>().size(), 360u);
  // 24 h would be 86400 s / 10 ms = 8.64 million samples.
  const recording::SyntheticSpec day = recording::long_run_spec();
  EXPECT_EQ(static_cast<long long>(day.run_seconds * 1000 / day.meta.interval_ms), 8'640'000LL);
}

TEST(Synthetic, BundledRecordingReadsAndHasTheProbeShape) {
  const std::filesystem::path path =
      std::filesystem::path(DIESCOPE_SOURCE_DIR) / "data/recordings/h200-probe-shape.dsrec";
  ASSERT_TRUE(std::filesystem::exists(path)) << path;
  EXPECT_LT(std::filesystem::file_size(path), 300u * 1024);
  const auto r = recording::open_recording(path);
  testing::read_everything(*r);
  EXPECT_FALSE(r->side().truncated);
  EXPECT_EQ(r->meta().gpu.model, "NVIDIA H200");
  if (r->meta().host != "synthetic")
    GTEST_SKIP() << "the bundled recording is a real one now; shape checks are for the synthetic one";
  // Still the synthetic one: it must be exactly what the generator makes today.
  TempDir dir;
  write_synthetic_recording(dir / "now.dsrec", recording::h200_probe_shape_spec());
  EXPECT_EQ(testing::read_bytes(path), testing::read_bytes(dir / "now.dsrec"))
      << "regenerate it: diescope-make-recording probe-shape data/recordings/h200-probe-shape.dsrec";
  ASSERT_FALSE(r->side().notes.empty());
  EXPECT_EQ(r->side().notes[0].topic, "synthetic");
  // The first sample spans the 614 ms of setup; FFMA reads ~85% FP32, copy ~82% DRAM and
  // ~3.95e10 bytes per 10 ms (within the 0.4% jitter).
  auto chip = r->stream<recording::ChipSample>();
  recording::ChipSample c;
  ASSERT_TRUE(chip->next(c));
  EXPECT_EQ((c.end_ns - c.start_ns) / recording::kNsPerMs, 614);
  double max_fp32 = 0, max_dram = 0, max_bytes = 0;
  while (chip->next(c)) {
    max_fp32 = std::max(max_fp32, c.units[0]);
    max_dram = std::max(max_dram, c.units[2]);
    max_bytes = std::max(max_bytes, c.counts[0]);
  }
  EXPECT_NEAR(max_fp32, 84.97, 84.97 * 0.0041);
  EXPECT_NEAR(max_dram, 81.8, 81.8 * 0.0041);
  EXPECT_NEAR(max_bytes, 3.95e10, 3.95e10 * 0.0041);
  double max_util = 0;
  recording::UtilSample u;
  for (auto s = r->stream<recording::UtilSample>(); s->next(u);) max_util = std::max(max_util, u.pct);
  EXPECT_EQ(max_util, 99);
}

}  // namespace
}  // namespace diescope
