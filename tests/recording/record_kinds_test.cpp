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

static_assert(recording::kKindCount == 16);
static_assert(recording::kind_index<recording::ChipSample> == 0);
static_assert(recording::kind_index<recording::ProcessReading> == 6);
static_assert(recording::kind_index<recording::HostSample> == 7);
static_assert(recording::kind_index<recording::Mark> == 8);
static_assert(recording::kind_index<recording::HostStream> == 12);
static_assert(recording::kind_index<recording::GpuHolder> == 14);
static_assert(recording::kind_index<recording::RunEnd> == 15);
static_assert(recording::kind_index<recording::Mark, recording::SideKinds> == 0);
static_assert(recording::is_stream_kind<recording::EngineReading> &&
              !recording::is_stream_kind<recording::Note>);
static_assert(recording::is_record_kind<recording::ClockJump> &&
              !recording::is_record_kind<recording::OwnedChipSample>);
static_assert(std::is_same_v<recording::Owned<recording::ChipSample>, recording::OwnedChipSample> &&
              std::is_same_v<recording::Owned<recording::UtilSample>, recording::UtilSample>);

TEST(RecordKinds, WordsFollowTheFormatsTableOfRecords) {
  const std::vector<std::string_view> words(recording::kKindWords.begin(), recording::kKindWords.end());
  EXPECT_EQ(words, (std::vector<std::string_view>{"chip", "util", "clock", "throttle", "power", "engine",
                                                  "proc", "host", "mark", "counters", "note", "jump",
                                                  "hstream", "task", "holder", "end"}));
}

TEST(RecordKinds, WalksVisitEachKindInOrder) {
  std::string side;
  recording::for_each_kind<recording::SideKinds>(
      [&]<typename Record>(std::type_identity<Record>) { side += std::string(Record::kKindWord) + " "; });
  EXPECT_EQ(side, "mark counters note jump hstream task holder end ");

  std::string at;
  recording::with_kind_at<recording::RecordKinds>(
      3, [&]<typename Record>(std::type_identity<Record>) { at += Record::kKindWord; });
  EXPECT_EQ(at, "throttle");
  recording::with_kind_at<recording::RecordKinds>(recording::kKindCount,
                                                  [&](auto) { at += "?"; });  // past the list: nothing
  EXPECT_EQ(at, "throttle");
}

TEST(RecordKinds, OwningFormsCopyTheValuesAndViewThemBack) {
  const std::vector<double> units{1, 2}, diagnostics{3}, counts{};
  const recording::ChipSample view{100, 110, units, diagnostics, counts};
  const recording::OwnedChipSample owned = owned_copy(view);
  EXPECT_EQ(owned.units, units);
  EXPECT_EQ(owned.diagnostics, diagnostics);
  const recording::ChipSample back = view_of(owned);
  EXPECT_EQ(back.units.data(), owned.units.data());  // a view into the copy
  EXPECT_EQ(order_time(back), 100);
  EXPECT_EQ(last_time(back), 110);
  EXPECT_EQ(order_time(recording::UtilSample{42, 50, recording::UtilSource::samples}), 42);
}

TEST(RecordKinds, SinkTakesAnOwningFormAsItsRecord) {
  recording::MemoryRecording rec;
  rec.meta_data.start_ns = 50;
  recording::MemorySink sink(rec);
  recording::RecordSink& any = sink;
  any.write(recording::OwnedChipSample{100, 110, {7}, {}, {}});
  any.write(recording::OwnedEngineReading{105, {9}});
  any.write(recording::Mark{101, recording::MarkKind::start});
  ASSERT_EQ(rec.list<recording::ChipSample>().size(), 1u);
  EXPECT_EQ(rec.list<recording::ChipSample>()[0].units, std::vector<double>{7});
  ASSERT_EQ(rec.list<recording::EngineReading>().size(), 1u);
  EXPECT_EQ(rec.list<recording::EngineReading>()[0].values, std::vector<double>{9});
  EXPECT_EQ(&rec.side_records.list<recording::Mark>(), &rec.side_records.marks);
  ASSERT_EQ(rec.side_records.marks.size(), 1u);
  EXPECT_EQ(rec.side_records.last_ts_ns, 110);        // the chip sample's end
  EXPECT_EQ(rec.side_records.complete_lines, 2 + 3);  // two header lines, three records

  recording::EngineReading e;
  auto engines = rec.stream<recording::EngineReading>();
  ASSERT_TRUE(engines->next(e));
  EXPECT_EQ(e.ts_ns, 105);
  EXPECT_EQ(e.values[0], 9);
  EXPECT_FALSE(engines->next(e));
}

}  // namespace
}  // namespace diescope
