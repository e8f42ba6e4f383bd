// Metric names: the grammar, round trips, the type rules, and every way a name is refused.
#include <gtest/gtest.h>

#include "diescope/metrics/name.hpp"

namespace diescope::metrics {
namespace {

MetricName parsed(std::string_view text) {
  auto result = parse_metric_name(text);
  EXPECT_TRUE(result.ok()) << result.reason();
  return result.ok() ? *result : MetricName{};
}

std::string refusal(std::string_view text) {
  auto result = parse_metric_name(text);
  EXPECT_FALSE(result.ok()) << text << " was accepted";
  return result.ok() ? std::string() : result.reason();
}

std::string refusal(std::string_view text, MetricType type) {
  auto result = parse_metric_name(text, type);
  EXPECT_FALSE(result.ok()) << text << " was accepted as " << to_string(type);
  return result.ok() ? std::string() : result.reason();
}

TEST(MetricName, SplitsEveryPart) {
  MetricName n = parsed("dram__read_bytes.sum.per_second");
  EXPECT_EQ(n.group, "");
  EXPECT_EQ(n.pass, "");
  EXPECT_EQ(n.entity, "dram");
  EXPECT_EQ(n.counter, "read_bytes");
  EXPECT_EQ(n.rollup, Rollup::sum);
  EXPECT_EQ(n.submetric, "per_second");
  EXPECT_EQ(n.base(), "dram__read_bytes");
}

TEST(MetricName, GroupQualifiedFormKeepsGroupAndPass) {
  MetricName n =
      parsed("TPC.TriageCompute.sm__inst_executed_pipe_fma_realtime.avg.pct_of_peak_sustained_elapsed");
  EXPECT_EQ(n.group, "TPC");
  EXPECT_EQ(n.pass, "TriageCompute");
  EXPECT_EQ(n.entity, "sm");
  EXPECT_EQ(n.counter, "inst_executed_pipe_fma_realtime");
  EXPECT_EQ(n.rollup, Rollup::avg);
  EXPECT_EQ(n.submetric, "pct_of_peak_sustained_elapsed");
  EXPECT_EQ(n.base(), "TPC.TriageCompute.sm__inst_executed_pipe_fma_realtime");
}

TEST(MetricName, PassOnlyQualifierAsCuptiListsIt) {
  MetricName n = parsed("TriageCompute.sm__throughput.avg.pct_of_peak_sustained_elapsed");
  EXPECT_EQ(n.group, "");
  EXPECT_EQ(n.pass, "TriageCompute");
  EXPECT_EQ(n.entity, "sm");
}

TEST(MetricName, RatioSuffixHasNoRollup) {
  MetricName n = parsed("smsp__average_warps_active_per_cycle_active.ratio");
  EXPECT_FALSE(n.rollup.has_value());
  EXPECT_EQ(n.submetric, "ratio");
}

TEST(MetricName, CompoundSubmetricIsOnePart) {
  MetricName n = parsed("dram__bytes.avg.peak_sustained_active.per_second");
  EXPECT_EQ(n.rollup, Rollup::avg);
  EXPECT_EQ(n.submetric, "peak_sustained_active.per_second");
}

TEST(MetricName, FormattingRoundTrips) {
  for (std::string_view text : {
           "mem__capacity_bytes",
           "disk__read_inflight",
           "dram__bytes.sum",
           "dram__bytes.sum.per_second",
           "dram__bytes.max.peak_sustained_elapsed.per_second",
           "smsp__average_warps_active_per_cycle_active.pct",
           "smsp__average_warps_active_per_cycle_active.max_rate",
           "sm__throughput.max.pct_of_peak_burst_region",
           "cpu__cycles_busy.avg.pct_of_peak_sustained_elapsed",
           "TriageCompute.sm__throughput.avg.pct_of_peak_sustained_elapsed",
           "SM_A.TriageCompute.l1tex__m_xbar2l1tex_read_sectors_realtime.avg.pct_of_peak_sustained_elapsed",
       }) {
    MetricName n = parsed(text);
    EXPECT_EQ(n.full(), text);
    EXPECT_EQ(parsed(n.full()), n);
  }
}

TEST(MetricName, BuiltNameFormatsInTheGrammar) {
  MetricName n;
  n.group = "TPC";
  n.pass = "TriageCompute";
  n.entity = "tpc";
  n.counter = "warps_active_realtime";
  n.rollup = Rollup::max;
  n.submetric = "pct_of_peak_sustained_active";
  EXPECT_EQ(n.full(), "TPC.TriageCompute.tpc__warps_active_realtime.max.pct_of_peak_sustained_active");
}

// Every refusal names what is wrong and where (1-based column).
TEST(MetricNameRefusal, Empty) {
  EXPECT_EQ(refusal(""), "metric name is empty");
}

TEST(MetricNameRefusal, EmptyParts) {
  EXPECT_EQ(refusal(".sm__cycles_active"),
            "metric name \".sm__cycles_active\": empty part at column 1 (a dot at the start or end, or two "
            "in a row)");
  EXPECT_EQ(
      refusal("sm__cycles_active..sum"),
      "metric name \"sm__cycles_active..sum\": empty part at column 19 (a dot at the start or end, or two in "
      "a row)");
  EXPECT_EQ(
      refusal("sm__cycles_active.sum."),
      "metric name \"sm__cycles_active.sum.\": empty part at column 23 (a dot at the start or end, or two in "
      "a row)");
}

TEST(MetricNameRefusal, MissingDoubleUnderscore) {
  EXPECT_EQ(refusal("sm_cycles_active.avg"),
            "metric name \"sm_cycles_active.avg\": no \"__\" between entity and counter (expected "
            "<entity>__<counter>, e.g. sm__cycles_active)");
}

TEST(MetricNameRefusal, EmptyEntityOrCounter) {
  EXPECT_EQ(refusal("__cycles_active"),
            "metric name \"__cycles_active\": empty entity before \"__\" at column 1");
  EXPECT_EQ(refusal("sm__.sum"), "metric name \"sm__.sum\": empty counter after \"__\" at column 5");
}

TEST(MetricNameRefusal, BadCharacters) {
  // "sm__cyc%les": '%' is the 8th character.
  EXPECT_EQ(refusal("sm__cyc%les"),
            "metric name \"sm__cyc%les\": bad character '%' in counter at column 8 "
            "(lower-case letters, digits and '_')");
  EXPECT_EQ(refusal("sM__cycles"),
            "metric name \"sM__cycles\": bad character 'M' in entity at column 2 "
            "(lower-case letters and digits)");
  EXPECT_EQ(refusal("s_m__cycles"),
            "metric name \"s_m__cycles\": bad character '_' in entity at column 2 "
            "(lower-case letters and digits)");
  EXPECT_EQ(refusal("1sm__cycles"),
            "metric name \"1sm__cycles\": entity \"1sm\" at column 1 must start with a lower-case letter");
  EXPECT_EQ(refusal("sm__cycles.Sum"),
            "metric name \"sm__cycles.Sum\": bad character 'S' in rollup at column 12 "
            "(lower-case letters, digits and '_')");
  EXPECT_EQ(refusal("sm__cycles.sum.per-second"),
            "metric name \"sm__cycles.sum.per-second\": bad character '-' in submetric at column 19 "
            "(lower-case letters, digits and '_')");
  EXPECT_EQ(refusal("TP-C.sm__cycles"),
            "metric name \"TP-C.sm__cycles\": bad character '-' in qualifier at "
            "column 3 (letters, digits and '_')");
  EXPECT_EQ(refusal("sm__cyc les"),
            "metric name \"sm__cyc les\": bad character ' ' in counter at column 8 "
            "(lower-case letters, digits and '_')");
  EXPECT_EQ(refusal(std::string_view("sm__a\tb")),
            "metric name \"sm__a\tb\": bad character byte 9 in counter at "
            "column 6 (lower-case letters, digits and '_')");
}

TEST(MetricNameRefusal, SecondDoubleUnderscore) {
  EXPECT_EQ(refusal("sm__cycles__active"),
            "metric name \"sm__cycles__active\": second \"__\" at column 11 (a name has exactly one, between "
            "entity and counter)");
}

TEST(MetricNameRefusal, Qualifiers) {
  EXPECT_EQ(
      refusal("A.B.C.sm__cycles_active"),
      "metric name \"A.B.C.sm__cycles_active\": too many qualifiers before the entity at column 1 (at most "
      "GROUP.Pass., e.g. TPC.TriageCompute.)");
  EXPECT_EQ(
      refusal("gpu.sm__cycles_active"),
      "metric name \"gpu.sm__cycles_active\": qualifier \"gpu\" at column 1 must start with an upper-case "
      "letter (CUPTI's GROUP.Pass. prefix, e.g. TPC.TriageCompute.)");
}

TEST(MetricNameRefusal, UnknownRollup) {
  EXPECT_EQ(
      refusal("sm__cycles_active.mean"),
      "metric name \"sm__cycles_active.mean\": unknown rollup \"mean\" at column 19 (expected sum, avg, min "
      "or max; or ratio, pct, max_rate for a ratio)");
}

TEST(MetricNameRefusal, SubmetricWithoutRollup) {
  EXPECT_EQ(refusal("dram__bytes.per_second"),
            "metric name \"dram__bytes.per_second\": submetric \"per_second\" at column 13 needs a rollup "
            "before it "
            "(sum, avg, min or max), e.g. \".sum.per_second\"");
}

TEST(MetricNameRefusal, UnknownSubmetric) {
  EXPECT_EQ(refusal("dram__bytes.sum.per_minute"),
            "metric name \"dram__bytes.sum.per_minute\": unknown submetric \"per_minute\" at column 17 (e.g. "
            "per_second, pct_of_peak_sustained_elapsed; docs/metrics.md lists them)");
  EXPECT_EQ(
      refusal("dram__bytes.sum.per_second.avg"),
      "metric name \"dram__bytes.sum.per_second.avg\": unknown submetric \"per_second.avg\" at column 17 "
      "(e.g. per_second, pct_of_peak_sustained_elapsed; docs/metrics.md lists them)");
}

// Type rules (docs/metrics.md#types-and-their-legal-suffixes).
TEST(MetricNameType, CounterTakesEveryRollupAndItsTransforms) {
  for (std::string_view text : {"dram__bytes", "dram__bytes.min", "dram__bytes.max.per_cycle_elapsed",
                                "dram__bytes.sum.pct_of_peak_burst_active",
                                "dram__bytes.avg.per_cycle_region", "dram__bytes.sum.peak_burst"}) {
    EXPECT_TRUE(parse_metric_name(text, MetricType::counter).ok()) << text;
  }
}

TEST(MetricNameType, CounterRefusesRatioAndThroughputOnlySuffixes) {
  EXPECT_EQ(
      refusal("dram__bytes.pct", MetricType::counter),
      "metric name \"dram__bytes.pct\": \".pct\" is a ratio submetric; a counter takes a rollup (sum, avg, "
      "min, max) and then an optional transform such as per_second");
  EXPECT_EQ(refusal("dram__bytes.sum.pct_of_peak_sustained_region", MetricType::counter),
            "metric name \"dram__bytes.sum.pct_of_peak_sustained_region\": submetric "
            "\"pct_of_peak_sustained_region\" is not legal for a counter (e.g. per_second, per_cycle_active, "
            "pct_of_peak_sustained_elapsed)");
}

TEST(MetricNameType, RatioTakesNoRollup) {
  for (std::string_view text :
       {"smsp__average_warps_active_per_issue_active", "smsp__average_warps_active_per_issue_active.ratio",
        "smsp__average_warps_active_per_issue_active.pct",
        "smsp__average_warps_active_per_issue_active.max_rate"}) {
    EXPECT_TRUE(parse_metric_name(text, MetricType::ratio).ok()) << text;
  }
  EXPECT_EQ(refusal("smsp__average_warps_active_per_issue_active.avg.pct_of_peak_sustained_elapsed",
                    MetricType::ratio),
            "metric name \"smsp__average_warps_active_per_issue_active.avg.pct_of_peak_sustained_elapsed\": "
            "a ratio "
            "takes no rollup (\".avg\"); its suffix is one of .ratio, .pct, .max_rate");
}

TEST(MetricNameType, ThroughputTakesARollupAndAPeak) {
  for (std::string_view text :
       {"dram__throughput.avg.pct_of_peak_sustained_elapsed", "dram__throughput.max.pct_of_peak_burst_active",
        "dram__throughput.sum.pct_of_peak_sustained_active",
        "dram__throughput.min.pct_of_peak_sustained_region"}) {
    EXPECT_TRUE(parse_metric_name(text, MetricType::throughput).ok()) << text;
  }
  EXPECT_EQ(refusal("dram__throughput.sum.per_second", MetricType::throughput),
            "metric name \"dram__throughput.sum.per_second\": submetric \"per_second\" is not legal for a "
            "throughput (only pct_of_peak_{sustained,burst}_{active,elapsed,region})");
  EXPECT_EQ(
      refusal("dram__throughput.avg", MetricType::throughput),
      "metric name \"dram__throughput.avg\": a throughput's rollup must be followed by the peak it is a "
      "percent of, e.g. \".avg.pct_of_peak_sustained_elapsed\"");
  EXPECT_EQ(
      refusal("dram__throughput.ratio", MetricType::throughput),
      "metric name \"dram__throughput.ratio\": \".ratio\" is a ratio submetric; a throughput takes a rollup "
      "and a pct_of_peak_* submetric, e.g. .avg.pct_of_peak_sustained_elapsed");
}

TEST(MetricNameType, SyntaxErrorsComeBeforeTypeErrors) {
  EXPECT_EQ(
      refusal("dram_bytes.sum", MetricType::counter),
      "metric name \"dram_bytes.sum\": no \"__\" between entity and counter (expected <entity>__<counter>, "
      "e.g. sm__cycles_active)");
}

TEST(MetricNameType, TypesAllowingASuffix) {
  using V = std::vector<MetricType>;
  // ".avg.pct_of_peak_sustained_elapsed" suits a counter and a throughput, not a ratio.
  EXPECT_EQ(types_allowing(parsed("x__y.avg.pct_of_peak_sustained_elapsed")),
            (V{MetricType::counter, MetricType::throughput}));
  EXPECT_EQ(types_allowing(parsed("x__y.sum.per_second")), (V{MetricType::counter}));
  EXPECT_EQ(types_allowing(parsed("x__y.pct")), (V{MetricType::ratio}));
  EXPECT_EQ(types_allowing(parsed("x__y.max.pct_of_peak_burst_region")), (V{MetricType::throughput}));
  EXPECT_EQ(types_allowing(parsed("x__y")),
            (V{MetricType::counter, MetricType::ratio, MetricType::throughput}));
}

TEST(MetricNameType, PercentSubmetrics) {
  EXPECT_TRUE(is_percent_submetric("pct"));
  EXPECT_TRUE(is_percent_submetric("pct_of_peak_sustained_elapsed"));
  EXPECT_FALSE(is_percent_submetric("per_second"));
  EXPECT_FALSE(is_percent_submetric("ratio"));
  EXPECT_FALSE(is_percent_submetric(""));
}

TEST(MetricNameType, ReadingAFailedResultIsABug) {
  auto result = parse_metric_name("");
  EXPECT_THROW((void)result.value(), std::logic_error);
}

}  // namespace
}  // namespace diescope::metrics
