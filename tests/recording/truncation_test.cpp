// A recording cut off mid-write reads up to its last complete line; lines added after opening
// are not read.
#include "test_files.hpp"

namespace diescope {
namespace {

using testing::read_bytes;
using testing::small_meta;
using testing::TempDir;
using testing::write_bytes;

// Writes 50 chip samples with GPU-Util and a note between them, no end record.
std::string make_recording(const TempDir& dir) {
  const recording::RecordingMeta meta = small_meta();
  const auto path = dir / "full.dsrec";
  {
    recording::RecordingWriter w(path, meta);
    for (int i = 0; i < 50; ++i) {
      const recording::TimeNs t = meta.start_ns + i * 10 * recording::kNsPerMs;
      const std::vector<double> units{static_cast<double>(i), 2}, diag{3}, counts{4};
      w.write(recording::ChipSample{t, t + 10 * recording::kNsPerMs, units, diag, counts});
      if (i % 10 == 9) w.write(recording::UtilSample{t, 99, recording::UtilSource::samples});
      if (i == 25) w.write(recording::Note{t, "sampler", "half way"});
    }
  }
  return read_bytes(path);
}

long count_chip(const recording::Recording& r, recording::TimeNs& last_start) {
  long n = 0;
  recording::ChipSample c;
  for (auto s = r.stream<recording::ChipSample>(); s->next(c);) {
    EXPECT_EQ(c.units[0], static_cast<double>(n));  // in order, none skipped
    last_start = c.start_ns;
    ++n;
  }
  return n;
}

TEST(Truncation, CutMidLineReadsUpToTheLastCompleteLine) {
  TempDir dir;
  const std::string full = make_recording(dir);
  // Lines: 2 header, then chip 0..9, util, chip 10..19, util, chip 20..25, note, chip 26..29, util, ...
  // Cut 7 bytes into the line that holds chip sample 40.
  const std::string chip40 =
      "chip " + std::to_string(small_meta().start_ns + 400 * recording::kNsPerMs) + " ";
  const std::size_t at = full.find(chip40);
  ASSERT_NE(at, std::string::npos);
  const auto path = dir / "cut.dsrec";
  write_bytes(path, full.substr(0, at + 7));
  const auto r = recording::open_recording(path);
  EXPECT_TRUE(r->side().truncated);
  // Complete lines: 2 header + chips 0..39 (40) + util after 9, 19, 29, 39 (4) + note (1) = 47.
  EXPECT_EQ(r->side().complete_lines, 47);
  recording::TimeNs last_start = 0;
  EXPECT_EQ(count_chip(*r, last_start), 40);
  EXPECT_EQ(last_start, small_meta().start_ns + 390 * recording::kNsPerMs);
  // The latest time of any complete record: chip 39 ends at 400 ms.
  EXPECT_EQ(r->side().last_ts_ns, small_meta().start_ns + 400 * recording::kNsPerMs);
  EXPECT_FALSE(r->side().end.has_value());
  recording::UtilSample u;
  long utils = 0;
  for (auto s = r->stream<recording::UtilSample>(); s->next(u);) ++utils;
  EXPECT_EQ(utils, 4);
  ASSERT_EQ(r->side().notes.size(), 1u);
}

TEST(Truncation, EveryCutPointReadsWithoutError) {
  // Cut the recording at every byte after its header: each prefix opens, reads whole, and is
  // truncated exactly when it does not end in a newline.
  TempDir dir;
  const std::string full = make_recording(dir);
  const std::size_t header_end = full.find('\n', full.find('\n') + 1) + 1;
  const auto path = dir / "prefix.dsrec";
  write_bytes(path, full);
  // Shrink one file step by step (rewriting it each time would be slow on ext4).
  long last_chips = 50;
  for (std::size_t n = full.size(); n >= header_end; n -= 3) {
    std::filesystem::resize_file(path, n);
    const auto r = recording::open_recording(path);
    EXPECT_EQ(r->side().truncated, full[n - 1] != '\n') << n;
    recording::TimeNs last_start = 0;
    const long chips = count_chip(*r, last_start);
    EXPECT_LE(chips, last_chips) << n;      // a shorter prefix never reads more samples
    EXPECT_GE(chips, last_chips - 1) << n;  // and loses at most the one it cut
    last_chips = chips;
  }
  EXPECT_EQ(last_chips, 0);
}

TEST(Truncation, CutAtALineEndIsNotTruncated) {
  TempDir dir;
  const std::string full = make_recording(dir);
  const auto path = dir / "whole-lines.dsrec";
  const std::size_t cut = full.rfind('\n', full.size() - 2) + 1;  // drop the last line exactly
  write_bytes(path, full.substr(0, cut));
  const auto r = recording::open_recording(path);
  EXPECT_FALSE(r->side().truncated);
  recording::TimeNs last_start = 0;
  EXPECT_EQ(count_chip(*r, last_start), 50);  // the last line was a GPU-Util reading (after chip 49)
}

TEST(Truncation, LinesAppendedAfterOpeningAreNotRead) {
  // A recording still being written: the reader takes what was complete when it opened it.
  TempDir dir;
  const std::string full = make_recording(dir);
  const auto path = dir / "live.dsrec";
  write_bytes(path, full + "chip 1800000000000000000 18000000000");  // a sample being written
  const auto r = recording::open_recording(path);
  EXPECT_TRUE(r->side().truncated);
  {
    std::ofstream more(path, std::ios::app | std::ios::binary);
    more << "10000000 1 2 3 4\nchip 1800000000010000000 1800000000020000000 1 2 3 4\n";
  }
  recording::TimeNs last_start = 0;
  EXPECT_EQ(count_chip(*r, last_start), 50);
  // Opening again sees the finished lines.
  const auto again = recording::open_recording(path);
  EXPECT_FALSE(again->side().truncated);
  long n = 0;
  recording::ChipSample c;
  for (auto s = again->stream<recording::ChipSample>(); s->next(c);) ++n;
  EXPECT_EQ(n, 52);
}

TEST(Truncation, FileShrinkingUnderAReaderIsAnInputError) {
  TempDir dir;
  const std::string full = make_recording(dir);
  const auto path = dir / "shrinks.dsrec";
  write_bytes(path, full);
  const auto r = recording::open_recording(path);
  write_bytes(path, full.substr(0, full.size() / 2));
  recording::ChipSample c;
  auto s = r->stream<recording::ChipSample>();
  try {
    while (s->next(c)) {}
    FAIL() << "no error";
  } catch (const core::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("became shorter"), std::string::npos) << e.what();
    EXPECT_EQ(e.path(), path.string());
  }
}

}  // namespace
}  // namespace diescope
