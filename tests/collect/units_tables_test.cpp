// The unit tables' invariants and the column arithmetic, with expected values worked by hand.
#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <set>

#include "diescope/collect/unit_tables.hpp"
#include "diescope/core/error.hpp"
#include "diescope/metrics/name.hpp"

namespace diescope::collect {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

TEST(UnitTables, EachChipInAtMostOneTableAndKeysUniqueWithinATable) {
  std::set<std::string> chips;
  std::set<std::string> names;
  for (const auto& table : unit_tables()) {
    EXPECT_TRUE(names.insert(table.name).second) << "table name twice: " << table.name;
    EXPECT_FALSE(table.chips.empty()) << table.name;
    EXPECT_FALSE(table.compute_capabilities.empty()) << table.name;
    EXPECT_FALSE(table.note.empty()) << table.name;
    for (const auto& chip : table.chips) EXPECT_TRUE(chips.insert(chip).second) << chip << " in two tables";
    std::set<std::string> keys;
    for (const auto* columns : {&table.units, &table.diagnostics, &table.counts}) {
      for (const auto& c : *columns) {
        EXPECT_TRUE(keys.insert(c.key).second) << table.name << ": key " << c.key << " twice";
        EXPECT_FALSE(c.label.empty()) << c.key;
        EXPECT_FALSE(c.note.empty()) << table.name << "/" << c.key << " has no note";
      }
    }
  }
}

TEST(UnitTables, RecipesAreOneCounterOrTheMeanOfTwoReadAsPercentOfPeak) {
  for (const auto& table : unit_tables()) {
    for (const auto* columns : {&table.units, &table.diagnostics}) {
      for (const auto& c : *columns) {
        const std::size_t want = c.recipe.combine == recording::UnitRecipe::Combine::mean ? 2 : 1;
        ASSERT_EQ(c.recipe.counters.size(), want) << table.name << "/" << c.key;
        EXPECT_EQ(c.unit, "pct") << c.key;
        for (const auto& counter : c.recipe.counters) {
          const bool pct = ends_with(counter, ".avg.pct_of_peak_sustained_elapsed") ||
                           counter == "dram__bytes.sum.pct_of_peak_sustained_elapsed";
          EXPECT_TRUE(pct) << table.name << "/" << c.key << ": " << counter;
        }
      }
    }
    for (const auto& c : table.counts) {
      EXPECT_EQ(c.unit, "bytes") << c.key;
      ASSERT_EQ(c.recipe.counters.size(), 1u);
      EXPECT_EQ(c.recipe.counters[0], "dram__bytes.sum");
    }
  }
}

TEST(UnitTables, EveryNameFollowsTheMetricGrammar) {
  for (const auto& table : unit_tables()) {
    for (const auto& name : table_metrics(table)) {
      auto parsed = metrics::parse_metric_name(name);
      EXPECT_TRUE(parsed.ok()) << table.name << ": " << name << ": " << (parsed.ok() ? "" : parsed.reason());
    }
    for (const auto* columns : {&table.units, &table.diagnostics, &table.counts}) {
      for (const auto& c : *columns) EXPECT_TRUE(metrics::parse_metric_name(c.metric).ok()) << c.metric;
    }
  }
}

TEST(UnitTables, EveryArchitectureTheMethodNamesIsCovered) {
  // The method's tables (Ampere, Ada, Blackwell, Turing) plus Hopper, by a chip of each.
  EXPECT_EQ(unit_table_for_chip("GH100")->name, "hopper-gh100");
  EXPECT_EQ(unit_table_for_chip("GB205")->name, "blackwell-gb20x");
  EXPECT_EQ(unit_table_for_chip("AD102")->name, "ada-ad10x");
  EXPECT_EQ(unit_table_for_chip("GA104")->name, "ampere-ga10x");
  EXPECT_EQ(unit_table_for_chip("GA100")->name, "ampere-ga100");
  EXPECT_EQ(unit_table_for_chip("TU104")->name, "turing-tu10x");
  EXPECT_EQ(unit_table_for_chip("GV100"), nullptr);  // Volta: PM sampling starts at Turing
  EXPECT_EQ(unit_table_for_chip("gh100"), nullptr);  // CUPTI's names are case-sensitive
  EXPECT_EQ(unit_table_by_name("hopper-gh100")->architecture, "Hopper");
}

TEST(UnitTables, ChipOfAComputeCapabilityOnlyWhenItsTableListsOne) {
  EXPECT_EQ(unit_table_for_compute_capability(90)->name, "hopper-gh100");
  EXPECT_EQ(chip_for_compute_capability(90), "GH100");  // Hopper's table: GH100 alone
  EXPECT_EQ(chip_for_compute_capability(80), "GA100");  // Ampere's data-centre table: GA100 alone
  EXPECT_EQ(chip_for_compute_capability(120), "");      // Blackwell's: five chips, none guessed
  EXPECT_EQ(unit_table_for_compute_capability(70), nullptr);
  EXPECT_EQ(chip_for_compute_capability(70), "");  // Volta: no table
}

TEST(UnitTables, DiagnosticsTheMethodAsksForWhereTheyFit) {
  auto keys = [](const std::vector<recording::ColumnDef>& columns) {
    std::set<std::string> out;
    for (const auto& c : columns) out.insert(c.key);
    return out;
  };
  // SM active and occupancy everywhere; FMA halves and DRAM throughput on Ampere GA10x, Ada and
  // Blackwell; Hopper drops the halves (they fit its pass but made the decoder cost a third of a CPU
  // core); Turing has neither (they do not fit its pass).
  for (const auto& table : unit_tables()) {
    auto d = keys(table.diagnostics);
    EXPECT_TRUE(d.count("sm_active") && d.count("occupancy")) << table.name;
  }
  EXPECT_EQ(keys(unit_table_by_name("hopper-gh100")->diagnostics),
            (std::set<std::string>{"sm_active", "occupancy", "dram_throughput"}));
  for (const char* name : {"blackwell-gb20x", "ada-ad10x", "ampere-ga10x"}) {
    auto d = keys(unit_table_by_name(name)->diagnostics);
    EXPECT_EQ(d,
              (std::set<std::string>{"sm_active", "occupancy", "fma_heavy", "fma_lite", "dram_throughput"}))
        << name;
  }
  EXPECT_EQ(keys(unit_table_by_name("turing-tu10x")->diagnostics),
            (std::set<std::string>{"sm_active", "occupancy"}));
}

TEST(UnitTables, FlagsFollowTheMethod) {
  auto unit = [](const char* table, const char* key) -> const recording::ColumnDef& {
    for (const auto& c : unit_table_by_name(table)->units)
      if (c.key == key) return c;
    throw std::runtime_error(std::string("no unit ") + key + " in " + table);
  };
  // Turing's Tensor+FP16 and DRAM (fbpa) measure something else; Load/store is a stand-in everywhere,
  // and on Hopper also a different measure (it leaves shared memory out, because Hopper's whole-pipe
  // counter counts wgmma operand reads); Hopper's group-qualified forms, checked, carry none.
  EXPECT_EQ(unit("turing-tu10x", "tensor_fp16").flags,
            std::vector<recording::UnitFlag>{recording::UnitFlag::different_measure});
  EXPECT_EQ(unit("turing-tu10x", "dram").flags,
            std::vector<recording::UnitFlag>{recording::UnitFlag::different_measure});
  for (const auto& table : unit_tables()) {
    const auto expected = table.name == "hopper-gh100"
                              ? std::vector<recording::UnitFlag>{recording::UnitFlag::stand_in_counter,
                                                                 recording::UnitFlag::different_measure}
                              : std::vector<recording::UnitFlag>{recording::UnitFlag::stand_in_counter};
    EXPECT_EQ(unit(table.name.c_str(), "ldst").flags, expected) << table.name;
  }
  for (const auto& c : unit_table_by_name("hopper-gh100")->units) {
    const bool grouped = c.recipe.counters.front().find("TriageCompute.") != std::string::npos;
    if (grouped) {
      // Checked on the H200 against the plain counters: no flag
      // (bench/results/units/2026-11-29-h200-every-unit/).
      EXPECT_TRUE(c.flags.empty()) << c.key;
    }
    if (c.key == "tensor" || c.key == "l2" || c.key == "dram") {
      EXPECT_TRUE(c.flags.empty()) << c.key;
    }
  }
  EXPECT_TRUE(unit("ampere-ga10x", "fp32").flags.empty());
  EXPECT_TRUE(unit("ampere-ga10x", "dram").flags.empty());
}

TEST(UnitTables, TableMetricsListsEachCounterOnce) {
  // Ampere GA10x: units fp32 (heavy, lite), tensor, fp64, ldst, l2, dram = 7 counters; diagnostics
  // sm_active, occupancy, fma_heavy (= heavy, already listed), fma_lite (= lite), dram_throughput
  // = 3 new; counts dram__bytes.sum = 1 new. 7 + 3 + 1 = 11.
  const auto metrics = table_metrics(*unit_table_by_name("ampere-ga10x"));
  EXPECT_EQ(metrics.size(), 11u);
  EXPECT_EQ(metrics.front(), "sm__inst_executed_pipe_fmaheavy_realtime.avg.pct_of_peak_sustained_elapsed");
  EXPECT_EQ(metrics.back(), "dram__bytes.sum");
  // Hopper: 7 units, 3 diagnostics, 1 count, no counter shared: 11.
  EXPECT_EQ(table_metrics(*unit_table_by_name("hopper-gh100")).size(), 11u);
}

TEST(UnitTables, ApplyFillsTheRecordingMeta) {
  recording::RecordingMeta meta;
  const UnitTable& table = *unit_table_by_name("hopper-gh100");
  apply_unit_table(table, meta);
  EXPECT_EQ(meta.unit_table, "hopper-gh100");
  ASSERT_EQ(meta.units.size(), table.units.size());
  EXPECT_EQ(meta.units[0].key, "fp32");
  EXPECT_EQ(meta.diagnostics.size(), 3u);
  EXPECT_EQ(meta.counts.at(0).key, "dram_bytes");
}

TEST(ColumnEvaluator, CountersAndMeansInColumnOrder) {
  const UnitTable& table = *unit_table_by_name("ampere-ga10x");
  ColumnEvaluator evaluator(table);
  // Values in table_metrics order: heavy 80, lite 40, tensor 5, fp64 2, ldst 12, l2 30, dram% 60,
  // sm 99, occupancy 50, dram throughput 70, dram bytes 1e9.
  const std::vector<double> values = {80, 40, 5, 2, 12, 30, 60, 99, 50, 70, 1e9};
  ColumnValues out;
  evaluator.evaluate(values, out);
  // fp32 = (80 + 40) / 2 = 60.
  EXPECT_EQ(out.units, (std::vector<double>{60, 5, 2, 12, 30, 60}));
  EXPECT_EQ(out.diagnostics, (std::vector<double>{99, 50, 80, 40, 70}));
  EXPECT_EQ(out.counts, (std::vector<double>{1e9}));
}

TEST(ColumnEvaluator, HalfAMeanIsNotAReading) {
  const UnitTable& table = *unit_table_by_name("ampere-ga10x");
  ColumnEvaluator evaluator(table);
  std::vector<double> values = {kNaN, 40, 5, 2, 12, 30, 60, 99, 50, 70, kNaN};
  ColumnValues out;
  evaluator.evaluate(values, out);
  EXPECT_TRUE(std::isnan(out.units[0]));        // mean(NaN, 40)
  EXPECT_EQ(out.units[1], 5);                   // the rest are read
  EXPECT_TRUE(std::isnan(out.diagnostics[2]));  // FMA heavy itself
  EXPECT_EQ(out.diagnostics[3], 40);
  EXPECT_TRUE(std::isnan(out.counts[0]));
}

TEST(ColumnEvaluator, AnyMetricOrderAndClearErrors) {
  const UnitTable& table = *unit_table_by_name("turing-tu10x");
  std::vector<std::string> order = table_metrics(table);
  std::reverse(order.begin(), order.end());
  ColumnEvaluator evaluator(table, order);
  std::vector<double> values(order.size());
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i);
  ColumnValues out;
  evaluator.evaluate(values, out);
  // Turing's first unit (fp32) is the first table counter, now last of 9: value 8.
  EXPECT_EQ(out.units[0], 8);
  EXPECT_EQ(out.counts[0], 0);  // dram__bytes.sum is last of 9 in table order, so first reversed

  order.pop_back();
  EXPECT_THROW(ColumnEvaluator(table, order), core::Error);
  EXPECT_THROW(evaluator.evaluate(std::vector<double>(3, 0.0), out), core::Error);
}

}  // namespace
}  // namespace diescope::collect
