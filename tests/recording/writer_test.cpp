// The writer refuses records the reader would reject, names the path in its errors, and makes
// lines visible to readers on flush().
#include <limits>

#include "test_files.hpp"

namespace diescope {
namespace {

using testing::small_meta;
using testing::TempDir;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(Writer, CannotCreateNamesPathAndFix) {
  TempDir dir;
  const auto path = dir / "no-such-folder" / "r.dsrec";
  try {
    RecordingWriter w(path, small_meta());
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
    EXPECT_NE(e.fix().find("folder exists"), std::string::npos) << e.fix();
  }
}

TEST(Writer, DiskFullNamesPathAndFix) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full on this system";
  try {
    RecordingWriter w("/dev/full", small_meta());
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/dev/full"), std::string::npos) << e.what();
    EXPECT_NE(e.fix().find("free space"), std::string::npos) << e.fix();
    EXPECT_EQ(e.exit_code(), kExitInput);
  }
}

TEST(Writer, InvalidMetaIsRefused) {
  TempDir dir;
  RecordingMeta m = small_meta();
  m.diagnostics[0].key = "fp32";  // same key as a unit
  EXPECT_THROW(RecordingWriter(dir / "m.dsrec", m), Error);
  m = small_meta();
  m.interval_ms = kInf;
  EXPECT_THROW(RecordingWriter(dir / "m.dsrec", m), Error);
}

TEST(Writer, RefusesRecordsTheReaderWouldReject) {
  TempDir dir;
  const RecordingMeta meta = small_meta();
  const auto path = dir / "w.dsrec";
  RecordingWriter w(path, meta);
  const TimeNs t = meta.start_ns;
  const std::vector<double> two{1, 2}, one{1}, inf_one{kInf}, three{1, 2, 3};
  w.write(ChipSample{t + 100, t + 110, two, one, one});
  long lines = w.lines_written();
  auto expect_refused = [&](auto&& write_it) {
    try {
      write_it();
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_code(), kExitInternal);
      EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos);
    }
    EXPECT_EQ(w.lines_written(), lines);
  };
  expect_refused([&] { w.write(ChipSample{t + 110, t + 120, three, one, one}); });    // wrong unit count
  expect_refused([&] { w.write(ChipSample{t + 110, t + 120, two, one, inf_one}); });  // inf count
  expect_refused([&] { w.write(ChipSample{t + 110, t + 109, two, one, one}); });      // ends before start
  expect_refused([&] { w.write(ChipSample{t + 99, t + 120, two, one, one}); });  // earlier than last chip
  expect_refused([&] { w.write(UtilSample{t, kNaN, UtilSource::samples}); });
  expect_refused([&] { w.write(UtilSample{t, 100.5, UtilSource::samples}); });
  expect_refused([&] { w.write(ClockReading{t, kInf, 1}); });
  expect_refused([&] { w.write(PowerLimitReading{t, -kInf}); });
  expect_refused([&] { w.write(EngineReading{t, one}); });  // 2 engines in meta
  expect_refused([&] { w.write(ProcessReading{t, -2, 0, 0}); });
  expect_refused([&] { w.write(Note{t, "two words", "x"}); });
  expect_refused([&] { w.write(Note{t, "", "x"}); });
  w.write(RunEnd{t + 200, 0, RunEnding::exit()});
  lines = w.lines_written();
  expect_refused([&] { w.write(RunEnd{t + 300, 0, RunEnding::exit()}); });
  // Another kind may still be earlier than the chip samples.
  EXPECT_NO_THROW(w.write(UtilSample{t, 5, UtilSource::samples}));
  w.close();
  testing::read_everything(*open_recording(path));
}

TEST(Writer, FlushMakesLinesReadableBeforeClose) {
  TempDir dir;
  const RecordingMeta meta = small_meta();
  const auto path = dir / "live.dsrec";
  RecordingWriter w(path, meta);
  const std::vector<double> two{1, 2}, one{1};
  w.write(ChipSample{meta.start_ns, meta.start_ns + 10, two, one, one});
  {
    // Buffered, not yet handed to the OS: the reader sees the header only.
    ChipSample c;
    EXPECT_FALSE(open_recording(path)->stream<ChipSample>()->next(c));
  }
  w.flush();
  ChipSample c;
  EXPECT_TRUE(open_recording(path)->stream<ChipSample>()->next(c));
  w.close();
  w.close();  // idempotent
  EXPECT_THROW(w.write(Mark{meta.start_ns, MarkKind::start}), Error);
}

}  // namespace
}  // namespace diescope
