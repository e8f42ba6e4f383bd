// The list of record kinds (record_kinds.hpp): indices and words in the format's order, the walks
// over the lists, owning forms, and a sink taking an owning form as its record.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "diescope/recording/memory_recording.hpp"
#include "diescope/recording/record_kinds.hpp"
#include "diescope/recording/sink.hpp"

namespace diescope {
namespace {

static_assert(kKindCount == 12);
static_assert(kind_index<ChipSample> == 0);
static_assert(kind_index<ProcessReading> == 6);
static_assert(kind_index<Mark> == 7);
static_assert(kind_index<RunEnd> == 11);
static_assert(kind_index<Mark, SideKinds> == 0);
static_assert(is_stream_kind<EngineReading> && !is_stream_kind<Note>);
static_assert(is_record_kind<ClockJump> && !is_record_kind<OwnedChipSample>);
static_assert(std::is_same_v<Owned<ChipSample>, OwnedChipSample> &&
              std::is_same_v<Owned<UtilSample>, UtilSample>);

TEST(RecordKinds, WordsFollowTheFormatsTableOfRecords) {
  const std::vector<std::string_view> words(kKindWords.begin(), kKindWords.end());
  EXPECT_EQ(words, (std::vector<std::string_view>{"chip", "util", "clock", "throttle", "power", "engine",
                                                  "proc", "mark", "counters", "note", "jump", "end"}));
}

TEST(RecordKinds, WalksVisitEachKindInOrder) {
  std::string side;
  for_each_kind<SideKinds>(
      [&]<typename Record>(std::type_identity<Record>) { side += std::string(Record::kKindWord) + " "; });
  EXPECT_EQ(side, "mark counters note jump end ");

  std::string at;
  with_kind_at<RecordKinds>(3, [&]<typename Record>(std::type_identity<Record>) { at += Record::kKindWord; });
  EXPECT_EQ(at, "throttle");
  with_kind_at<RecordKinds>(kKindCount, [&](auto) { at += "?"; });  // past the list: nothing
  EXPECT_EQ(at, "throttle");
}

TEST(RecordKinds, OwningFormsCopyTheValuesAndViewThemBack) {
  const std::vector<double> units{1, 2}, diagnostics{3}, counts{};
  const ChipSample view{100, 110, units, diagnostics, counts};
  const OwnedChipSample owned = owned_copy(view);
  EXPECT_EQ(owned.units, units);
  EXPECT_EQ(owned.diagnostics, diagnostics);
  const ChipSample back = view_of(owned);
  EXPECT_EQ(back.units.data(), owned.units.data());  // a view into the copy
  EXPECT_EQ(order_time(back), 100);
  EXPECT_EQ(last_time(back), 110);
  EXPECT_EQ(order_time(UtilSample{42, 50, UtilSource::samples}), 42);
}

TEST(RecordKinds, SinkTakesAnOwningFormAsItsRecord) {
  MemoryRecording rec;
  rec.meta_data.start_ns = 50;
  MemorySink sink(rec);
  RecordSink& any = sink;
  any.write(OwnedChipSample{100, 110, {7}, {}, {}});
  any.write(OwnedEngineReading{105, {9}});
  any.write(Mark{101, MarkKind::start});
  ASSERT_EQ(rec.list<ChipSample>().size(), 1u);
  EXPECT_EQ(rec.list<ChipSample>()[0].units, std::vector<double>{7});
  ASSERT_EQ(rec.list<EngineReading>().size(), 1u);
  EXPECT_EQ(rec.list<EngineReading>()[0].values, std::vector<double>{9});
  EXPECT_EQ(&rec.side_records.list<Mark>(), &rec.side_records.marks);
  ASSERT_EQ(rec.side_records.marks.size(), 1u);
  EXPECT_EQ(rec.side_records.last_ts_ns, 110);        // the chip sample's end
  EXPECT_EQ(rec.side_records.complete_lines, 2 + 3);  // two header lines, three records

  EngineReading e;
  auto engines = rec.stream<EngineReading>();
  ASSERT_TRUE(engines->next(e));
  EXPECT_EQ(e.ts_ns, 105);
  EXPECT_EQ(e.values[0], 9);
  EXPECT_FALSE(engines->next(e));
}

}  // namespace
}  // namespace diescope
