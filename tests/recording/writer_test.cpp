// The writer refuses records the reader would reject, names the path in its errors, and makes
// lines visible to readers on flush().
#include <limits>

#include "test_files.hpp"

namespace diescope {
namespace {

using testing::small_meta;
using testing::TempDir;

constexpr double kInf = std::numeric_limits<double>::infinity();
using testing::kNaN;

TEST(Writer, CannotCreateNamesPathAndFix) {
  TempDir dir;
  const auto path = dir / "no-such-folder" / "r.dsrec";
  try {
    recording::RecordingWriter w(path, small_meta());
    FAIL() << "no error";
  } catch (const core::Error& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
    EXPECT_NE(e.fix().find("folder exists"), std::string::npos) << e.fix();
  }
}

TEST(Writer, DiskFullNamesPathAndFix) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full on this system";
  try {
    recording::RecordingWriter w("/dev/full", small_meta());
    FAIL() << "no error";
  } catch (const core::Error& e) {
    EXPECT_NE(std::string(e.what()).find("/dev/full"), std::string::npos) << e.what();
    EXPECT_NE(e.fix().find("free space"), std::string::npos) << e.fix();
    EXPECT_EQ(e.exit_code(), core::kExitInput);
  }
}

TEST(Writer, InvalidMetaIsRefused) {
  TempDir dir;
  recording::RecordingMeta m = small_meta();
  m.diagnostics[0].key = "fp32";  // same key as a unit
  EXPECT_THROW(recording::RecordingWriter(dir / "m.dsrec", m), core::Error);
  m = small_meta();
  m.interval_ms = kInf;
  EXPECT_THROW(recording::RecordingWriter(dir / "m.dsrec", m), core::Error);
}

TEST(Writer, RefusesRecordsTheReaderWouldReject) {
  TempDir dir;
  const recording::RecordingMeta meta = small_meta();
  const auto path = dir / "w.dsrec";
  recording::RecordingWriter w(path, meta);
  const recording::TimeNs t = meta.start_ns;
  const std::vector<double> two{1, 2}, one{1}, inf_one{kInf}, three{1, 2, 3};
  w.write(recording::ChipSample{t + 100, t + 110, two, one, one});
  long lines = w.lines_written();
  auto expect_refused = [&](auto&& write_it) {
    try {
      write_it();
      ADD_FAILURE() << "accepted";
    } catch (const core::Error& e) {
      EXPECT_EQ(e.exit_code(), core::kExitInternal);
      EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos);
    }
    EXPECT_EQ(w.lines_written(), lines);
  };
  expect_refused([&] {
    w.write(recording::ChipSample{t + 110, t + 120, three, one, one});
  });  // wrong unit count
  expect_refused([&] { w.write(recording::ChipSample{t + 110, t + 120, two, one, inf_one}); });  // inf count
  expect_refused([&] {
    w.write(recording::ChipSample{t + 110, t + 109, two, one, one});
  });  // ends before start
  expect_refused([&] {
    w.write(recording::ChipSample{t + 99, t + 120, two, one, one});
  });  // earlier than last chip
  expect_refused([&] { w.write(recording::UtilSample{t, kNaN, recording::UtilSource::samples}); });
  expect_refused([&] { w.write(recording::UtilSample{t, 100.5, recording::UtilSource::samples}); });
  expect_refused([&] { w.write(recording::ClockReading{t, kInf, 1}); });
  expect_refused([&] { w.write(recording::PowerLimitReading{t, -kInf}); });
  expect_refused([&] { w.write(recording::EngineReading{t, one}); });  // 2 engines in meta
  expect_refused([&] { w.write(recording::ProcessReading{t, -2, 0, 0}); });
  expect_refused([&] { w.write(recording::Note{t, "two words", "x"}); });
  expect_refused([&] { w.write(recording::Note{t, "", "x"}); });
  w.write(recording::RunEnd{t + 200, 0, recording::RunEnding::exit()});
  lines = w.lines_written();
  expect_refused([&] { w.write(recording::RunEnd{t + 300, 0, recording::RunEnding::exit()}); });
  // Another kind may still be earlier than the chip samples.
  EXPECT_NO_THROW(w.write(recording::UtilSample{t, 5, recording::UtilSource::samples}));
  w.close();
  testing::read_everything(*recording::open_recording(path));
}

TEST(Writer, FlushMakesLinesReadableBeforeClose) {
  TempDir dir;
  const recording::RecordingMeta meta = small_meta();
  const auto path = dir / "live.dsrec";
  recording::RecordingWriter w(path, meta);
  const std::vector<double> two{1, 2}, one{1};
  w.write(recording::ChipSample{meta.start_ns, meta.start_ns + 10, two, one, one});
  {
    // Buffered, not yet handed to the OS: the reader sees the header only.
    recording::ChipSample c;
    EXPECT_FALSE(recording::open_recording(path)->stream<recording::ChipSample>()->next(c));
  }
  w.flush();
  recording::ChipSample c;
  EXPECT_TRUE(recording::open_recording(path)->stream<recording::ChipSample>()->next(c));
  w.close();
  w.close();  // idempotent
  EXPECT_THROW(w.write(recording::Mark{meta.start_ns, recording::MarkKind::start}), core::Error);
}

}  // namespace
}  // namespace diescope
