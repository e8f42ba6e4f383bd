// The metric catalog is the single source of metric names: every column of every unit table, and
// every counter a recipe reads, must be a catalog entry (so reports can describe it).
#include <gtest/gtest.h>

#include "diescope/collect/unit_tables.hpp"
#include "diescope/metrics/catalog.hpp"

namespace {

void expect_in_catalog(const std::string& table, const std::string& name) {
  auto found = diescope::metrics::lookup_metric(name);
  EXPECT_TRUE(static_cast<bool>(found)) << table << ": " << name << " is not in the metric catalog";
}

TEST(UnitTablesCatalog, EveryColumnAndRecipeCounterIsACatalogMetric) {
  for (const auto& table : diescope::collect::unit_tables()) {
    for (const auto* columns : {&table.units, &table.diagnostics, &table.counts}) {
      for (const auto& column : *columns) {
        expect_in_catalog(table.name, column.metric);
        for (const auto& counter : column.recipe.counters) expect_in_catalog(table.name, counter);
      }
    }
  }
}

}  // namespace
