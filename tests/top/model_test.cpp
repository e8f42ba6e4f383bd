// top's figures from readings, each worked out by hand (docs/top.md#figures).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "diescope/collect/unit_tables.hpp"
#include "diescope/top/model.hpp"

namespace diescope::top {
namespace {

using recording::TimeNs;
constexpr TimeNs kMs = recording::kNsPerMs;
constexpr TimeNs kT0 = 1'700'000'000LL * recording::kNsPerSecond;  // a whole second

// GPU 3, an H200 sampled every 100 ms, with these units (key, label).
recording::RecordingMeta h200_meta(const std::vector<std::pair<std::string, std::string>>& units) {
  recording::RecordingMeta meta;
  meta.gpu.index = 3;
  meta.gpu.model = "NVIDIA H200";
  meta.gpu.chip = "GH100";
  meta.interval_ms = 100;
  for (const auto& [key, label] : units) {
    recording::ColumnDef c;
    c.key = key;
    c.label = label;
    meta.units.push_back(c);
  }
  return meta;
}

class FakeSource final : public ViewFeed {
 public:
  explicit FakeSource(bool live = true, std::string unit_table = "hopper-gh100")
      : live_(live), meta_(h200_meta({{"fp32", "FP32"}, {"dram", "DRAM"}})) {
    meta_.unit_table = std::move(unit_table);
    // A recording made with GPM has GPM's columns, as the reader gives them.
    if (meta_.unit_table == collect::gpm_unit_table().name)
      for (recording::ColumnDef& c : meta_.units) c.source = recording::UnitSource::gpm;
  }
  std::string description() const override { return "fake"; }
  collect::ChipSource chip_source() const override { return collect::ChipSource::pm; }
  bool live() const override { return live_; }
  std::size_t gpu_count() const override { return 1; }
  const recording::RecordingMeta& meta(std::size_t) const override { return meta_; }
  TimeNs now_ns() override { return 0; }
  void poll(TimeNs, std::vector<GpuUpdate>&) override {}
  void shutdown() override {}

 private:
  bool live_;
  recording::RecordingMeta meta_;
};

void add_sample(GpuUpdate& u, TimeNs start, TimeNs end, double fp32, double dram) {
  recording::OwnedChipSample s;
  s.start_ns = start;
  s.end_ns = end;
  s.units = {fp32, dram};
  u.records.list<recording::ChipSample>().push_back(s);
}

// Counters on at T0; a setup sample (T0, T0+100 ms]; ten 100 ms samples to T0+1.1 s: five at
// FP32 60 / DRAM 20, five at FP32 10 / DRAM 40. GPU-Util 100 at T0+0.6 s and 80 at T0+1.1 s.
GpuUpdate steady_update() {
  GpuUpdate u;
  u.records.counters.push_back(recording::CountersEvent{kT0, true, ""});
  add_sample(u, kT0, kT0 + 100 * kMs, 90, 90);  // spans the setup: left out
  for (int i = 0; i < 10; ++i) {
    const TimeNs start = kT0 + (100 + 100 * i) * kMs;
    if (i < 5)
      add_sample(u, start, start + 100 * kMs, 60, 20);
    else
      add_sample(u, start, start + 100 * kMs, 10, 40);
  }
  u.records.list<recording::UtilSample>().push_back(recording::UtilSample{kT0 + 600 * kMs, 100});
  u.records.list<recording::UtilSample>().push_back(recording::UtilSample{kT0 + 1100 * kMs, 80});
  return u;
}

TEST(TopModel, FiguresOverTheLastSecondOfChipTime) {
  FakeSource source;
  Model model(source, 1000);
  GpuUpdate u = steady_update();
  model.absorb(0, u, kT0 + 1200 * kMs);
  const std::vector<GpuFrame> gpus = model.gpus(kT0 + 1200 * kMs);
  ASSERT_EQ(gpus.size(), 1u);
  const GpuFrame& g = gpus[0];
  EXPECT_EQ(g.index, 3);
  EXPECT_EQ(g.chip_status, ChipStatus::chip);
  // Window (T0+0.1 s, T0+1.1 s]: busiest unit per sample is 60 (x5) then 40 (x5): DIE-Util 50.
  EXPECT_NEAR(g.die_util_pct, 50.0, 1e-9);
  ASSERT_EQ(g.units.size(), 2u);
  EXPECT_NEAR(g.units[0].pct, 35.0, 1e-9);  // (5x60 + 5x10) / 10
  EXPECT_NEAR(g.units[1].pct, 30.0, 1e-9);  // (5x20 + 5x40) / 10
  EXPECT_EQ(g.limiting_unit, "FP32");
  // GPU-Util: 100 booked to (T0-0.4, T0+0.6], 80 to (T0+0.6, T0+1.1]; half of the window each: 90.
  EXPECT_NEAR(g.gpu_util_pct, 90.0, 1e-9);
  EXPECT_NEAR(g.gap_points(), 40.0, 1e-9);
}

TEST(TopModel, AReplayThatIsOverKeepsItsLastFiguresAndSaysSo) {
  // docs/top.md#sources: the recording ends at T0+1.1 s; long after, the frame is the one at its
  // end (the figures of FiguresOverTheLastSecondOfChipTime), not "starting", and the clock stops.
  FakeSource source(false);
  Model model(source, 1000);
  GpuUpdate u = steady_update();
  u.ended_at = kT0 + 1100 * kMs;
  model.absorb(0, u, kT0 + 1200 * kMs);
  for (const TimeNs later : {kT0 + 5000 * kMs, kT0 + 200'000 * kMs}) {
    GpuUpdate nothing;  // polls after the end bring nothing
    model.absorb(0, nothing, later);
    const GpuFrame g = model.gpus(later)[0];
    EXPECT_TRUE(g.replay_over);
    EXPECT_EQ(g.chip_status, ChipStatus::chip);
    EXPECT_NEAR(g.die_util_pct, 50.0, 1e-9);
    EXPECT_NEAR(g.gpu_util_pct, 90.0, 1e-9);
    EXPECT_EQ(g.limiting_unit, "FP32");
    // The sparkline's newest second is still [T0, T0+1 s): 5 x 60 and 4 x 40.
    EXPECT_NEAR(g.die_util_history.back(), (5 * 60.0 + 4 * 40.0) / 9, 1e-9);
    EXPECT_EQ(model.shown_time(later), kT0 + 1100 * kMs);
  }
  // A replay not yet over shows the present time.
  FakeSource going(false);
  Model running(going, 1000);
  GpuUpdate v = steady_update();
  running.absorb(0, v, kT0 + 1200 * kMs);
  EXPECT_FALSE(running.gpus(kT0 + 1200 * kMs)[0].replay_over);
  EXPECT_EQ(running.shown_time(kT0 + 1200 * kMs), kT0 + 1200 * kMs);
}

TEST(TopModel, SparklinesAreWholeSecondsOfTheLastMinute) {
  FakeSource source;
  Model model(source, 1000);
  GpuUpdate u = steady_update();
  model.absorb(0, u, kT0 + 1200 * kMs);
  const GpuFrame g = model.gpus(kT0 + 1200 * kMs)[0];
  ASSERT_EQ(g.die_util_history.size(), static_cast<std::size_t>(kHistorySeconds));
  ASSERT_EQ(g.gpu_util_history.size(), static_cast<std::size_t>(kHistorySeconds));
  // The newest whole second is [T0, T0+1 s): chip samples cover 0.1..1.0 s: 5 x 60 and 4 x 40.
  EXPECT_NEAR(g.die_util_history.back(), (5 * 60.0 + 4 * 40.0) / 9, 1e-9);
  // GPU-Util over that second: 0.6 s at 100 and 0.4 s at 80.
  EXPECT_NEAR(g.gpu_util_history.back(), 92.0, 1e-9);
  // The second before it: GPU-Util's first sample reaches 0.4 s into it; no chip sample does.
  EXPECT_NEAR(g.gpu_util_history[kHistorySeconds - 2], 100.0, 1e-9);
  EXPECT_TRUE(std::isnan(g.die_util_history[kHistorySeconds - 2]));
  EXPECT_TRUE(std::isnan(g.gpu_util_history[kHistorySeconds - 3]));
}

TEST(TopModel, BrokenSamplesAreLeftOut) {
  FakeSource source;
  Model model(source, 1000);
  GpuUpdate u;
  u.records.counters.push_back(recording::CountersEvent{kT0, true, ""});
  add_sample(u, kT0, kT0 + 100 * kMs, 0, 0);  // setup
  // FP32 250% of peak, and a sample without values (NaN, as a split sample comes), break their
  // samples (docs/method.md#which-chip-samples-are-used): left out, not counted as idle.
  add_sample(u, kT0 + 100 * kMs, kT0 + 200 * kMs, 250, 99);
  add_sample(u, kT0 + 200 * kMs, kT0 + 300 * kMs, std::nan(""), std::nan(""));
  // Then eight samples: FP32 80 in the first, 20 in the others; DRAM 5 throughout.
  for (int i = 0; i < 8; ++i) {
    const TimeNs start = kT0 + (300 + 100 * i) * kMs;
    add_sample(u, start, start + 100 * kMs, i == 0 ? 80 : 20, 5);
  }
  model.absorb(0, u, kT0 + 1100 * kMs);
  const GpuFrame g = model.gpus(kT0 + 1100 * kMs)[0];
  // Window (T0+0.1, T0+1.1]: only the eight usable samples count: (80 + 7 x 20) / 8.
  EXPECT_NEAR(g.die_util_pct, 27.5, 1e-9);
  EXPECT_NEAR(g.units[0].pct, 27.5, 1e-9);
  EXPECT_NEAR(g.units[1].pct, 5.0, 1e-9);
  EXPECT_EQ(g.limiting_unit, "FP32");
  EXPECT_TRUE(std::isnan(g.gpu_util_pct));  // no GPU-Util sample: not available, not 0
}

TEST(TopModel, IdleUnitsLeaveNoLimitingUnit) {
  FakeSource source;
  Model model(source, 1000);
  GpuUpdate u;
  for (int i = 0; i < 10; ++i) add_sample(u, kT0 + 100 * i * kMs, kT0 + 100 * (i + 1) * kMs, 0.5, 0.9);
  model.absorb(0, u, kT0 + 1000 * kMs);
  const GpuFrame g = model.gpus(kT0 + 1000 * kMs)[0];
  EXPECT_NEAR(g.die_util_pct, 0.9, 1e-9);
  EXPECT_TRUE(g.limiting_unit.empty());  // under 1% (analysis::kMinBusyPct) is idle
  EXPECT_TRUE(g.all_idle);
}

TEST(TopModel, HeldCountersShowGpuUtilOnlyWithTheReason) {
  FakeSource source;
  Model model(source, 1000);
  GpuUpdate u;
  u.records.counters.push_back(recording::CountersEvent{kT0, true, ""});
  u.records.counters.push_back(
      recording::CountersEvent{kT0 + 50 * kMs, false, "the counter sampler exited with 4"});
  u.records.notes.push_back(
      recording::Note{kT0 + 50 * kMs, "sampler", "another profiler holds the counters"});
  u.records.list<recording::UtilSample>().push_back(recording::UtilSample{kT0 + 500 * kMs, 70});
  u.records.list<recording::UtilSample>().push_back(recording::UtilSample{kT0 + 1000 * kMs, 90});
  model.absorb(0, u, kT0 + 1000 * kMs);
  const GpuFrame g = model.gpus(kT0 + 1000 * kMs)[0];
  EXPECT_EQ(g.chip_status, ChipStatus::nvml_only);
  EXPECT_EQ(g.status_reason, "another profiler holds the counters");
  EXPECT_TRUE(std::isnan(g.die_util_pct));
  EXPECT_TRUE(g.limiting_unit.empty());
  // Window (T0, T0+1 s]: 70 booked to (T0-0.5, T0+0.5], 90 to (T0+0.5, T0+1]: 80.
  EXPECT_NEAR(g.gpu_util_pct, 80.0, 1e-9);
  EXPECT_TRUE(std::isnan(g.gap_points()));
}

TEST(TopModel, ChipSamplesGoStaleAfterThreeDrains) {
  FakeSource source;
  Model model(source, 1000);
  GpuUpdate u = steady_update();
  model.absorb(0, u, kT0 + 1200 * kMs);
  // The newest sample ended at T0+1.1 s; stale after 3 s (three 1 s drains).
  EXPECT_EQ(model.gpus(kT0 + 4100 * kMs)[0].chip_status, ChipStatus::chip);
  const GpuFrame late = model.gpus(kT0 + 4101 * kMs)[0];
  EXPECT_EQ(late.chip_status, ChipStatus::starting);  // the counters are on, nothing has come since
  EXPECT_TRUE(std::isnan(late.die_util_pct));
}

TEST(TopModel, ClocksPowerThrottleAndProcessesAreTheNewest) {
  FakeSource source;
  Model model(source, 1000);
  GpuUpdate u;
  u.records.list<recording::ClockReading>().push_back(recording::ClockReading{kT0, 1000, 2000});
  u.records.list<recording::ClockReading>().push_back(recording::ClockReading{kT0 + kMs, 1980, 3201});
  u.records.list<recording::PowerLimitReading>().push_back(recording::PowerLimitReading{kT0, 700});
  u.records.list<recording::ThrottleReading>().push_back(
      recording::ThrottleReading{kT0, recording::throttle_sw_power_cap});
  u.records.list<recording::ProcessReading>().push_back(recording::ProcessReading{kT0, 2, 0, 0});
  u.power_draw_w = 512;
  u.processes = std::vector<ProcessInfo>{{42, "python3", ""}, {43, "", ""}};
  model.absorb(0, u, kT0 + kMs);
  const GpuFrame g = model.gpus(kT0 + kMs)[0];
  EXPECT_EQ(g.sm_mhz, 1980);
  EXPECT_EQ(g.mem_mhz, 3201);
  EXPECT_EQ(g.power_w, 512);
  EXPECT_EQ(g.power_limit_w, 700);
  ASSERT_TRUE(g.throttle_mask.has_value());
  EXPECT_EQ(*g.throttle_mask, recording::throttle_sw_power_cap);
  ASSERT_TRUE(g.processes.has_value());
  EXPECT_EQ(g.processes->size(), 2u);
  EXPECT_EQ(g.compute_processes, 2);
}

}  // namespace
}  // namespace diescope::top

namespace diescope::top {
namespace {

TEST(TopModel, BeforeAnyReadingTheCountersAreStarting) {
  FakeSource source;
  Model model(source, 1000);
  const GpuFrame g = model.gpus(kT0)[0];
  EXPECT_EQ(g.chip_status, ChipStatus::starting);  // the source asks for them from its start
  EXPECT_TRUE(std::isnan(g.gpu_util_pct));
  EXPECT_TRUE(std::isnan(g.die_util_pct));
}

// A recording made with GPM (its unit table is GPM's) replays under a GPM title, whatever the
// source's own default.
TEST(TopModel, AGpmRecordingIsTitledGpm) {
  FakeSource gpm(false, collect::gpm_unit_table().name);
  EXPECT_EQ(Model(gpm, 1000).gpus(kT0)[0].chip_source, collect::ChipSource::gpm);
  FakeSource pm(false);
  EXPECT_EQ(Model(pm, 1000).gpus(kT0)[0].chip_source, collect::ChipSource::pm);
}

// The sampler child's start-up information, passed on as "sampler sampler", is not a failure: the
// counters stay starting (on the H200 the first screen read "GPU-Util only" with the decode image's
// size as its reason). The supervisor's own "sampler" note is one.
TEST(TopModel, TheSamplersInformationIsNotAReasonButItsFailureIs) {
  FakeSource source;
  Model model(source, 1000);
  GpuUpdate info;
  info.records.notes.push_back(recording::Note{kT0, "sampler sampler", "decode image holds 129 samples"});
  model.absorb(0, info, kT0);
  EXPECT_EQ(model.gpus(kT0)[0].chip_status, ChipStatus::starting);
  GpuUpdate failure;
  failure.records.notes.push_back(
      recording::Note{kT0 + kMs, "sampler", "cannot start the counter sampler: x"});
  model.absorb(0, failure, kT0 + kMs);
  const GpuFrame g = model.gpus(kT0 + kMs)[0];
  EXPECT_EQ(g.chip_status, ChipStatus::nvml_only);
  EXPECT_EQ(g.status_reason, "cannot start the counter sampler: x");
}

// Another profiler takes the counters: the live source switches the GPU to GPM, whose columns differ
// (docs/top.md#sources). The title names GPM, the units are GPM's, and the figures come from GPM's
// samples only: PM sampling's history has other columns and is dropped.
// A steady second of PM sampling, then the switch to GPM (Tensor and FP32 columns) at T0+1.2 s.
void steady_then_gpm(Model& model) {
  GpuUpdate pm = steady_update();
  pm.new_meta = h200_meta({{"tensor", "Tensor"}, {"fp32", "FP32"}});
  pm.new_chip_source = collect::ChipSource::gpm;
  model.absorb(0, pm, kT0 + 1200 * kMs);
}

TEST(TopModel, ASwitchToGpmBringsItsColumnsAndStartsTheHistoryAgain) {
  FakeSource source;
  Model model(source, 1000);
  steady_then_gpm(model);
  EXPECT_EQ(model.gpus(kT0 + 1200 * kMs)[0].chip_source, collect::ChipSource::gpm);

  // GPM starts at T0+1.2 s: its first sample spans the start and is left out; then ten 100 ms
  // samples with Tensor 70 / FP32 10.
  GpuUpdate gpm;
  gpm.records.counters.push_back(recording::CountersEvent{kT0 + 1200 * kMs, true, ""});
  add_sample(gpm, kT0 + 1200 * kMs, kT0 + 1300 * kMs, 99, 99);
  for (int i = 0; i < 10; ++i) {
    const TimeNs start = kT0 + (1300 + 100 * i) * kMs;
    add_sample(gpm, start, start + 100 * kMs, 70, 10);
  }
  model.absorb(0, gpm, kT0 + 2300 * kMs);
  const GpuFrame g = model.gpus(kT0 + 2300 * kMs)[0];
  EXPECT_EQ(g.chip_source, collect::ChipSource::gpm);
  ASSERT_EQ(g.units.size(), 2u);
  EXPECT_EQ(g.limiting_unit, "Tensor");
  // Window (T0+1.3, T0+2.3]: ten GPM samples; the busiest unit is Tensor at 70 in each.
  EXPECT_NEAR(g.die_util_pct, 70.0, 1e-9);
  EXPECT_NEAR(g.units[0].pct, 70.0, 1e-9);
  EXPECT_NEAR(g.units[1].pct, 10.0, 1e-9);
  // The newest whole second [T0+1 s, T0+2 s) holds GPM's seven samples from 1.3 s on, all 70; PM
  // sampling's samples of that second (up to 1.1 s) are gone with their columns.
  EXPECT_NEAR(g.die_util_history.back(), 70.0, 1e-9);
}

// Back from GPM to PM sampling: GPM's stop comes in the same batch as the switch, and PM sampling
// confirms its start only later; meanwhile the GPU's chip figures are starting, not "GPU-Util only"
// without a reason (the screen read on the H200 after ncu ended showed that for a refresh).
TEST(TopModel, ASwitchBackToPmSamplingIsStartingUntilItsFirstSample) {
  FakeSource source;
  Model model(source, 1000);
  steady_then_gpm(model);
  GpuUpdate back;
  back.records.counters.push_back(recording::CountersEvent{kT0 + 5000 * kMs, false, ""});  // GPM stops
  back.new_meta = h200_meta({{"fp32", "FP32"}});
  back.new_chip_source = collect::ChipSource::pm;
  model.absorb(0, back, kT0 + 5000 * kMs);
  // 4 s later, past the stale limit of 3 s, with no PM sample yet: still starting.
  GpuFrame g = model.gpus(kT0 + 9000 * kMs)[0];
  EXPECT_EQ(g.chip_source, collect::ChipSource::pm);
  EXPECT_EQ(g.chip_status, ChipStatus::starting);
  // A failure of the new source names its reason.
  GpuUpdate failed;
  failed.records.counters.push_back(recording::CountersEvent{kT0 + 9500 * kMs, false, "counters held"});
  model.absorb(0, failed, kT0 + 9500 * kMs);
  g = model.gpus(kT0 + 9500 * kMs)[0];
  EXPECT_EQ(g.chip_status, ChipStatus::nvml_only);
  EXPECT_EQ(g.status_reason, "counters held");
}

}  // namespace
}  // namespace diescope::top
