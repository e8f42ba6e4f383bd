#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "diescope/harness/diagnostic_pass.hpp"
#include "diescope/harness/metric.hpp"

namespace diescope::harness {
namespace {

TEST(MetricValue, Helpers) {
  const MetricValue d = MetricValue::duration_ms("kernel", std::chrono::microseconds(1500));
  EXPECT_DOUBLE_EQ(d.value, 1.5);  // 1500 us = 1.5 ms
  EXPECT_EQ(d.unit, "ms");

  const MetricValue bw = MetricValue::bandwidth_gib_s("bw", 2.0 * (1 << 30), 0.5);
  EXPECT_DOUBLE_EQ(bw.value, 4.0);  // 2 GiB in 0.5 s
  EXPECT_EQ(bw.unit, "GiB/s");

  const MetricValue tf = MetricValue::throughput_tflops("tf", 3e12, 1.5);
  EXPECT_DOUBLE_EQ(tf.value, 2.0);  // 3e12 FLOP / 1.5 s = 2e12 FLOP/s
  EXPECT_EQ(tf.unit, "TFLOP/s");

  EXPECT_TRUE(std::isnan(MetricValue::bandwidth_gib_s("bw", 1, 0).value));  // no time: not available, not 0

  const MetricValue id =
      MetricValue::integer("algo", 42, "id").with_display_name("algorithm").with_section("gemm");
  EXPECT_EQ(id.format, MetricFormat::integer);
  EXPECT_EQ(id.label(), "algorithm");
  EXPECT_EQ(id.section, "gemm");
  EXPECT_EQ(id.name, "algo");  // the key stays the name
}

TEST(MetricAggregator, KeysBySectionNameAndUnit) {
  MetricAggregator agg;
  // Three samples of "t" in ms, one of "t" in us, one of "t" in ms in another section.
  agg.add(MetricValue("t", 1, "ms"));
  agg.add(MetricValue("t", 2, "ms"));
  agg.add(MetricValue("t", 6, "ms").with_display_name("kernel time"));
  agg.add(MetricValue("t", 500, "us"));
  agg.add(MetricValue("t", 9, "ms").with_section("other"));

  const auto s = agg.summaries();
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].key, (MetricKey{"", "t", "ms"}));
  EXPECT_EQ(s[0].stats.count, 3u);
  EXPECT_DOUBLE_EQ(s[0].stats.mean, 3.0);  // (1 + 2 + 6) / 3
  EXPECT_DOUBLE_EQ(s[0].stats.median, 2.0);
  EXPECT_DOUBLE_EQ(s[0].stats.p95, 5.6);        // rank 0.95 * 2 = 1.9 -> 2 + 0.9 * (6 - 2)
  EXPECT_EQ(s[0].display_name, "kernel time");  // a later sample may name an unnamed row
  EXPECT_EQ(s[1].key, (MetricKey{"", "t", "us"}));
  EXPECT_EQ(s[1].stats.count, 1u);
  EXPECT_EQ(s[2].key, (MetricKey{"other", "t", "ms"}));
  EXPECT_DOUBLE_EQ(s[2].stats.max, 9.0);
}

TEST(MetricAggregator, NonFiniteValuesDoNotCount) {
  MetricAggregator agg;
  agg.add(MetricValue::bandwidth_gib_s("bw", 1 << 30, 0.0));  // NaN
  agg.add(MetricValue::bandwidth_gib_s("bw", 1 << 30, 0.5));  // 2 GiB/s
  const auto s = agg.summaries();
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].stats.count, 1u);
  EXPECT_DOUBLE_EQ(s[0].stats.mean, 2.0);
}

// The counter replay pass's default set names its metrics as docs/harness.md's table does, row for row
// (docs/harness.md#the-diagnostic-replay-pass).
TEST(DefaultCounters, NameTheirMetricsAsDocumented) {
  std::ifstream doc(std::string(DIESCOPE_SOURCE_DIR) + "/docs/harness.md");
  ASSERT_TRUE(doc) << "docs/harness.md";
  std::vector<std::pair<std::string, std::string>> rows;
  bool in_table = false;
  for (std::string line; std::getline(doc, line);) {
    if (line == "| profiler metric | reported as |") {
      in_table = true;
      continue;
    }
    if (!in_table) continue;
    if (line.empty()) break;
    if (line.rfind("| ---", 0) == 0) continue;
    const auto first = line.find('`'), second = line.find('`', first + 1);
    const auto third = line.find('`', second + 1), fourth = line.find('`', third + 1);
    ASSERT_NE(fourth, std::string::npos) << line;
    rows.emplace_back(line.substr(first + 1, second - first - 1), line.substr(third + 1, fourth - third - 1));
  }
  const std::vector<CounterMetric> set = default_gpu_counters();
  ASSERT_EQ(rows.size(), set.size());
  for (std::size_t i = 0; i < set.size(); ++i) {
    EXPECT_EQ(set[i].profiler_name, rows[i].first) << i;
    EXPECT_EQ(set[i].stable_name, rows[i].second) << i;
  }
}

}  // namespace
}  // namespace diescope::harness
