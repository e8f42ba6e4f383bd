// top's screen as text: a replayed H200 recording against golden screens with placeholders for the
// numbers (tests/top/golden/), and the layout's rules on hand-made frames (docs/top.md#the-screen).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "diescope/agent/replay_feed.hpp"
#include "diescope/top/model.hpp"
#include "diescope/top/screen.hpp"
#include "top/golden_match.hpp"

namespace diescope::top {
namespace {

using recording::TimeNs;
namespace fs = std::filesystem;

class StepClock final : public core::Clock {
 public:
  core::ClockReadings read() override { return readings; }
  core::ClockReadings readings{};
};

// The bundled FFMA recording on 66 of 132 SMs, replayed to its end, polled once a second.
Frame replayed_frame(const std::string& file) {
  auto clock = std::make_unique<StepClock>();
  StepClock* clock_ptr = clock.get();
  agent::ReplayOptions o;
  o.files = {fs::path(DIESCOPE_SOURCE_DIR) / "data/recordings/h200" / file};
  auto replay = std::make_unique<agent::ReplayFeed>(o, clock->read());
  std::unique_ptr<ViewFeed> source =
      make_view_feed(std::move(replay), std::move(clock), "replay " + file + " at 1x", false);
  Model model(*source, 1000);
  std::vector<GpuUpdate> updates(1);
  TimeNs now = source->now_ns();
  for (int i = 0; i < 60 && !source->ended(now); ++i) {
    clock_ptr->readings.monotonic_ns += recording::kNsPerSecond;
    now = source->now_ns();
    updates[0] = GpuUpdate{};
    source->poll(now, updates);
    model.absorb(0, updates[0], now);
  }
  Frame frame;
  frame.source = source->description();
  frame.time_of_day = "12:00:00 UTC";
  frame.ended = source->ended(now);
  frame.gpus = model.gpus(now);
  return frame;
}

void expect_golden(const std::vector<std::string>& screen, const std::string& golden_name) {
  const fs::path golden = fs::path(DIESCOPE_SOURCE_DIR) / "tests/top/golden" / golden_name;
  const std::string mismatch = test::golden_mismatch(screen, test::split_lines(test::read_text(golden)));
  if (!mismatch.empty()) {
    const fs::path got = fs::path(DIESCOPE_BINARY_DIR) / ("top-screen-" + golden_name);
    std::ofstream out(got, std::ios::binary);
    for (const std::string& line : screen) out << line << "\n";
    ADD_FAILURE() << "the screen differs from " << golden << " at " << mismatch
                  << "\n(the whole screen is in " << got << ")";
  }
}

void expect_fits(const std::vector<std::string>& lines, int width, int height) {
  EXPECT_LE(static_cast<int>(lines.size()), height);
  for (const std::string& line : lines) EXPECT_LE(display_width(line), width) << "[" << line << "]";
}

TEST(TopScreen, ReplayedFfmaAt120x40MatchesTheGolden) {
  const Frame frame = replayed_frame("ffma66.dsrec");
  const std::vector<std::string> lines = layout(frame, 120, 40, true);
  expect_fits(lines, 120, 40);
  expect_golden(lines, "ffma66-120x40.txt");
}

TEST(TopScreen, NarrowTerminalDropsTheBarsFirst) {
  const Frame frame = replayed_frame("ffma66.dsrec");
  const std::vector<std::string> lines = layout(frame, 72, 24, true);
  expect_fits(lines, 72, 24);
  // 72 columns leave 53 after the label and figure: too few for a bar beside a minute of
  // sparkline, so the row is label, figure and 53 seconds of sparkline.
  EXPECT_EQ(display_width(lines.at(2)), 72) << lines.at(2);
  EXPECT_EQ(lines.at(2).find("▊"), std::string::npos) << lines.at(2);
  expect_golden(lines, "ffma66-72x24.txt");
}

TEST(TopScreen, OneFrameAsPlainTextHasNoKeyLine) {
  const Frame frame = replayed_frame("copy.dsrec");
  const std::vector<std::string> lines = layout(frame, 120, 1000, false);
  expect_golden(lines, "copy-once.txt");
}

GpuFrame hand_gpu(int index, double gpu_util, double die_util) {
  GpuFrame g;
  g.index = index;
  g.model = "NVIDIA H200";
  g.chip = "GH100";
  g.chip_status = ChipStatus::chip;
  g.chip_source = collect::ChipSource::pm;
  g.interval_ms = 10;
  g.gpu_util_pct = gpu_util;
  g.die_util_pct = die_util;
  g.limiting_unit = "FP32";
  g.units = {UnitBar{"FP32", die_util}, UnitBar{"DRAM", 1.5}, UnitBar{"Tensor", kNaN}};
  for (int i = 0; i < kHistorySeconds; ++i) {
    g.gpu_util_history.push_back(i < 30 ? kNaN : gpu_util);
    g.die_util_history.push_back(i * 100.0 / (kHistorySeconds - 1));
  }
  return g;
}

TEST(TopScreen, BarsAndSparklinesByHand) {
  Frame frame;
  frame.source = "live";
  frame.time_of_day = "12:00:00 UTC";
  frame.gpus = {hand_gpu(0, 50, 25)};
  const std::vector<std::string> lines = layout(frame, 120, 40, false);
  // 120 columns: 12 for the label, 7 for the figure, a 39-cell bar, 2 spaces, 60 sparkline cells.
  // GPU-Util 50% of 39 cells is 19.5: 19 full blocks and a half block (U+258C), then 19 spaces.
  std::string bar;
  for (int i = 0; i < 19; ++i) bar += "█";
  bar += "▌" + std::string(19, ' ');
  // Its sparkline: 30 seconds with nothing (blank), 30 at 50% (level 4 of 8: U+2585).
  std::string spark(30, ' ');
  for (int i = 0; i < 30; ++i) spark += "▅";
  EXPECT_EQ(lines.at(2), "  GPU-Util   50.0% " + bar + "  " + spark);
  // DIE-Util's history climbs 0..100: its sparkline starts at the lowest level and ends full.
  EXPECT_NE(lines.at(3).find("  ▁▁▁▁▁▁▁▁"), std::string::npos);
  EXPECT_EQ(lines.at(3).substr(lines.at(3).size() - std::string("██").size()), "██");
  EXPECT_EQ(lines.at(4), "  gap        25.0 points · limiting unit: FP32");
  // An unavailable unit says n/a and draws no bar; it is never 0.
  EXPECT_NE(lines.at(6).find("Tensor           n/a"), std::string::npos) << lines.at(6);
}

TEST(TopScreen, EveryLineFitsEverySize) {
  Frame frame;
  frame.source = "live";
  frame.time_of_day = "12:00:00 UTC";
  for (int i = 0; i < 4; ++i) frame.gpus.push_back(hand_gpu(i, 10.0 * i, 5.0 * i));
  frame.gpus[2].chip_status = ChipStatus::nvml_only;
  frame.gpus[2].status_reason = "another profiler holds the counters (fix: let it finish)";
  for (int width = 10; width <= 200; width += 7)
    for (int height = 3; height <= 60; height += 5)
      expect_fits(layout(frame, width, height, true), width, height);
}

TEST(TopScreen, AShortTerminalSaysHowManyGpusItLeftOut) {
  Frame frame;
  frame.source = "live";
  for (int i = 0; i < 8; ++i) frame.gpus.push_back(hand_gpu(i, 50, 40));
  // Compact blocks are 5 lines and a blank between: 24 rows hold the header, 3 blocks and the line.
  const std::vector<std::string> lines = layout(frame, 100, 24, true);
  ASSERT_EQ(lines.size(), 24u);
  int shown = 0;
  for (const std::string& l : lines) shown += l.rfind("GPU ", 0) == 0 ? 1 : 0;
  EXPECT_EQ(shown, 3);
  EXPECT_NE(std::find(lines.begin(), lines.end(), "… 5 more GPUs (a taller terminal, or --gpus, shows them)"),
            lines.end());
  EXPECT_EQ(lines.back().rfind("q quit · p pause · s sort", 0), 0u);
}

TEST(TopScreen, AGapThatRoundsToZeroHasNoSign) {
  Frame frame;
  frame.source = "live";
  frame.gpus = {hand_gpu(0, 0.0, 0.04)};  // -0.04 points
  frame.gpus[0].limiting_unit.clear();
  frame.gpus[0].all_idle = true;
  EXPECT_EQ(layout(frame, 120, 40, false).at(4),
            "  gap         0.0 points · limiting unit: none (every unit idle)");
}

TEST(TopScreen, SortKeysOrderLargestFirstAndNaNLast) {
  std::vector<GpuFrame> gpus = {hand_gpu(0, 30, 10), hand_gpu(1, 90, kNaN), hand_gpu(2, 60, 50)};
  sort_gpus(gpus, SortKey::die_util);
  EXPECT_EQ(gpus[0].index, 2);
  EXPECT_EQ(gpus[1].index, 0);
  EXPECT_EQ(gpus[2].index, 1);  // DIE-Util n/a
  sort_gpus(gpus, SortKey::gpu_util);
  EXPECT_EQ(gpus[0].index, 1);
  sort_gpus(gpus, SortKey::gap);  // gaps 20, n/a, 10
  EXPECT_EQ(gpus[0].index, 0);
  EXPECT_EQ(gpus[1].index, 2);
  sort_gpus(gpus, SortKey::index);
  EXPECT_EQ(gpus[0].index, 0);
  EXPECT_EQ(next_sort_key(SortKey::gap), SortKey::index);
}

// The title words the chip source: a live GPU switched to GPM at 100 ms reads "GPM every 100 ms",
// and "GPM starting" until its first sample (docs/top.md#sources).
TEST(TopScreen, TheTitleNamesGpmWhenGpmMakesTheChipSamples) {
  Frame frame;
  frame.source = "live";
  GpuFrame g = hand_gpu(0, 81.3, 40.0);
  g.chip_source = collect::ChipSource::gpm;
  g.interval_ms = 100;
  frame.gpus = {g};
  EXPECT_EQ(layout(frame, 120, 40, false).at(1),
            "GPU 0 · NVIDIA H200 (GH100) · chip figures: GPM every 100 ms");
  frame.gpus[0].chip_status = ChipStatus::starting;
  EXPECT_EQ(layout(frame, 120, 40, false).at(1), "GPU 0 · NVIDIA H200 (GH100) · chip figures: GPM starting");
  frame.gpus[0].chip_source = collect::ChipSource::pm;
  EXPECT_EQ(layout(frame, 120, 40, false).at(1),
            "GPU 0 · NVIDIA H200 (GH100) · chip figures: PM sampling starting");
}

TEST(TopScreen, HeldCountersNameTheReasonWhereDieUtilWouldBe) {
  Frame frame;
  frame.source = "live";
  GpuFrame g = hand_gpu(0, 81.3, kNaN);
  g.chip_status = ChipStatus::nvml_only;
  g.status_reason = "another profiler holds the counters";
  g.limiting_unit.clear();
  frame.gpus = {g};
  const std::vector<std::string> lines = layout(frame, 120, 40, false);
  EXPECT_EQ(lines.at(1), "GPU 0 · NVIDIA H200 (GH100) · chip figures: none: GPU-Util only, from NVML");
  EXPECT_EQ(lines.at(3), "  DIE-Util     n/a no chip samples: another profiler holds the counters");
  EXPECT_EQ(lines.at(4), "  gap          n/a");
}

}  // namespace
}  // namespace diescope::top

namespace diescope::top {
namespace {

// docs/attribution.md#in-top: each process names its holder, as the watch found it.
TEST(TopScreen, ProcessesNameTheirHolders) {
  Frame frame;
  frame.source = "live";
  frame.time_of_day = "12:00:00 UTC";
  frame.gpus = {hand_gpu(0, 50, 25)};
  frame.gpus[0].processes =
      std::vector<ProcessInfo>{{4711, "python", "pod ml/train-7 (container trainer)"}, {4712, "bench", ""}};
  const std::vector<std::string> lines = layout(frame, 200, 40, false);
  bool found = false;
  for (const std::string& l : lines)
    found = found || l.find("processes: 4711 python [pod ml/train-7 (container trainer)], 4712 bench") !=
                         std::string::npos;
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace diescope::top
