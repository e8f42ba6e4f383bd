// The tidy CSV: `name [unit]` headers, round trip, and bad tables named by file:line.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "diescope/core/error.hpp"
#include "diescope/roofline/csv.hpp"
#include "fixtures.hpp"

namespace diescope::roofline {
namespace {

using test::fixture_rows;

TEST(Csv, TableWithoutProfilerColumnIsNcus) {
  // A table written before the range backend: the same columns, no profiler.
  const auto rows = fixture_rows("h200-gemm.raw.csv", "gemm");
  std::string text = table_csv(rows);
  std::string old;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t end = text.find('\n', pos);
    const std::string line = text.substr(pos, end - pos);
    old += line.substr(line.find(',') + 1) + "\n";  // drop the first (profiler) field
    pos = end + 1;
  }
  const auto back = parse_table_csv(old, "old.csv");
  ASSERT_EQ(back.size(), rows.size());
  for (const Row& r : back) EXPECT_EQ(r.profiler, Profiler::ncu);
}

TEST(Csv, TableWithoutCachesColumnReadsAsNotRecorded) {
  // docs/roofline.md#the-table: a table written before the caches were recorded.
  auto rows = fixture_rows("h200-gemm.raw.csv", "gemm");
  rows[0].caches = "unflushed";
  const std::string text = table_csv(rows);
  const std::string header = text.substr(0, text.find('\n'));
  const std::size_t col = header.find(",caches,");
  ASSERT_NE(col, std::string::npos) << header;
  // The column's index, then that field dropped from every line (no field before it holds a comma).
  const auto index_of = static_cast<std::size_t>(std::count(header.begin(), header.begin() + col, ',')) + 1;
  std::string old;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t end = text.find('\n', pos);
    std::vector<std::string> fields;
    std::string line = text.substr(pos, end - pos), field;
    bool quoted = false;
    for (char ch : line) {
      if (ch == '"') quoted = !quoted;
      if (ch == ',' && !quoted) {
        fields.push_back(field);
        field.clear();
      } else {
        field += ch;
      }
    }
    fields.push_back(field);
    fields.erase(fields.begin() + static_cast<std::ptrdiff_t>(index_of));
    std::string joined;
    for (const auto& f : fields) joined += (joined.empty() ? "" : ",") + f;
    old += joined + "\n";
    pos = end + 1;
  }
  const auto back = parse_table_csv(old, "old.csv");
  ASSERT_EQ(back.size(), rows.size());
  for (const Row& r : back) EXPECT_EQ(r.caches, "");
  // With the column, the value comes back.
  const auto again = parse_table_csv(text, "new.csv");
  EXPECT_EQ(again[0].caches, "unflushed");
  EXPECT_EQ(again[1].caches, "");
  // Any other state is named with the line it is on (the header is line 1, row 0 line 2).
  std::string bad = text;
  bad.replace(bad.find(",unflushed,"), 11, ",kept,");
  try {
    parse_table_csv(bad, "bad.csv");
    FAIL() << "a table with caches \"kept\" was read";
  } catch (const core::InputError& e) {
    EXPECT_NE(
        std::string(e.what()).find("bad.csv:2: column \"caches\" holds \"kept\", not flushed, unflushed, "
                                   "program or empty"),
        std::string::npos)
        << e.what();
  }
}

TEST(Csv, HeadersCarryUnitsAndTheTableRoundTrips) {
  auto rows = fixture_rows("h200-gemm.raw.csv", "gemm");
  rows[3].region = "step, \"warm\"";  // a comma and quotes survive
  rows[3].driver = "580.159.04";
  const std::string text = table_csv(rows);
  const std::string header = text.substr(0, text.find('\n'));
  EXPECT_EQ(
      header.rfind(
          "profiler,executable,kernel,launch [id],region,grid,block,launches,gpu,driver,duration [s],", 0),
      0u)
      << header;
  EXPECT_NE(header.find("work tensor bf16 [FLOP]"), std::string::npos);
  EXPECT_NE(header.find("work tensor int8 [OP]"), std::string::npos);
  EXPECT_NE(header.find("bytes dram [B]"), std::string::npos);
  EXPECT_NE(header.find("intensity dram [FLOP/B]"), std::string::npos);
  EXPECT_NE(header.find("of roof [%]"), std::string::npos);

  rows[2].profiler = Profiler::range;
  const auto back = parse_table_csv(table_csv(rows), "t.csv");
  ASSERT_EQ(back.size(), rows.size());
  EXPECT_EQ(back[0].profiler, Profiler::ncu);
  EXPECT_EQ(back[2].profiler, Profiler::range);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(back[i].kernel, rows[i].kernel);
    EXPECT_EQ(back[i].region, rows[i].region);
    EXPECT_EQ(back[i].launch, rows[i].launch);
    EXPECT_EQ(back[i].grid, rows[i].grid);
    EXPECT_EQ(back[i].driver, rows[i].driver);
    EXPECT_EQ(back[i].duration_s, rows[i].duration_s);
    EXPECT_EQ(back[i].sm_hz, rows[i].sm_hz);
    for (Precision p : kAllPrecisions) {
      EXPECT_EQ(std::isnan(back[i].flop[index(p)]), std::isnan(rows[i].flop[index(p)]));
      if (!std::isnan(rows[i].flop[index(p)])) {
        EXPECT_EQ(back[i].flop[index(p)], rows[i].flop[index(p)]);
      }
    }
    for (Level l : kAllLevels) EXPECT_EQ(back[i].bytes[index(l)], rows[i].bytes[index(l)]);
  }
  // Written again, the same bytes: nothing derived was read back.
  EXPECT_EQ(table_csv(back), table_csv(rows));
}

TEST(Csv, EnergyRoundTripsAndABadSourceIsAnError) {
  // docs/roofline.md#energy: 20 J over the row's FLOPs (tables written before it, the bundled ones,
  // have neither column and read in the other tests).
  auto rows = fixture_rows("h200-gemm.raw.csv", "gemm");
  ASSERT_FALSE(rows.empty());
  rows[0].energy_j = 20;
  rows[0].energy_source = "counter";
  const std::string text = table_csv(rows);
  EXPECT_NE(text.find(",energy [J],energy source,"), std::string::npos);
  EXPECT_NE(text.find(",joules per tflop [J/TFLOP]"), std::string::npos);
  const auto back = parse_table_csv(text, "t.csv");
  EXPECT_DOUBLE_EQ(back[0].energy_j, 20);
  EXPECT_EQ(back[0].energy_source, "counter");
  EXPECT_NEAR(joules_per_tflop(back[0]), 20 / (dominant_flop(rows[0]) / 1e12), 1e-9);
  std::string bad = text;
  bad.replace(bad.find(",counter,"), 9, ",joules,");
  EXPECT_THROW(parse_table_csv(bad, "bad.csv"), core::InputError);
}

TEST(Csv, DerivedColumnsAreWrittenForPeople) {
  const auto rows = fixture_rows("h200-triad.raw.csv", "triad");
  const std::string text = table_csv({rows[0]});
  const std::string line = text.substr(text.find('\n') + 1);
  // precision, then the three intensities: 2^29 FLOP over 3,208,256,768 dram bytes
  EXPECT_NE(line.find(",fp32," + fmt::format("{}", 536870912.0 / 3208256768.0) + ","), std::string::npos)
      << line;
  EXPECT_NE(line.find("dram (counter peak)"), std::string::npos);
}

TEST(Csv, ATruncatedTableNamesTheFileAndLine) {
  const auto rows = fixture_rows("h200-dfma.raw.csv", "dfma");
  std::string text = table_csv(rows);
  text.resize(text.size() - 30);
  try {
    parse_table_csv(text, "a.csv");
    FAIL() << "no error";
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.cause().rfind("a.csv:4: the file ends in the middle of this line", 0), 0u) << e.cause();
  }
}

TEST(Csv, AMalformedCellNamesItsColumn) {
  std::string text = table_csv(fixture_rows("h200-dfma.raw.csv", "dfma"));
  const std::size_t second = text.find('\n') + 1;
  const std::size_t cell = text.find(",\"(132, 1, 1)\"", second);
  ASSERT_NE(cell, std::string::npos);
  // the launches column, after grid and block
  std::string bad = text;
  const std::size_t launches = bad.find(",1,NVIDIA", second);
  ASSERT_NE(launches, std::string::npos);
  bad.replace(launches, 2, ",one");
  try {
    parse_table_csv(bad, "b.csv");
    FAIL() << "no error";
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.line(), 2);
    EXPECT_NE(e.cause().find("column \"launches\" holds \"one\""), std::string::npos) << e.cause();
  }
}

// docs/roofline.md#backends: a row's backend is one of the three; another word is named with its line.
TEST(Csv, AProfilerThatIsNoBackendNamesTheWordsItTakes) {
  std::string text = table_csv(fixture_rows("h200-dfma.raw.csv", "dfma"));
  const std::size_t second = text.find('\n') + 1;
  ASSERT_EQ(text.compare(second, 4, "ncu,"), 0) << text.substr(second, 20);
  text.replace(second, 4, "nsys,");
  try {
    parse_table_csv(text, "p.csv");
    FAIL() << "no error";
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.line(), 2);
    EXPECT_NE(e.cause().find("column \"profiler\" holds \"nsys\", not ncu, range or sampled"),
              std::string::npos)
        << e.cause();
  }
  EXPECT_EQ(profiler_from_name("sampled"), Profiler::sampled);
  EXPECT_EQ(profiler_name(Profiler::range), "range");
  EXPECT_FALSE(profiler_from_name("Range").has_value());
}

TEST(Csv, AnUnknownOrMissingColumnIsAnError) {
  EXPECT_THROW(parse_table_csv("executable,colour\n", "c.csv"), core::InputError);
  EXPECT_THROW(parse_table_csv("executable,kernel\n", "c.csv"), core::InputError);
  EXPECT_THROW(parse_table_csv("", "empty.csv"), core::InputError);
}

TEST(Csv, FieldsSplitWithQuotes) {
  EXPECT_EQ(split_csv_line(R"(a,"b, c","d ""e""",)"), (std::vector<std::string>{"a", "b, c", "d \"e\"", ""}));
  EXPECT_THROW(split_csv_line(R"(a,"b)"), std::invalid_argument);
}

}  // namespace
}  // namespace diescope::roofline
