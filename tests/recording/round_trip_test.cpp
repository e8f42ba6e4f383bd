// Every record kind written by RecordingWriter reads back equal through open_recording, NaN and
// the sign of zero included; the meta keeps every field.
#include <charconv>
#include <csignal>
#include <cstring>
#include <limits>

#include "test_files.hpp"

namespace diescope {
namespace {

using testing::same_value;
using testing::small_meta;
using testing::TempDir;

using testing::kNaN;

void expect_same_columns(const std::vector<recording::ColumnDef>& a,
                         const std::vector<recording::ColumnDef>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].key, b[i].key);
    EXPECT_EQ(a[i].label, b[i].label);
    EXPECT_EQ(a[i].metric, b[i].metric);
    EXPECT_EQ(a[i].recipe.combine, b[i].recipe.combine);
    EXPECT_EQ(a[i].recipe.counters, b[i].recipe.counters);
    EXPECT_EQ(a[i].source, b[i].source);
    EXPECT_EQ(a[i].flags, b[i].flags);
    EXPECT_EQ(a[i].note, b[i].note);
    EXPECT_EQ(a[i].counted_by_gpu_util, b[i].counted_by_gpu_util);
    EXPECT_EQ(a[i].unit, b[i].unit);
  }
}

TEST(RecordingRoundTrip, MetaKeepsEveryField) {
  TempDir dir;
  recording::RecordingMeta m = small_meta();
  m.drain_ms = kNaN;  // not available travels as JSON null
  {
    recording::RecordingWriter w(dir / "meta.dsrec", m);
    w.close();
  }
  const auto r = recording::open_recording(dir / "meta.dsrec");
  const recording::RecordingMeta& got = r->meta();
  EXPECT_EQ(got.format_version, 4);
  EXPECT_TRUE(std::isnan(got.host_interval_ms));  // no host probes: null
  EXPECT_EQ(got.tool_version, m.tool_version);
  EXPECT_EQ(got.method, m.method);
  EXPECT_EQ(got.gpu.index, m.gpu.index);
  EXPECT_EQ(got.gpu.uuid, m.gpu.uuid);
  EXPECT_EQ(got.gpu.model, m.gpu.model);
  EXPECT_EQ(got.gpu.chip, m.gpu.chip);
  EXPECT_EQ(got.gpu.driver, m.gpu.driver);
  EXPECT_EQ(got.gpu.compute_capability, m.gpu.compute_capability);
  EXPECT_EQ(got.gpu.l2_bytes, m.gpu.l2_bytes);
  EXPECT_EQ(got.gpu.sm_count, m.gpu.sm_count);
  EXPECT_EQ(got.unit_table, m.unit_table);
  expect_same_columns(got.units, m.units);
  expect_same_columns(got.diagnostics, m.diagnostics);
  expect_same_columns(got.counts, m.counts);
  expect_same_columns(got.engines, m.engines);
  EXPECT_EQ(got.interval_ms, m.interval_ms);
  EXPECT_TRUE(std::isnan(got.drain_ms));
  EXPECT_EQ(got.gpu_util_resolution_pct, m.gpu_util_resolution_pct);
  EXPECT_EQ(got.start_ns, m.start_ns);
  EXPECT_EQ(got.run_type, m.run_type);
  EXPECT_EQ(got.command, m.command);
  EXPECT_EQ(got.host, m.host);
  EXPECT_EQ(got.duty_on_ms, m.duty_on_ms);
  EXPECT_EQ(got.duty_period_ms, m.duty_period_ms);
  // Header only: no records, the run's last time is its start.
  EXPECT_EQ(r->side().complete_lines, 2);
  EXPECT_FALSE(r->side().truncated);
  EXPECT_FALSE(r->side().end.has_value());
  EXPECT_EQ(r->side().last_ts_ns, m.start_ns);
}

struct Written {
  std::vector<recording::OwnedChipSample> chip;
  std::vector<recording::UtilSample> util;
  std::vector<recording::ClockReading> clock;
  std::vector<recording::ThrottleReading> throttle;
  std::vector<recording::PowerLimitReading> power;
  std::vector<recording::OwnedEngineReading> engine;
  std::vector<recording::ProcessReading> process;
  std::vector<recording::Mark> marks;
  std::vector<recording::CountersEvent> counters;
  std::vector<recording::Note> notes;
  std::vector<recording::ClockJump> jumps;
  recording::RunEnd end;
};

// The host kinds (host, hstream, task) round-trip in host_streams_test.cpp, holder in
// gpu_holders_test.cpp.
static_assert(recording::kKindCount == 12 + 3 + 1,
              "every_kind() and the round trip below write every record kind: add the new one");

Written every_kind(recording::TimeNs t0) {
  Written w;
  const double tiny = std::numeric_limits<double>::denorm_min();
  const double huge = std::numeric_limits<double>::max();
  w.chip = {
      {t0, t0 + 614'150'000, {0.04217, 0.5437}, {0.6902}, {2.132e9}},
      {t0 + 614'150'000, t0 + 624'150'000, {84.97, kNaN}, {100}, {kNaN}},
      {t0 + 624'150'000, t0 + 624'150'000, {-0.0, 1.0 / 3.0}, {tiny}, {huge}},  // empty span is allowed
      {t0 + 624'150'000, t0 + 634'150'000, {0.1 + 0.2, 1e-300}, {kNaN}, {3.95e10}},
  };
  w.util = {{t0 + 1, 0, recording::UtilSource::samples},
            {t0 + 200'000'000, 99, recording::UtilSource::polled},
            {t0 + 200'000'000, 12.5, recording::UtilSource::samples}};
  w.clock = {{t0, 1980, kNaN}, {t0 + 100'000'000, kNaN, 3201}, {t0 + 200'000'000, 1755.5, 1593}};
  w.throttle = {{t0, std::nullopt},
                {t0 + 1, std::uint64_t{0}},
                {t0 + 2, std::uint64_t{recording::throttle_gpu_idle}},
                {t0 + 3, std::uint64_t{recording::throttle_sw_power_cap | recording::throttle_hw_thermal |
                                       recording::throttle_display_clocks}},
                {t0 + 4, std::uint64_t{0x400 | 0x8000'0000'0000'0000ULL |
                                       recording::throttle_sync_boost}}};  // unnamed bits too
  w.power = {{t0, 700, 331.5, 1.5e12}, {t0 + 5, kNaN, kNaN, kNaN}, {t0 + 6, 612.25, 0, 1.5e12 + 0.25}};
  w.engine = {{t0, {0, kNaN}}, {t0 + 100'000'000, {93.8, 4}}};
  w.process = {{t0, 0, 0, 0}, {t0 + 1, -1, -1, 3}, {t0 + 2, 2, 1, 0}};
  w.marks = {{t0 + 10, recording::MarkKind::start}, {t0 + 20, recording::MarkKind::stop}};
  w.counters = {{t0, true, ""}, {t0 + 30, false, "sampler failed: CUPTI_ERROR_X"}, {t0 + 40, true, ""}};
  w.notes = {{t0, "sampler", "plain text"},
             {t0, "gpu_util", "multi\nline\r\ntext with a \\ backslash and\ttab"},
             {t0 + 1, "empty", ""},
             {t0 + 2, "spaces", "  leading and trailing  "},
             {t0 + 3, "unicode", "caf\xc3\xa9 \xe2\x80\x94 ok"}};
  w.jumps = {{t0 + 50, -2'000'000'000}, {t0 + 60, 150'000'000}};
  w.end = {t0 + 700'000'000, 130, recording::parse_run_ending("signal SIGINT\nthen exit")};
  return w;
}

TEST(RecordingRoundTrip, GpmColumnsKeepTheirSource) {
  // docs/recording-format.md: a column's source is chip, gpm or nvml_engine.
  TempDir dir;
  recording::RecordingMeta m = small_meta();
  m.unit_table = "gpm";
  for (auto* columns : {&m.units, &m.diagnostics, &m.counts})
    for (auto& c : *columns) c.source = recording::UnitSource::gpm;
  {
    recording::RecordingWriter w(dir / "gpm.dsrec", m);
    w.close();
  }
  const auto r = recording::open_recording(dir / "gpm.dsrec");
  EXPECT_EQ(r->meta().unit_table, "gpm");
  expect_same_columns(r->meta().units, m.units);
  expect_same_columns(r->meta().counts, m.counts);
  EXPECT_EQ(r->meta().units[0].source, recording::UnitSource::gpm);
  EXPECT_EQ(r->meta().engines[0].source, recording::UnitSource::nvml_engine);
}

// The words a column's combine, source and flags have in the meta line
// (docs/recording-format.md#the-meta-line), which report.json, agent records and docs/units.json repeat; the
// small meta's line holds each.
TEST(RecordingRoundTrip, ColumnWordsAreTheMetaLinesWords) {
  EXPECT_EQ(recording::combine_text(recording::UnitRecipe::Combine::counter), "counter");
  EXPECT_EQ(recording::combine_text(recording::UnitRecipe::Combine::mean), "mean");
  EXPECT_EQ(recording::unit_source_text(recording::UnitSource::chip), "chip");
  EXPECT_EQ(recording::unit_source_text(recording::UnitSource::nvml_engine), "nvml_engine");
  EXPECT_EQ(recording::unit_source_text(recording::UnitSource::gpm), "gpm");
  EXPECT_EQ(recording::unit_flag_text(recording::UnitFlag::stand_in_counter), "stand_in_counter");
  EXPECT_EQ(recording::unit_flag_text(recording::UnitFlag::different_measure), "different_measure");
  TempDir dir;
  const std::string header = testing::header_for(small_meta(), dir);
  for (const char* words :
       {"\"combine\":\"mean\"", "\"combine\":\"counter\"", "\"source\":\"chip\"",
        "\"source\":\"nvml_engine\"", "\"flags\":[\"stand_in_counter\",\"different_measure\"]"})
    EXPECT_NE(header.find(words), std::string::npos) << words << " in " << header;
}

TEST(RecordingRoundTrip, EveryRecordKindReadsBackEqual) {
  TempDir dir;
  const recording::RecordingMeta meta = small_meta();
  const Written w = every_kind(meta.start_ns);
  const auto path = dir / "all.dsrec";
  {
    recording::RecordingWriter out(path, meta);
    // Kinds interleaved, as a live collector writes them; each kind stays in time order.
    for (std::size_t i = 0; i < 5; ++i) {
      if (i < w.chip.size()) out.write(w.chip[i]);
      if (i < w.util.size()) out.write(w.util[i]);
      if (i < w.clock.size()) out.write(w.clock[i]);
      if (i < w.throttle.size()) out.write(w.throttle[i]);
      if (i < w.power.size()) out.write(w.power[i]);
      if (i < w.engine.size()) out.write(w.engine[i]);
      if (i < w.process.size()) out.write(w.process[i]);
      if (i < w.marks.size()) out.write(w.marks[i]);
      if (i < w.counters.size()) out.write(w.counters[i]);
      if (i < w.notes.size()) out.write(w.notes[i]);
      if (i < w.jumps.size()) out.write(w.jumps[i]);
    }
    out.write(w.end);
    EXPECT_EQ(out.lines_written(), 2 + 4 + 3 + 3 + 5 + 3 + 2 + 3 + 2 + 3 + 5 + 2 + 1);
    out.close();
  }
  const auto r = recording::open_recording(path);
  EXPECT_EQ(r->name(), path.string());

  // Streams are independent cursors: read chip samples and GPU-Util alternately.
  auto chip = r->stream<recording::ChipSample>();
  auto util = r->stream<recording::UtilSample>();
  recording::ChipSample c;
  recording::UtilSample u;
  for (std::size_t i = 0; i < w.chip.size(); ++i) {
    ASSERT_TRUE(chip->next(c)) << i;
    EXPECT_EQ(c.start_ns, w.chip[i].start_ns);
    EXPECT_EQ(c.end_ns, w.chip[i].end_ns);
    ASSERT_EQ(c.units.size(), 2u);
    ASSERT_EQ(c.diagnostics.size(), 1u);
    ASSERT_EQ(c.counts.size(), 1u);
    for (std::size_t k = 0; k < 2; ++k)
      EXPECT_TRUE(same_value(c.units[k], w.chip[i].units[k])) << i << " " << c.units[k];
    EXPECT_TRUE(same_value(c.diagnostics[0], w.chip[i].diagnostics[0])) << i;
    EXPECT_TRUE(same_value(c.counts[0], w.chip[i].counts[0])) << i;
    if (i < w.util.size()) {
      ASSERT_TRUE(util->next(u));
      EXPECT_EQ(u.ts_ns, w.util[i].ts_ns);
      EXPECT_EQ(u.pct, w.util[i].pct);
      EXPECT_EQ(u.source, w.util[i].source);
    }
  }
  EXPECT_FALSE(chip->next(c));
  EXPECT_FALSE(chip->next(c));  // stays at the end
  EXPECT_FALSE(util->next(u));

  recording::ClockReading k;
  auto clocks = r->stream<recording::ClockReading>();
  for (const recording::ClockReading& want : w.clock) {
    ASSERT_TRUE(clocks->next(k));
    EXPECT_EQ(k.ts_ns, want.ts_ns);
    EXPECT_TRUE(same_value(k.sm_mhz, want.sm_mhz));
    EXPECT_TRUE(same_value(k.mem_mhz, want.mem_mhz));
  }
  EXPECT_FALSE(clocks->next(k));

  recording::ThrottleReading t;
  auto throttles = r->stream<recording::ThrottleReading>();
  for (const recording::ThrottleReading& want : w.throttle) {
    ASSERT_TRUE(throttles->next(t));
    EXPECT_EQ(t.ts_ns, want.ts_ns);
    EXPECT_EQ(t.mask, want.mask);
  }
  EXPECT_FALSE(throttles->next(t));

  recording::PowerLimitReading p;
  auto power = r->stream<recording::PowerLimitReading>();
  for (const recording::PowerLimitReading& want : w.power) {
    ASSERT_TRUE(power->next(p));
    EXPECT_EQ(p.ts_ns, want.ts_ns);
    EXPECT_TRUE(same_value(p.limit_w, want.limit_w));
    EXPECT_TRUE(same_value(p.draw_w, want.draw_w));
    EXPECT_TRUE(same_value(p.energy_mj, want.energy_mj));
  }
  EXPECT_FALSE(power->next(p));

  recording::EngineReading e;
  auto engines = r->stream<recording::EngineReading>();
  for (const recording::OwnedEngineReading& want : w.engine) {
    ASSERT_TRUE(engines->next(e));
    EXPECT_EQ(e.ts_ns, want.ts_ns);
    ASSERT_EQ(e.values.size(), 2u);
    for (std::size_t i = 0; i < 2; ++i) EXPECT_TRUE(same_value(e.values[i], want.values[i]));
  }
  EXPECT_FALSE(engines->next(e));

  recording::ProcessReading pr;
  auto procs = r->stream<recording::ProcessReading>();
  for (const recording::ProcessReading& want : w.process) {
    ASSERT_TRUE(procs->next(pr));
    EXPECT_EQ(pr.ts_ns, want.ts_ns);
    EXPECT_EQ(pr.compute, want.compute);
    EXPECT_EQ(pr.graphics, want.graphics);
    EXPECT_EQ(pr.exited, want.exited);
  }
  EXPECT_FALSE(procs->next(pr));

  const recording::SideRecords& side = r->side();
  ASSERT_EQ(side.marks.size(), w.marks.size());
  for (std::size_t i = 0; i < w.marks.size(); ++i) {
    EXPECT_EQ(side.marks[i].ts_ns, w.marks[i].ts_ns);
    EXPECT_EQ(side.marks[i].kind, w.marks[i].kind);
  }
  ASSERT_EQ(side.counters.size(), w.counters.size());
  for (std::size_t i = 0; i < w.counters.size(); ++i) {
    EXPECT_EQ(side.counters[i].ts_ns, w.counters[i].ts_ns);
    EXPECT_EQ(side.counters[i].on, w.counters[i].on);
    EXPECT_EQ(side.counters[i].reason, w.counters[i].reason);
  }
  ASSERT_EQ(side.notes.size(), w.notes.size());
  for (std::size_t i = 0; i < w.notes.size(); ++i) {
    EXPECT_EQ(side.notes[i].ts_ns, w.notes[i].ts_ns);
    EXPECT_EQ(side.notes[i].topic, w.notes[i].topic);
    EXPECT_EQ(side.notes[i].text, w.notes[i].text);
  }
  ASSERT_EQ(side.clock_jumps.size(), w.jumps.size());
  for (std::size_t i = 0; i < w.jumps.size(); ++i) {
    EXPECT_EQ(side.clock_jumps[i].ts_ns, w.jumps[i].ts_ns);
    EXPECT_EQ(side.clock_jumps[i].step_ns, w.jumps[i].step_ns);
  }
  ASSERT_TRUE(side.end.has_value());
  EXPECT_EQ(side.end->ts_ns, w.end.ts_ns);
  EXPECT_EQ(side.end->exit_code, w.end.exit_code);
  EXPECT_EQ(side.end->ending, w.end.ending);
  EXPECT_FALSE(side.truncated);
  // 2 header lines + 36 records, each one line.
  EXPECT_EQ(side.complete_lines, 38);
  EXPECT_EQ(side.last_ts_ns, w.end.ts_ns);  // the end at t0 + 700 ms is the latest time
}

TEST(RecordingRoundTrip, NanIsWrittenAsNanAndThrottleReasonsAsNames) {
  TempDir dir;
  const recording::RecordingMeta meta = small_meta();
  const auto path = dir / "text.dsrec";
  const recording::TimeNs t0 = meta.start_ns;
  {
    recording::RecordingWriter out(path, meta);
    const std::vector<double> units{kNaN, 1.5}, diag{-kNaN}, counts{2e10};
    out.write(recording::ChipSample{t0, t0 + 10'000'000, units, diag, counts});
    out.write(recording::ThrottleReading{
        t0, std::uint64_t{recording::throttle_gpu_idle | recording::throttle_sw_power_cap | 0x200}});
    out.write(recording::ThrottleReading{t0 + 1, std::uint64_t{0}});
    out.write(recording::ThrottleReading{t0 + 2, std::nullopt});
    out.write(recording::Note{t0, "x", "a\nb\\c"});
  }
  const std::string text = testing::read_bytes(path);
  EXPECT_NE(text.find("\nchip 1700000000000000000 1700000000010000000 nan 1.5 nan 2e+10\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\nthrottle 1700000000000000000 gpu_idle,sw_power_cap,0x200\n"), std::string::npos);
  EXPECT_NE(text.find("\nthrottle 1700000000000000001 -\n"), std::string::npos);
  EXPECT_NE(text.find("\nthrottle 1700000000000000002 ?\n"), std::string::npos);
  EXPECT_NE(text.find("\nnote 1700000000000000000 x a\\nb\\\\c\n"), std::string::npos);
  EXPECT_EQ(text.rfind("diescope-recording 4\nmeta {", 0), 0u);
}

TEST(RecordingRoundTrip, ReaderAcceptsWhatOtherToolsMayWrite) {
  // Tabs and runs of spaces between fields, CRLF line ends, comments and blank lines, uppercase NaN.
  TempDir dir;
  const auto r = recording::open_recording(testing::small_recording(dir, "hand.dsrec",
                                                                    "# written by hand\n"
                                                                    "\n"
                                                                    "chip\t100   200\t1.5 NaN  3 4e3\r\n"
                                                                    "   \n"
                                                                    "util 150 98 polled\r\n"));
  recording::ChipSample c;
  auto chip = r->stream<recording::ChipSample>();
  ASSERT_TRUE(chip->next(c));
  EXPECT_EQ(c.start_ns, 100);
  EXPECT_EQ(c.end_ns, 200);
  EXPECT_EQ(c.units[0], 1.5);
  EXPECT_TRUE(std::isnan(c.units[1]));
  EXPECT_EQ(c.diagnostics[0], 3);
  EXPECT_EQ(c.counts[0], 4000);
  EXPECT_FALSE(chip->next(c));
  recording::UtilSample u;
  auto util = r->stream<recording::UtilSample>();
  ASSERT_TRUE(util->next(u));
  EXPECT_EQ(u.pct, 98);
  EXPECT_EQ(u.source, recording::UtilSource::polled);
  EXPECT_EQ(r->side().complete_lines, 7);
  EXPECT_EQ(r->side().last_ts_ns, 200);  // the chip sample's end
}

TEST(RecordingRoundTrip, ThrottleNamesCoverNvmlBits) {
  EXPECT_EQ(throttle_reason_name(recording::throttle_hw_power_brake), "hw_power_brake");
  EXPECT_EQ(recording::throttle_reason_bit("sw_thermal"),
            std::optional<std::uint64_t>(recording::throttle_sw_thermal));
  EXPECT_FALSE(recording::throttle_reason_bit("hot").has_value());
  // 0x1 | 0x4 | 0x1000 (no name) -> two names and the rest in hex.
  EXPECT_EQ(recording::throttle_reason_names(0x1005),
            (std::vector<std::string>{"gpu_idle", "sw_power_cap", "0x1000"}));
  EXPECT_TRUE(recording::throttle_reason_names(0).empty());
}

}  // namespace
}  // namespace diescope

namespace diescope {
namespace {

TEST(RecordingRoundTrip, FuzzSeedsAreValidRecordings) {
  // The fuzzer starts from these; a seed that does not read would waste its time.
  const std::filesystem::path corpus = std::filesystem::path(DIESCOPE_SOURCE_DIR) / "fuzz/corpus";
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(corpus)) {
    SCOPED_TRACE(entry.path().string());
    const auto r = recording::open_recording(entry.path());
    EXPECT_NO_THROW(testing::read_everything(*r));
    EXPECT_FALSE(r->side().truncated);
    ++files;
  }
  EXPECT_GE(files, 1);
}

}  // namespace
}  // namespace diescope

namespace diescope {
namespace {

TEST(RecordingRoundTrip, DocumentedExampleReads) {
  // docs/recording-format.md shows other tools how to write a recording; its example must read.
  const std::string doc =
      testing::read_bytes(std::filesystem::path(DIESCOPE_SOURCE_DIR) / "docs/recording-format.md");
  const std::size_t section = doc.find("## Example");
  ASSERT_NE(section, std::string::npos);
  const std::size_t begin = doc.find("```text\n", section);
  ASSERT_NE(begin, std::string::npos);
  const std::size_t end = doc.find("```", begin + 8);
  ASSERT_NE(end, std::string::npos);
  testing::TempDir dir;
  testing::write_bytes(dir / "example.dsrec", doc.substr(begin + 8, end - begin - 8));
  const auto r = recording::open_recording(dir / "example.dsrec");
  EXPECT_EQ(r->meta().units.size(), 2u);
  EXPECT_EQ(r->meta().engines.size(), 1u);
  long chips = 0;
  recording::ChipSample c;
  auto s = r->stream<recording::ChipSample>();
  ASSERT_TRUE(s->next(c));
  EXPECT_EQ(c.end_ns - c.start_ns, 614'150'000);  // the setup sample
  for (chips = 1; s->next(c);) ++chips;
  EXPECT_EQ(chips, 4);
  long utils = 0;
  recording::UtilSample u;
  for (auto us = r->stream<recording::UtilSample>(); us->next(u);) ++utils;
  EXPECT_EQ(utils, 3);
  testing::read_everything(*r);
  EXPECT_EQ(r->side().marks.size(), 2u);
  EXPECT_EQ(r->side().clock_jumps.size(), 1u);
  ASSERT_TRUE(r->side().end.has_value());
  EXPECT_FALSE(r->side().truncated);
}

}  // namespace
}  // namespace diescope

namespace diescope {
namespace {

TEST(RecordingRoundTrip, WholeNumbersOfEveryLength) {
  // The reader parses integers eight digits at a time where it can: check every length from 1 to
  // 19 digits, both signs, against the writer's std::to_chars text.
  testing::TempDir dir;
  const recording::RecordingMeta meta = testing::small_meta();
  const auto path = dir / "ints.dsrec";
  std::vector<recording::ClockJump> jumps;
  std::uint64_t state = 12345;
  auto next = [&] {
    state += 0x9E3779B97F4A7C15ULL;
    std::uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  };
  recording::TimeNs ts = -4'000'000'000'000'000'000;
  for (int digits = 1; digits <= 19; ++digits) {
    for (int k = 0; k < 40; ++k) {
      std::uint64_t bound = 1;
      for (int d = 0; d < digits; ++d) bound *= 10;  // 10^19 still fits in 64 unsigned bits
      auto v = static_cast<std::int64_t>(next() % (digits == 19 ? (std::uint64_t{1} << 63) : bound));
      if (k % 2 == 1) v = -v;
      ts += static_cast<recording::TimeNs>(next() % 1'000'000'000'000'000);
      jumps.push_back({ts, v});
    }
  }
  jumps.push_back({ts, INT64_MAX});
  jumps.push_back({ts, INT64_MIN});
  {
    recording::RecordingWriter w(path, meta);
    for (const recording::ClockJump& j : jumps) w.write(j);
  }
  const auto r = recording::open_recording(path);
  ASSERT_EQ(r->side().clock_jumps.size(), jumps.size());
  for (std::size_t i = 0; i < jumps.size(); ++i) {
    EXPECT_EQ(r->side().clock_jumps[i].ts_ns, jumps[i].ts_ns) << i;
    EXPECT_EQ(r->side().clock_jumps[i].step_ns, jumps[i].step_ns) << i;
  }
}

TEST(RecordingRoundTrip, ChipValuesOfEveryShapeReadBackEqual) {
  // The reader takes a chip line's values in the writer's own shapes ([-]I[.F][e(+|-)X], up to seven
  // digits each side and a power of ten up to 22) without std::from_chars, and everything else
  // through it. Each value the writer prints (shortest round trip) must read back as the very
  // double written, sign of zero and NaN included, in either path and at every position in a line.
  testing::TempDir dir;
  const recording::RecordingMeta meta = testing::small_meta();  // 2 units, 1 diagnostic, 1 count
  std::uint64_t state = 99;
  auto next = [&] {
    state += 0x9E3779B97F4A7C15ULL;
    std::uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  };
  auto pow10 = [](int k) {
    double p = 1;
    for (int i = 0; i < k; ++i) p *= 10;
    return p;
  };
  // One value of shape `shape`: whole numbers, two- and seven-place decimals, counts such as
  // 1.711e+10, tiny ones such as 5e-07, eight digits (the general path), powers beyond 10^22, any
  // double at all, and the special values.
  auto value = [&](std::uint64_t shape) -> double {
    const double sign = next() % 3 == 0 ? -1.0 : 1.0;
    switch (shape % 9) {
      case 0:
        return sign * static_cast<double>(next() % 10'000'000);
      case 1:
        return sign * static_cast<double>(next() % 1'000'000) / 100;
      case 2:
        return sign * static_cast<double>(next() % 100'000'000'000'000ULL) / 1e7;
      case 3:
        return sign * static_cast<double>(1 + next() % 9999) * pow10(static_cast<int>(6 + next() % 17));
      case 4:
        return sign * static_cast<double>(1 + next() % 999) / pow10(static_cast<int>(4 + next() % 18));
      case 5:
        return sign * static_cast<double>(10'000'000 + next() % 90'000'000) / 1e3;
      case 6:
        return sign * static_cast<double>(1 + next() % 99) * 1e25;
      case 7: {
        double d;
        std::uint64_t bits = next();
        std::memcpy(&d, &bits, sizeof d);
        return std::isfinite(d) ? d : 1.0;
      }
      default: {
        const double special[] = {0.0,
                                  -0.0,
                                  kNaN,
                                  std::numeric_limits<double>::denorm_min(),
                                  std::numeric_limits<double>::max(),
                                  1e22,
                                  1e23,
                                  9999999.9999999};
        return special[next() % 8];
      }
    }
  };
  std::vector<recording::OwnedChipSample> written;
  recording::TimeNs t = meta.start_ns;
  for (int i = 0; i < 4000; ++i) {
    recording::OwnedChipSample c;
    c.start_ns = t;
    c.end_ns = t += 10'000'000;
    // Most lines hold one shape throughout; every fourth mixes them, so each path meets the other.
    const std::uint64_t shape = next();
    auto one = [&] { return value(i % 4 == 3 ? next() : shape); };
    c.units = {one(), one()};
    c.diagnostics = {one()};
    c.counts = {one()};
    written.push_back(c);
  }
  const auto path = dir / "shapes.dsrec";
  {
    recording::RecordingWriter w(path, meta);
    for (const recording::OwnedChipSample& c : written) w.write(c);
  }
  const auto r = recording::open_recording(path);
  auto chip = r->stream<recording::ChipSample>();
  recording::ChipSample c;
  for (std::size_t i = 0; i < written.size(); ++i) {
    ASSERT_TRUE(chip->next(c)) << i;
    const std::vector<double> got[] = {{c.units.begin(), c.units.end()},
                                       {c.diagnostics.begin(), c.diagnostics.end()},
                                       {c.counts.begin(), c.counts.end()}};
    const std::vector<double>* want[] = {&written[i].units, &written[i].diagnostics, &written[i].counts};
    for (std::size_t k = 0; k < 3; ++k) {
      ASSERT_EQ(got[k].size(), want[k]->size());
      for (std::size_t j = 0; j < got[k].size(); ++j)
        EXPECT_TRUE(same_value(got[k][j], (*want[k])[j]))
            << "line " << i + 3 << " column " << k << "." << j << ": wrote " << (*want[k])[j] << ", read "
            << got[k][j];
    }
  }
  EXPECT_FALSE(chip->next(c));
}

TEST(RecordingRoundTrip, ChipValuesInOtherToolsShapesReadAsStdFromCharsReadsThem) {
  // Shapes the writer never prints take the general path: a leading '+' is refused as std::from_chars
  // refuses it, exponents without a sign, uppercase, leading zeros, spaces and tabs anywhere between
  // fields read as from_chars reads them.
  TempDir dir;
  const auto r = recording::open_recording(
      testing::small_recording(dir, "shapes.dsrec",
                               "chip 100 200 1E3 2e5 0007.50 .5\n"
                               "chip 200 300  1.5e+3\t-0.0 1234567.1234567   12345678.5 \n"
                               "chip 300 400 1e-7 5e+22 5e+23 123456789012345678901234567890\n"));
  auto chip = r->stream<recording::ChipSample>();
  recording::ChipSample c;
  ASSERT_TRUE(chip->next(c));
  EXPECT_EQ(c.units[0], 1000);
  EXPECT_EQ(c.units[1], 200000);
  EXPECT_EQ(c.diagnostics[0], 7.5);
  EXPECT_EQ(c.counts[0], 0.5);
  ASSERT_TRUE(chip->next(c));
  EXPECT_EQ(c.units[0], 1500);
  EXPECT_TRUE(c.units[1] == 0 && std::signbit(c.units[1]));
  EXPECT_EQ(c.diagnostics[0], 1234567.1234567);
  EXPECT_EQ(c.counts[0], 12345678.5);
  ASSERT_TRUE(chip->next(c));
  EXPECT_EQ(c.units[0], 1e-7);
  EXPECT_EQ(c.units[1], 5e22);
  EXPECT_EQ(c.diagnostics[0], 5e23);
  const std::string_view long_text = "123456789012345678901234567890";
  double long_value = 0;
  std::from_chars(long_text.data(), long_text.data() + long_text.size(), long_value);
  EXPECT_EQ(c.counts[0], long_value);
  EXPECT_FALSE(chip->next(c));

  const auto bad =
      recording::open_recording(testing::small_recording(dir, "plus.dsrec", "chip 100 200 1 2 +3 4\n"));
  auto bad_chip = bad->stream<recording::ChipSample>();
  try {
    bad_chip->next(c);
    ADD_FAILURE() << "a '+' sign was read";
  } catch (const core::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("the value of diagnostic"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'+3' is not a number"), std::string::npos) << e.what();
  }
}

TEST(RecordingRoundTrip, LinesOfEveryLengthAndAlignmentReadBack) {
  // The reader finds line ends 64 bytes at a time: notes of every length from 1 to 300 bytes, some
  // ending in CRLF, put a line end at every position of those 64 bytes and across a window's end.
  TempDir dir;
  const recording::RecordingMeta meta = small_meta();
  std::string text = testing::header_for(meta, dir);
  std::vector<std::string> texts;
  for (std::size_t n = 1; n <= 300; ++n) {
    std::string t;
    for (std::size_t i = 0; i < n; ++i) t += static_cast<char>('a' + (i + n) % 26);
    texts.push_back(t);
    text += "note " + std::to_string(meta.start_ns + static_cast<recording::TimeNs>(n)) + " topic " + t +
            (n % 7 == 0 ? "\r\n" : "\n");
  }
  const auto path = dir / "lengths.dsrec";
  testing::write_bytes(path, text);
  const auto r = recording::open_recording(path);
  ASSERT_EQ(r->side().notes.size(), texts.size());
  for (std::size_t i = 0; i < texts.size(); ++i) EXPECT_EQ(r->side().notes[i].text, texts[i]) << i;
  EXPECT_EQ(r->side().complete_lines, static_cast<long>(2 + texts.size()));
  EXPECT_FALSE(r->side().truncated);
}

TEST(RunEndingText, KnownWaysParseAndEveryTextPrintsBackAsItWas) {
  EXPECT_EQ(recording::parse_run_ending(""), recording::RunEnding{});
  EXPECT_EQ(recording::parse_run_ending("exited"), recording::RunEnding::exit());
  EXPECT_EQ(recording::parse_run_ending("signal SIGINT"), recording::RunEnding::killed_by(SIGINT));
  EXPECT_EQ(recording::parse_run_ending("period end"), recording::RunEnding::period_end());
  EXPECT_EQ(recording::parse_run_ending("replay end").way, recording::RunEnding::Way::other);
  EXPECT_EQ(recording::parse_run_ending("signal SIGNOPE").way,
            recording::RunEnding::Way::other);  // no such signal
  EXPECT_EQ(recording::parse_run_ending("exited ").way, recording::RunEnding::Way::other);
  EXPECT_EQ(run_ending_text(recording::RunEnding::killed_by(SIGTERM)), "signal SIGTERM");
  for (const char* text : {"", "exited", "signal SIGINT", "signal SIGSEGV", "period end", "replay end",
                           "signal SIGNOPE", "signal signal 99", "signal SIGINT\nthen exit", "Exited"})
    EXPECT_EQ(run_ending_text(recording::parse_run_ending(text)), text) << text;
}

}  // namespace
}  // namespace diescope
