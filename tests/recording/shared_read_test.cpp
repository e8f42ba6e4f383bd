// Cursors open together share one read of the file (docs/recording-format.md#reading-a-recording):
// each returns what it returns alone, a cursor that lags past the queue's bound goes on by itself,
// and numbers read through the fast path equal what std::from_chars reads.
#include <cmath>

#include "test_files.hpp"

namespace diescope {
namespace {

using testing::header_for;
using testing::small_meta;
using testing::TempDir;
using testing::write_bytes;

// Chip sample i spans [10 i, 10 i + 10) ms with units {i, 2}; a GPU-Util reading of
// i / util_every % 100 follows every util_every-th, a clock reading of SM clock i MHz every fifth.
std::filesystem::path write_interleaved(const TempDir& dir, int samples, int util_every) {
  const recording::RecordingMeta meta = small_meta();
  const auto path = dir / "interleaved.dsrec";
  recording::RecordingWriter w(path, meta);
  for (int i = 0; i < samples; ++i) {
    const recording::TimeNs t = meta.start_ns + i * 10 * recording::kNsPerMs;
    const std::vector<double> units{static_cast<double>(i), 2}, diag{3}, counts{4};
    w.write(recording::ChipSample{t, t + 10 * recording::kNsPerMs, units, diag, counts});
    if (i % util_every == util_every - 1)
      w.write(recording::UtilSample{t, static_cast<double>(i / util_every % 100),
                                    recording::UtilSource::samples});
    if (i % 5 == 4) w.write(recording::ClockReading{t, static_cast<double>(i), 1593});
  }
  w.close();
  return path;
}

// Every value of the chip lines `records` (after a small_meta header: 2 units, 1 diagnostic, 1
// count), in line order; the counts only where `with_counts`.
std::vector<double> chip_values(const std::string& records, bool with_counts) {
  TempDir dir;
  const auto path = dir / "numbers.dsrec";
  write_bytes(path, header_for(small_meta(), dir) + records);
  const auto recording = recording::open_recording(path);
  auto chip = recording->stream<recording::ChipSample>();
  std::vector<double> got;
  recording::ChipSample c;
  while (chip->next(c)) {
    got.insert(got.end(), c.units.begin(), c.units.end());
    got.insert(got.end(), c.diagnostics.begin(), c.diagnostics.end());
    if (with_counts) got.insert(got.end(), c.counts.begin(), c.counts.end());
  }
  return got;
}

TEST(SharedRead, CursorsReadInLockstepGetEveryRecordOfTheirKind) {
  TempDir dir;
  const int n = 1000;
  const auto recording = recording::open_recording(write_interleaved(dir, n, 10));
  auto chip = recording->stream<recording::ChipSample>();
  auto util = recording->stream<recording::UtilSample>();
  auto clock = recording->stream<recording::ClockReading>();
  recording::ChipSample c;
  recording::UtilSample u;
  recording::ClockReading k;
  int chips = 0, utils = 0, clocks = 0;
  // One GPU-Util reading after every ten chip samples, one clock reading after every five.
  while (chip->next(c)) {
    EXPECT_EQ(c.units[0], static_cast<double>(chips));
    ++chips;
    if (chips % 10 == 0) {
      ASSERT_TRUE(util->next(u));
      EXPECT_EQ(u.pct, static_cast<double>((chips - 1) / 10 % 100));
      ++utils;
    }
    if (chips % 5 == 0) {
      ASSERT_TRUE(clock->next(k));
      EXPECT_EQ(k.sm_mhz, static_cast<double>(chips - 1));
      ++clocks;
    }
  }
  EXPECT_FALSE(util->next(u));
  EXPECT_FALSE(clock->next(k));
  EXPECT_EQ(chips, 1000);
  EXPECT_EQ(utils, 100);
  EXPECT_EQ(clocks, 200);
}

TEST(SharedRead, SeveralCursorsOfOneKindEachGetEveryRecordOfIt) {
  // Two GPU-Util cursors and two clock cursors read along with the chip cursor (as the analysis's and
  // each timeline's do): each gets all 100 GPU-Util readings (i / 10 % 100 after sample i = 9, 19,
  // ...) and all 200 clock readings (SM clock i MHz after sample i = 4, 9, ...), one taken as soon
  // as it comes and the other a reading behind, whichever of them pulls the line from the file.
  TempDir dir;
  const auto recording = recording::open_recording(write_interleaved(dir, 1000, 10));
  auto util_a = recording->stream<recording::UtilSample>();
  auto util_b = recording->stream<recording::UtilSample>();
  auto clock_a = recording->stream<recording::ClockReading>();
  auto clock_b = recording->stream<recording::ClockReading>();
  auto chip = recording->stream<recording::ChipSample>();
  recording::ChipSample c;
  recording::UtilSample u;
  recording::ClockReading k;
  int chips = 0, utils_a = 0, utils_b = 0, clocks_a = 0, clocks_b = 0;
  while (chip->next(c)) {
    ++chips;
    if (chips % 10 == 0) {
      ASSERT_TRUE(util_a->next(u));
      EXPECT_EQ(u.pct, static_cast<double>(utils_a % 100));
      ++utils_a;
      if (utils_a > 1) {
        ASSERT_TRUE(util_b->next(u));
        EXPECT_EQ(u.pct, static_cast<double>(utils_b % 100));
        ++utils_b;
      }
    }
    if (chips % 5 == 0) {
      if (clocks_a > 0) {
        ASSERT_TRUE(clock_b->next(k));
        EXPECT_EQ(k.sm_mhz, static_cast<double>(clocks_b * 5 + 4));
        ++clocks_b;
      }
      ASSERT_TRUE(clock_a->next(k));
      EXPECT_EQ(k.sm_mhz, static_cast<double>(clocks_a * 5 + 4));
      ++clocks_a;
    }
  }
  ASSERT_TRUE(util_b->next(u));
  EXPECT_EQ(u.pct, 99);
  ++utils_b;
  ASSERT_TRUE(clock_b->next(k));
  EXPECT_EQ(k.sm_mhz, 999);
  ++clocks_b;
  EXPECT_FALSE(util_a->next(u));
  EXPECT_FALSE(util_b->next(u));
  EXPECT_FALSE(clock_a->next(k));
  EXPECT_FALSE(clock_b->next(k));
  EXPECT_EQ(chips, 1000);
  EXPECT_EQ(utils_a, 100);
  EXPECT_EQ(utils_b, 100);
  EXPECT_EQ(clocks_a, 200);
  EXPECT_EQ(clocks_b, 200);
}

TEST(SharedRead, ACursorFarBehindReadsOnByItself) {
  // 200,000 samples, each followed by a GPU-Util line of about 36 bytes: 7 MB, more than the 4 MiB
  // queue holds when the chip cursor goes first to the end, so the util cursor is dropped from the
  // shared read and reads its lines itself, from its first line not yet taken.
  TempDir dir;
  const int n = 200000;
  const auto recording = recording::open_recording(write_interleaved(dir, n, 1));
  auto util = recording->stream<recording::UtilSample>();
  auto chip = recording->stream<recording::ChipSample>();
  recording::UtilSample u;
  // Two readings taken before the chip cursor runs ahead.
  ASSERT_TRUE(util->next(u));
  EXPECT_EQ(u.pct, 0);
  ASSERT_TRUE(util->next(u));
  EXPECT_EQ(u.pct, 1);
  recording::ChipSample c;
  long chips = 0;
  while (chip->next(c)) ++chips;
  EXPECT_EQ(chips, n);
  int utils = 2;
  while (util->next(u)) {
    ASSERT_EQ(u.pct, static_cast<double>(utils % 100)) << "reading " << utils;
    ++utils;
  }
  EXPECT_EQ(utils, n);
  // A cursor opened after every other has finished reads from the top again.
  auto again = recording->stream<recording::UtilSample>();
  ASSERT_TRUE(again->next(u));
  EXPECT_EQ(u.pct, 0);
}

TEST(SharedRead, ErrorsNameTheLineWhicheverCursorReadsIt) {
  // The third GPU-Util line (line 8) is bad; the chip cursor passes it first, queueing it for the
  // util cursor, which reports it with its own line number.
  TempDir dir;
  const auto recording = recording::open_recording(
      small_recording(dir, "bad-util.dsrec",
                      "chip 100 110 1 2 3 4\nutil 105 50 samples\nchip 110 120 1 2 3 4\nutil 115 60 samples\n"
                      "chip 120 130 1 2 3 4\nutil 125 150 samples\nchip 130 140 1 2 3 4\n"));
  auto util = recording->stream<recording::UtilSample>();
  auto chip = recording->stream<recording::ChipSample>();
  recording::ChipSample c;
  int chips = 0;
  while (chip->next(c)) ++chips;
  EXPECT_EQ(chips, 4);
  recording::UtilSample u;
  ASSERT_TRUE(util->next(u));
  EXPECT_EQ(u.pct, 50);
  ASSERT_TRUE(util->next(u));
  EXPECT_EQ(u.pct, 60);
  try {
    util->next(u);
    ADD_FAILURE() << "no error for a GPU-Util of 150";
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.line(), 8) << e.what();
    EXPECT_NE(std::string(e.what()).find("outside 0..100"), std::string::npos) << e.what();
  }
}

TEST(SharedRead, NumbersReadAsFromChars) {
  // Each value written as another tool might: the fast path (a mantissa up to 2^53 and a power of
  // ten up to 22) must give the correctly rounded double, as std::from_chars does; the rest falls
  // back to it.
  const std::string records =
      "chip 100 110 0.1 24.89 -0 1.711e+10\n"
      "chip 110 120 .5 5. 2.5E3 1e22\n"
      "chip 120 130 9007199254740993 123456789012345678901 1e-23 0.30000000000000004\n"
      "chip 130 140 nan 1e23 00012.50 -7.25e-2\n";
  const std::vector<double> got = chip_values(records, true);
  ASSERT_EQ(got.size(), 16u);
  EXPECT_EQ(got[0], 0.1);
  EXPECT_EQ(got[1], 24.89);
  EXPECT_EQ(got[2], 0.0);
  EXPECT_TRUE(std::signbit(got[2]));  // -0 keeps its sign
  EXPECT_EQ(got[3], 1.711e10);
  EXPECT_EQ(got[4], 0.5);
  EXPECT_EQ(got[5], 5.0);
  EXPECT_EQ(got[6], 2500.0);
  EXPECT_EQ(got[7], 1e22);
  EXPECT_EQ(got[8], 9007199254740992.0);  // 2^53 + 1 rounds to even, 2^53
  EXPECT_EQ(got[9], 123456789012345678901.0);
  EXPECT_EQ(got[10], 1e-23);
  EXPECT_EQ(got[11], 0.30000000000000004);
  EXPECT_TRUE(std::isnan(got[12]));
  EXPECT_EQ(got[13], 1e23);
  EXPECT_EQ(got[14], 12.5);
  EXPECT_EQ(got[15], -0.0725);
}

TEST(SharedRead, NumbersWithEightBytesAfterThemReadAsFromChars) {
  // Values followed by at least eight bytes of the line take the eight-digits-at-a-time path: up to
  // seven digits on each side of the point. Eight digits, an empty fraction or an exponent go the
  // long way. Each must read as std::from_chars reads it; the count (last) ends the line.
  const std::string records =
      "chip 100 110 1234567.7654321 -3.25 0007.50 1\n"
      "chip 110 120 12345678.5 24. 9999999.9999999 2\n"
      "chip 120 130 0.0000001 1.5e3 -0 3\n";
  const std::vector<double> got = chip_values(records, false);
  ASSERT_EQ(got.size(), 9u);
  EXPECT_EQ(got[0], 1234567.7654321);
  EXPECT_EQ(got[1], -3.25);
  EXPECT_EQ(got[2], 7.5);
  EXPECT_EQ(got[3], 12345678.5);
  EXPECT_EQ(got[4], 24.0);
  EXPECT_EQ(got[5], 9999999.9999999);
  EXPECT_EQ(got[6], 1e-7);
  EXPECT_EQ(got[7], 1500.0);
  EXPECT_EQ(got[8], 0.0);
  EXPECT_TRUE(std::signbit(got[8]));
}

TEST(SharedRead, ATimeWithThePreviousTimesTextIsThatTime) {
  // A chip sample's start is most often the text of the previous sample's end, which the reader
  // does not read again. The same number written otherwise (0 before it) is read; text that only
  // begins with the previous time's ("...400x") is no time at all.
  TempDir dir;
  const recording::TimeNs t = small_meta().start_ns;
  auto line = [](const std::string& start, const std::string& end) {
    return "chip " + start + " " + end + " 1 2 3 4\n";
  };
  const std::string a = std::to_string(t), b = std::to_string(t + 200), c = std::to_string(t + 300),
                    d = std::to_string(t + 400), e = std::to_string(t + 500);
  const std::string records = line(a, b) + line(b, c) + line("0" + c, d) + line(d, e);
  const auto recording = recording::open_recording(small_recording(dir, "times.dsrec", records));
  auto chip = recording->stream<recording::ChipSample>();
  std::vector<recording::TimeNs> starts, ends;
  recording::ChipSample s;
  while (chip->next(s)) {
    starts.push_back(s.start_ns);
    ends.push_back(s.end_ns);
  }
  const std::vector<recording::TimeNs> want_starts{t, t + 200, t + 300, t + 400};
  const std::vector<recording::TimeNs> want_ends{t + 200, t + 300, t + 400, t + 500};
  EXPECT_EQ(starts, want_starts);
  EXPECT_EQ(ends, want_ends);

  const auto bad = small_recording(dir, "bad-time.dsrec", line(c, d) + line(d + "x", e));
  try {
    (void)recording::open_recording(bad);
    ADD_FAILURE() << "a start time of '" << d << "x' was accepted";
  } catch (const core::InputError& err) {
    EXPECT_NE(std::string(err.what()).find("is not a whole number"), std::string::npos) << err.what();
  }
}

// Every chip sample's start and end, in the order the chip cursor hands them out.
struct ChipTimes {
  std::vector<recording::TimeNs> starts, ends;
};
ChipTimes chip_times(const recording::Recording& recording) {
  ChipTimes times;
  auto chip = recording.stream<recording::ChipSample>();
  recording::ChipSample s;
  while (chip->next(s)) {
    times.starts.push_back(s.start_ns);
    times.ends.push_back(s.end_ns);
  }
  return times;
}

// Chip lines in the writer's layout ("chip START END ...", times of 19 digits) have their times
// checked by their text in the opening pass and their END read in one go by the chip cursor
// (docs/recording-format.md#reading-a-recording): the times, the run's latest time and every
// message are what reading each time as a number gives.
TEST(SharedRead, ChipTimesOfNineteenDigitsReadAsNumbers) {
  TempDir dir;
  // t = 1700000000000000000. The third sample ends (t + 30) after the fourth (t + 25), so the latest
  // time is not the last line's END. A start with a 0 before it reads as the number (the first
  // line), and 2^63 - 1 = 9223372036854775807 is the largest time.
  const std::string records =
      "chip 0999999999999999999 1700000000000000000 1 2 3 4\n"
      "chip 1700000000000000000 1700000000000000010 1 2 3 4\n"
      "chip 1700000000000000010 1700000000000000030 1 2 3 4\n"
      "chip 1700000000000000020 1700000000000000025 1 2 3 4\n"
      "util 1700000000000000021 50 samples\n"
      "chip 1700000000000000025 1734567890123456789 1 2 3 4\n";
  const auto recording = recording::open_recording(small_recording(dir, "times.dsrec", records));
  EXPECT_EQ(recording->side().last_ts_ns, 1734567890123456789);
  const auto [starts, ends] = chip_times(*recording);
  const std::vector<recording::TimeNs> want_starts{
      999999999999999999, 1700000000000000000, 1700000000000000010, 1700000000000000020, 1700000000000000025};
  const std::vector<recording::TimeNs> want_ends{1700000000000000000, 1700000000000000010,
                                                 1700000000000000030, 1700000000000000025,
                                                 1734567890123456789};
  EXPECT_EQ(starts, want_starts);
  EXPECT_EQ(ends, want_ends);

  // Without the last line the latest END is the third sample's, t + 30, which a later line of
  // another kind (t + 21) does not move.
  const std::string four = records.substr(0, records.rfind("chip "));
  const auto shorter = recording::open_recording(small_recording(dir, "latest.dsrec", four));
  EXPECT_EQ(shorter->side().last_ts_ns, 1700000000000000030);

  // The largest time is read; one more is out of range.
  const auto largest =
      recording::open_recording(small_recording(dir, "largest.dsrec",
                                                "chip 1700000000000000000 1700000000000000010 1 2 3 4\n"
                                                "chip 1700000000000000010 9223372036854775807 1 2 3 4\n"));
  EXPECT_EQ(largest->side().last_ts_ns, 9223372036854775807);
  testing::expect_input_error(small_recording(dir, "too-large.dsrec",
                                              "chip 1700000000000000000 1700000000000000010 1 2 3 4\n"
                                              "chip 1700000000000000010 9223372036854775808 1 2 3 4\n"),
                              4, "the end time '9223372036854775808' is out of range");
}

TEST(SharedRead, ChipTimesOfNineteenDigitsBreakingARuleGiveTheirMessages) {
  TempDir dir;
  const std::string a = "chip 1700000000000000000 1700000000000000010 1 2 3 4\n";
  const std::string b = "chip 1700000000000000010 1700000000000000020 1 2 3 4\n";
  // A start before the previous start (line 5 after line 4's 1700000000000000010).
  testing::expect_input_error(
      small_recording(dir, "order.dsrec", a + b + "chip 1700000000000000005 1700000000000000040 1 2 3 4\n"),
      5,
      "time 1700000000000000005 ns is earlier than the previous chip record's 1700000000000000010 ns (line "
      "4)");
  // An end before its start.
  testing::expect_input_error(
      small_recording(dir, "span.dsrec", a + b + "chip 1700000000000000020 1700000000000000015 1 2 3 4\n"), 5,
      "ends (1700000000000000015 ns) before it starts (1700000000000000020 ns)");
  // A letter among an end's 19 bytes.
  testing::expect_input_error(
      small_recording(dir, "letter.dsrec", a + b + "chip 1700000000000000020 17000000000000000x0 1 2 3 4\n"),
      5, "the end time '17000000000000000x0' is not a whole number");
  // A value missing after times of the writer's layout.
  testing::expect_input_error(
      small_recording(dir, "values.dsrec", a + b + "chip 1700000000000000020 1700000000000000030 1 2 3\n"), 5,
      "the chip line has 3 values after its times where the meta's columns need 4");
}

TEST(SharedRead, ChipLinesOfAnotherLayoutAmongThoseOfTheWritersReadAsNumbers) {
  // A tab between the times is another layout, read in full; the lines by text before it hand it
  // their last start (for the order), their last end (a start not read again) and their latest
  // end (t + 100, from the first line, which no later line reaches).
  TempDir dir;
  const std::string a = "chip 1700000000000000000 1700000000000000100 1 2 3 4\n";
  const std::string b = "chip 1700000000000000010 1700000000000000020 1 2 3 4\n";
  const auto recording = recording::open_recording(
      small_recording(dir, "tab.dsrec",
                      a + b + "chip 1700000000000000020\t1700000000000000030 1 2 3 4\n" +
                          "chip 1700000000000000030 1700000000000000040 1 2 3 4\n"));
  EXPECT_EQ(recording->side().last_ts_ns, 1700000000000000100);
  const std::vector<recording::TimeNs> ends = chip_times(*recording).ends;
  const std::vector<recording::TimeNs> want_ends{1700000000000000100, 1700000000000000020,
                                                 1700000000000000030, 1700000000000000040};
  EXPECT_EQ(ends, want_ends);
  // A start before the previous one on the line of another layout: the message names line 4, the
  // last line read by text, and its start.
  testing::expect_input_error(
      small_recording(dir, "tab-order.dsrec",
                      a + b + "chip 1700000000000000005\t1700000000000000030 1 2 3 4\n"),
      5,
      "time 1700000000000000005 ns is earlier than the previous chip record's 1700000000000000010 ns (line "
      "4)");
}

TEST(SharedRead, ChipLineCutOffAfterTimesOfNineteenDigitsIsLeftOut) {
  // The last line has no newline: the writer stopped mid-line. It is neither read nor counted in the
  // latest time (its END, 1700000000000000090, would be).
  TempDir dir;
  const auto recording =
      recording::open_recording(small_recording(dir, "cut.dsrec",
                                                "chip 1700000000000000000 1700000000000000010 1 2 3 4\n"
                                                "chip 1700000000000000010 1700000000000000020 1 2 3 4\n"
                                                "chip 1700000000000000020 1700000000000000090 1 2"));
  EXPECT_TRUE(recording->side().truncated);
  EXPECT_EQ(recording->side().last_ts_ns, 1700000000000000020);
  EXPECT_EQ(chip_times(*recording).ends.size(), 2u);
}

TEST(SharedRead, LinesAcrossTheMappedWindowsReadWhole) {
  // Lines of 1,000 to 5,000 bytes (a note's text) around chip samples, past several 2 MiB windows:
  // every line is read whole wherever a window ends.
  TempDir dir;
  const recording::RecordingMeta meta = small_meta();
  const auto path = dir / "windows.dsrec";
  {
    recording::RecordingWriter w(path, meta);
    for (int i = 0; i < 3000; ++i) {
      const recording::TimeNs t = meta.start_ns + i * 10 * recording::kNsPerMs;
      const std::vector<double> units{static_cast<double>(i), 2}, diag{3}, counts{4};
      w.write(recording::ChipSample{t, t + 10 * recording::kNsPerMs, units, diag, counts});
      w.write(recording::Note{t, "filler", std::string(1000 + i % 4001, 'x')});
    }
    w.close();
  }
  ASSERT_GT(std::filesystem::file_size(path), std::size_t{6} << 20);
  const auto recording = recording::open_recording(path);
  ASSERT_EQ(recording->side().notes.size(), 3000u);
  for (std::size_t i = 0; i < 3000; ++i)
    ASSERT_EQ(recording->side().notes[i].text.size(), 1000 + i % 4001) << "note " << i;
  auto chip = recording->stream<recording::ChipSample>();
  recording::ChipSample c;
  int chips = 0;
  while (chip->next(c)) {
    ASSERT_EQ(c.units[0], static_cast<double>(chips));
    ++chips;
  }
  EXPECT_EQ(chips, 3000);
}

}  // namespace
}  // namespace diescope
