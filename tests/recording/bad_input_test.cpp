// Bad input, tried as a new user would: each gives one InputError naming the file and the line,
// with a fix, and nothing crashes.
#include <sys/stat.h>
#include <unistd.h>

#include "test_files.hpp"

namespace diescope {
namespace {

using testing::expect_input_error;
using testing::write_bytes;

class BadInput : public testing::BadFiles {};

// Small meta columns: units fp32, dram; diagnostic sm_active; count dram_bytes; engines nvenc, nvdec.
const std::string kGoodChip = "chip 100 110 1 2 3 4\n";

TEST_F(BadInput, MissingFile) {
  expect_input_error(dir_ / "nope.dsrec", 0, "no such file");
}

TEST_F(BadInput, MissingFolder) {
  expect_input_error(dir_ / "no-folder" / "x.dsrec", 0, "no such file");
}

TEST_F(BadInput, Directory) {
  expect_input_error(dir_.path(), 0, "is a directory");
}

TEST_F(BadInput, PipeIsNotWaitedFor) {
  // Opening a FIFO for reading would block until a writer came; the reader refuses it at once.
  const auto path = dir_ / "pipe.dsrec";
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  expect_input_error(path, 0, "not a regular file");
}

TEST_F(BadInput, EmptyFile) {
  expect_input_error(raw(""), 0, "empty");
}

TEST_F(BadInput, UnreadableFile) {
  if (::geteuid() == 0) GTEST_SKIP() << "running as root: file permissions do not stop root from reading";
  const auto path = with_records(kGoodChip);
  ASSERT_EQ(::chmod(path.c_str(), 0), 0);
  expect_input_error(path, 0, "cannot be read");
}

TEST_F(BadInput, NotARecording) {
  expect_input_error(raw("hello world\nsecond line\n"), 1, "not a diescope recording");
  // Every format the reader reads is named, not only the newest: the bundled files are format 1.
  expect_input_error(raw("hello world\n"), 1, "'diescope-recording N' was expected (N from 1 to 4)");
}

TEST_F(BadInput, BinaryWithoutNewline) {
  expect_input_error(raw(std::string("\x7f"
                                     "ELF\0\1\2",
                                     7)),
                     1, "not a diescope recording");
}

TEST_F(BadInput, MagicWithoutVersion) {
  expect_input_error(raw("diescope-recording\nmeta {}\n"), 1, "not a diescope recording");
}

TEST_F(BadInput, WrongVersionSaysWhichIsSupported) {
  const std::string msg =
      expect_input_error(raw("diescope-recording 5\nmeta {}\n"), 1, "version 5 is not supported");
  EXPECT_NE(msg.find("reads versions 1 to 4"), std::string::npos) << msg;
  expect_input_error(raw("diescope-recording 0\n"), 1, "version 0 is not supported");
}

TEST_F(BadInput, CutInFirstLine) {
  expect_input_error(raw("diescope-recor"), 1, "cut off in its first line");
  expect_input_error(raw("diescope-recording 1"), 1, "cut off in its first line");
}

TEST_F(BadInput, MetaLineMissing) {
  expect_input_error(raw("diescope-recording 1\n"), 2, "meta line is missing");
  expect_input_error(raw("diescope-recording 1\nmeta {\"format_"), 2, "cut off in its meta line");
  expect_input_error(raw("diescope-recording 1\n" + kGoodChip), 2, "must be the meta line");
}

TEST_F(BadInput, MetaNotJson) {
  expect_input_error(raw("diescope-recording 1\nmeta {\"format_version\": 1,\n"), 2, "not valid JSON");
}

TEST_F(BadInput, MetaNumberOutOfRange) {
  // Found by the fuzzer: the JSON parser reports 1e400 as an overflow, not as a syntax error.
  write_bytes(dir_ / "big.dsrec", header_with("\"sm_count\":132", "\"sm_count\":1e400"));
  expect_input_error(dir_ / "big.dsrec", 2, "number overflow");
}

TEST_F(BadInput, MetaNotAnObject) {
  expect_input_error(raw("diescope-recording 1\nmeta [1, 2]\n"), 2, "must be a JSON object");
}

TEST_F(BadInput, MetaMissingFields) {
  write_bytes(dir_ / "m1.dsrec", header_with("\"host\":\"node-7\",", ""));
  expect_input_error(dir_ / "m1.dsrec", 2, "meta lacks the field 'host'");
  write_bytes(dir_ / "m2.dsrec", header_with("\"model\":\"NVIDIA H200\",", ""));
  expect_input_error(dir_ / "m2.dsrec", 2, "'gpu.model'");
  write_bytes(dir_ / "m3.dsrec", header_with("\"counted_by_gpu_util\":false,", ""));
  expect_input_error(dir_ / "m3.dsrec", 2, "'engines[0].counted_by_gpu_util'");
}

TEST_F(BadInput, MetaWrongTypesAndValues) {
  write_bytes(dir_ / "t1.dsrec", header_with("\"interval_ms\":10.0", "\"interval_ms\":\"10\""));
  expect_input_error(dir_ / "t1.dsrec", 2, "'interval_ms' must be a number");
  write_bytes(dir_ / "t2.dsrec", header_with("\"interval_ms\":10.0", "\"interval_ms\":0"));
  expect_input_error(dir_ / "t2.dsrec", 2, "'interval_ms' must be a number above 0");
  write_bytes(dir_ / "t3.dsrec", header_with("\"combine\":\"mean\"", "\"combine\":\"max\""));
  expect_input_error(dir_ / "t3.dsrec", 2, "'units[0].recipe.combine'");
  write_bytes(dir_ / "t4.dsrec", header_with("\"key\":\"dram\"", "\"key\":\"fp32\""));
  expect_input_error(dir_ / "t4.dsrec", 2, "used twice");
  write_bytes(dir_ / "t5.dsrec", header_with("\"format_version\":4", "\"format_version\":1"));
  expect_input_error(dir_ / "t5.dsrec", 2, "differs from line 1");
  write_bytes(dir_ / "t6.dsrec", header_with("\"run_type\":\"round\"", "\"run_type\":\"many\""));
  expect_input_error(dir_ / "t6.dsrec", 2, "'run_type'");
}

TEST_F(BadInput, UnknownRecordKind) {
  expect_refused({
      {kGoodChip + "sample 1 2 3\n", 4, "unknown record kind 'sample'"},
      {kGoodChip + " chip 110 120 1 2 3 4\n", 4, "starts with a space or tab"},
  });
}

TEST_F(BadInput, ChipWithTooFewOrTooManyValues) {
  // The meta's columns need 4 values after the times: 2 units, 1 diagnostic, 1 count.
  expect_refused({
      {kGoodChip + "chip 110 120 1 2 3\n", 4, "has 3 values after its times where the meta's columns need 4"},
      {"chip 110 120 1 2 3 4 5 6\n", 3, "has 6 values after its times where the meta's columns need 4"},
      {"chip 110\n", 3, "ends before its end time"},
      {"chip\n", 3, "ends before its start time"},
  });
}

TEST_F(BadInput, OtherKindsWithWrongFieldCounts) {
  expect_refused({
      {"util 1 50\n", 3, "ends before its source"},
      {"util 1 50 samples extra\n", 3, "a field too many"},
      {"clock 1 1980\n", 3, "ends before its memory clock"},
      {"engine 1 5\n", 3, "has 1 values where the meta lists 2 engines"},
      {"engine 1 5 6 7\n", 3, "more values than the meta's 2 engines"},
      {"proc 1 0 0\n", 3, "ends before its exited process count"},
      {"mark 1\n", 3, "ends before its start or stop"},
      {"mark 1 start now\n", 3, "a field too many"},
      {"jump 1\n", 3, "ends before its step"},
      {"power 1 700 800\n", 3, "ends before its energy counter"},
      {"power 1 700\n", 3, "ends before its power draw"},
      {"power 1 700 300 5 6\n", 3, "a field too many"},
      {"throttle 1\n", 3, "ends before its reasons"},
  });
}

TEST_F(BadInput, UnparsableNumbers) {
  expect_refused({
      {"chip 100 110 1 2x 3 4\n", 3, "value of unit 'dram' '2x' is not a number"},
      {"chip 1e9 110 1 2 3 4\n", 3, "start time '1e9' is not a whole number"},
      {"util 1 ninety samples\n", 3, "'ninety' is not a number"},
      {"chip 100 99999999999999999999 1 2 3 4\n", 3, "out of range"},
      {"chip 100 110 1 2 3 1e400\n", 3, "out of range"},
      {"proc 1 +1 0 0\n", 3, "not a whole number"},
      {"end 1 1.5 exited\n", 3, "exit code '1.5'"},
  });
}

TEST_F(BadInput, WholeNumbersAtTheirLimits) {
  // Times and steps are signed 64-bit: -9223372036854775808 .. 9223372036854775807.
  const auto r =
      recording::open_recording(with_records("jump -9223372036854775808 9223372036854775807\njump 0 "
                                             "-9223372036854775808\njump 000000000000000000000012 -0\n"));
  const auto& jumps = r->side().clock_jumps;
  ASSERT_EQ(jumps.size(), 3u);
  EXPECT_EQ(jumps[0].ts_ns, INT64_MIN);
  EXPECT_EQ(jumps[0].step_ns, INT64_MAX);
  EXPECT_EQ(jumps[1].step_ns, INT64_MIN);
  EXPECT_EQ(jumps[2].ts_ns, 12);  // leading zeros are fine
  EXPECT_EQ(jumps[2].step_ns, 0);
  expect_input_error(with_records("jump 1 9223372036854775808\n"), 3,
                     "step '9223372036854775808' is out of range");
  expect_input_error(with_records("jump 1 -9223372036854775809\n"), 3, "is out of range");
  expect_input_error(with_records("jump 12345678901234567890 1\n"), 3, "is out of range");
  expect_input_error(with_records("jump - 1\n"), 3, "time '-' is not a whole number");
  expect_input_error(with_records("jump 0x10 1\n"), 3, "time '0x10' is not a whole number");
  expect_input_error(with_records("end 1 2147483648\n"), 3, "exit code '2147483648' is out of range");
}

TEST_F(BadInput, InfinityAnywhere) {
  const std::vector<std::pair<std::string, std::string>> lines = {
      {"chip 100 110 inf 2 3 4\n", "unit 'fp32' is infinite"},
      {"chip 100 110 1 -inf 3 4\n", "unit 'dram' is infinite"},
      {"chip 100 110 1 2 Infinity 4\n", "diagnostic 'sm_active' is infinite"},
      {"chip 100 110 1 2 3 inf\n", "count 'dram_bytes' is infinite"},
      {"util 1 inf samples\n", "GPU-Util percent is infinite"},
      {"clock 1 inf 1593\n", "SM clock is infinite"},
      {"clock 1 1980 inf\n", "memory clock is infinite"},
      {"power 1 inf\n", "power limit is infinite"},
      {"power 1 700 inf 5\n", "power draw is infinite"},
      {"power 1 700 300 inf\n", "energy counter is infinite"},
      {"engine 1 inf 0\n", "engine 'nvenc' is infinite"},
      {"engine 1 0 inf\n", "engine 'nvdec' is infinite"},
      {"chip inf 110 1 2 3 4\n", "start time 'inf' is not a whole number"},
      {"chip 100 inf 1 2 3 4\n", "end time 'inf' is not a whole number"},
      {"util inf 1 samples\n", "time 'inf' is not a whole number"},
      {"proc 1 inf 0 0\n", "'inf' is not a whole number"},
      {"jump 1 inf\n", "step 'inf' is not a whole number"},
      {"end 1 inf\n", "exit code 'inf' is not a whole number"},
  };
  for (const auto& [line, fragment] : lines) {
    SCOPED_TRACE(line);
    expect_input_error(with_records(line), 3, fragment);
  }
}

TEST_F(BadInput, NanWhereNotAllowed) {
  const std::vector<std::pair<std::string, std::string>> lines = {
      {"chip nan 110 1 2 3 4\n", "start time 'nan' is not a whole number"},
      {"chip 100 nan 1 2 3 4\n", "end time 'nan' is not a whole number"},
      {"util 1 nan samples\n", "GPU-Util percent is NaN"},
      {"util nan 1 samples\n", "time 'nan' is not a whole number"},
      {"clock nan 1 1\n", "time 'nan'"},
      {"throttle nan -\n", "time 'nan'"},
      {"power nan 1\n", "time 'nan'"},
      {"engine nan 1 1\n", "time 'nan'"},
      {"proc 1 nan 0 0\n", "'nan' is not a whole number"},
      {"mark nan start\n", "time 'nan'"},
      {"counters nan on\n", "time 'nan'"},
      {"note nan topic text\n", "time 'nan'"},
      {"jump 1 nan\n", "step 'nan'"},
      {"end nan 0 exited\n", "time 'nan'"},
  };
  for (const auto& [line, fragment] : lines) {
    SCOPED_TRACE(line);
    expect_input_error(with_records(line), 3, fragment);
  }
}

TEST_F(BadInput, NanWhereAllowedReadsAsNan) {
  // Unit, diagnostic, count, clock, power and engine values may be NaN: "not available".
  const auto path =
      with_records("chip 100 110 nan nan nan nan\nclock 1 nan nan\npower 1 nan nan nan\nengine 1 nan nan\n");
  const auto r = recording::open_recording(path);
  recording::ChipSample c;
  const auto chip = r->stream<recording::ChipSample>();  // the sample's values live in the stream
  ASSERT_TRUE(chip->next(c));
  for (double v : {c.units[0], c.units[1], c.diagnostics[0], c.counts[0]}) EXPECT_TRUE(std::isnan(v));
  recording::ClockReading k;
  ASSERT_TRUE(r->stream<recording::ClockReading>()->next(k));
  EXPECT_TRUE(std::isnan(k.sm_mhz) && std::isnan(k.mem_mhz));
  recording::PowerLimitReading p;
  ASSERT_TRUE(r->stream<recording::PowerLimitReading>()->next(p));
  EXPECT_TRUE(std::isnan(p.limit_w) && std::isnan(p.draw_w) && std::isnan(p.energy_mj));
  recording::EngineReading e;
  const auto engines = r->stream<recording::EngineReading>();
  ASSERT_TRUE(engines->next(e));
  EXPECT_TRUE(std::isnan(e.values[0]) && std::isnan(e.values[1]));
}

TEST_F(BadInput, PowerDrawAndEnergyMayNotBeNegative) {
  expect_input_error(with_records("power 1 700 -1 5\n"), 3, "the power draw is negative");
  expect_input_error(with_records("power 1 700 300 -5\n"), 3, "the energy counter is negative");
}

TEST_F(BadInput, PowerLineBeforeVersionFourHoldsTheLimitAlone) {
  // A version-3 file: the power line has the limit only; draw and energy read back as NaN, not 0.
  std::string v3 = header_;
  v3.replace(v3.find("diescope-recording 4"), 20, "diescope-recording 3");
  v3.replace(v3.find("\"format_version\":4"), 18, "\"format_version\":3");
  const auto r = recording::open_recording(raw(v3 + "power 5 700\n"));
  EXPECT_EQ(r->meta().format_version, 3);
  recording::PowerLimitReading p;
  ASSERT_TRUE(r->stream<recording::PowerLimitReading>()->next(p));
  EXPECT_EQ(p.ts_ns, 5);
  EXPECT_EQ(p.limit_w, 700);
  EXPECT_TRUE(std::isnan(p.draw_w));
  EXPECT_TRUE(std::isnan(p.energy_mj));
  // The new fields in an old file are one field too many.
  expect_input_error(raw(v3 + "power 5 700 300 9\n"), 3, "a field too many");
}

TEST_F(BadInput, ChipEndBeforeStart) {
  expect_input_error(with_records(kGoodChip + "chip 120 119 1 2 3 4\n"), 4,
                     "ends (119 ns) before it starts (120 ns)");
}

TEST_F(BadInput, EmptyChipSpanIsAllowed) {
  const auto r = recording::open_recording(with_records("chip 100 100 1 2 3 4\n"));
  recording::ChipSample c;
  const auto chip = r->stream<recording::ChipSample>();
  ASSERT_TRUE(chip->next(c));
  EXPECT_EQ(c.end_ns - c.start_ns, 0);
}

TEST_F(BadInput, TimesDecreasingWithinAKind) {
  const std::vector<std::string> pairs = {
      "chip 200 210 1 2 3 4\nchip 150 160 1 2 3 4\n",
      "util 200 1 samples\nutil 150 1 samples\n",
      "clock 200 1 1\nclock 150 1 1\n",
      "throttle 200 -\nthrottle 150 -\n",
      "power 200 1 2 3\npower 150 1 2 3\n",
      "engine 200 1 1\nengine 150 1 1\n",
      "proc 200 0 0 0\nproc 150 0 0 0\n",
      "mark 200 start\nmark 150 stop\n",
      "counters 200 on\ncounters 150 off\n",
      "note 200 a b\nnote 150 a b\n",
      "jump 200 1\njump 150 1\n",
  };
  for (const std::string& records : pairs) {
    SCOPED_TRACE(records);
    // The second line (line 5, after a line of another kind) goes back in time.
    const std::string other = records.rfind("util", 0) == 0 ? "clock 1 1 1\n" : "util 1 1 samples\n";
    const std::string first = records.substr(0, records.find('\n') + 1);
    const std::string second = records.substr(records.find('\n') + 1);
    const std::string msg =
        expect_input_error(with_records(first + other + second), 5, "earlier than the previous");
    EXPECT_NE(msg.find("(line 3)"), std::string::npos) << msg;
  }
  // Different kinds may interleave in any order: only each kind's own times must not decrease.
  const auto ok = with_records("util 500 1 samples\nchip 100 110 1 2 3 4\nclock 50 1 1\n", "ok.dsrec");
  EXPECT_NO_THROW(testing::read_everything(*recording::open_recording(ok)));
}

TEST_F(BadInput, SecondEnd) {
  expect_input_error(with_records("end 1 0 exited\nend 2 0 exited\n"), 4,
                     "second end record (the first is on line 3)");
}

TEST_F(BadInput, BadWordsAndText) {
  expect_refused({
      {"util 1 5 nvml\n", 3, "neither 'samples' nor 'polled'"},
      {"util 1 101 samples\n", 3, "outside 0..100"},
      {"util 1 -1 samples\n", 3, "outside 0..100"},
      {"mark 1 begin\n", 3, "neither 'start' nor 'stop'"},
      {"counters 1 maybe\n", 3, "neither 'on' nor 'off'"},
      {"throttle 1 gpu_idle,hot\n", 3, "unknown throttle reason 'hot'"},
      {"throttle 1 gpu_idle,\n", 3, "empty name"},
      {"throttle 1 0xZZ\n", 3, "unknown throttle reason '0xZZ'"},
      {"note 1 topic bad \\q escape\n", 3, "unknown escape"},
      {"note 1 topic ends in \\\n", 3, "lone backslash"},
      {"clock 1 -5 1\n", 3, "negative"},
      {"proc 1 -2 0 0\n", 3, "-1 (unreadable) or more"},
  });
}

TEST_F(BadInput, ErrorInAStreamSurfacesWhenThatStreamIsRead) {
  // The opening pass checks kinds and times; a cursor checks its own lines' values.
  const auto path = with_records(kGoodChip + "chip 110 120 1 oops 3 4\n");
  const auto r = recording::open_recording(path);
  auto chip = r->stream<recording::ChipSample>();
  recording::ChipSample c;
  ASSERT_TRUE(chip->next(c));
  try {
    chip->next(c);
    FAIL() << "no error";
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.line(), 4);
  }
}

TEST_F(BadInput, OverlongLine) {
  const std::string long_note = "note 1 t " + std::string((4u << 20) + 10, 'x') + "\n";
  expect_input_error(with_records(kGoodChip + long_note), 4, "longer than 4 MiB");
}

}  // namespace
}  // namespace diescope
