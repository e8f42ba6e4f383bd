// docs/metrics.md carries the catalog's table between two markers; this keeps it equal to the
// catalog. After changing the catalog, regenerate the table with:
//   DIESCOPE_UPDATE_DOCS=1 ctest --test-dir <build> -R MetricsDoc
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "diescope/core/atomic_file.hpp"
#include "diescope/metrics/catalog.hpp"

namespace diescope::metrics {
namespace {

constexpr std::string_view kBegin = "<!-- catalog:begin (generated from src/metrics/catalog.cpp) -->\n";
constexpr std::string_view kEnd = "<!-- catalog:end -->";

TEST(MetricsDoc, CatalogTableMatchesTheCatalog) {
  const std::string path = std::string(DIESCOPE_SOURCE_DIR) + "/docs/metrics.md";
  std::ifstream file(path);
  ASSERT_TRUE(file) << "cannot read " << path;
  std::stringstream buffer;
  buffer << file.rdbuf();
  const std::string doc = buffer.str();

  const std::size_t begin = doc.find(kBegin);
  const std::size_t end = doc.find(kEnd);
  ASSERT_NE(begin, std::string::npos) << path << " lacks the marker " << kBegin;
  ASSERT_NE(end, std::string::npos) << path << " lacks the marker " << kEnd;
  ASSERT_LT(begin, end);
  const std::size_t table_start = begin + kBegin.size();
  const std::string shown = doc.substr(table_start, end - table_start);
  const std::string expected = catalog_markdown_table();

  if (shown != expected && std::getenv("DIESCOPE_UPDATE_DOCS")) {
    core::write_file_atomically(path, doc.substr(0, table_start) + expected + doc.substr(end));
    GTEST_SKIP() << "rewrote the catalog table in " << path;
  }
  if (shown == expected) return;
  // Name the first line that differs rather than print two whole tables.
  std::istringstream shown_lines(shown), expected_lines(expected);
  std::string a, b;
  int line = 0;
  while (true) {
    const bool more_a = static_cast<bool>(std::getline(shown_lines, a));
    const bool more_b = static_cast<bool>(std::getline(expected_lines, b));
    ++line;
    if (!more_a && !more_b) break;
    if (!more_a || !more_b || a != b) break;
  }
  ADD_FAILURE() << path << "'s catalog table differs from the catalog at table line " << line
                << ":\n  doc:     " << a << "\n  catalog: " << b
                << "\nregenerate it with DIESCOPE_UPDATE_DOCS=1 ctest -R MetricsDoc";
}

}  // namespace
}  // namespace diescope::metrics
