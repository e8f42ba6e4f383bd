// The catalog: every entry legal under its type, the host names exactly, every unit and
// diagnostic of the method present, lookups and their refusals, and descriptors with resolved peaks.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "diescope/metrics/catalog.hpp"

namespace diescope::metrics {
namespace {

const CatalogEntry& entry(std::string_view name) {
  const CatalogEntry* e = find_metric(name);
  if (!e) throw std::runtime_error("missing from the catalog: " + std::string(name));
  return *e;
}

TEST(Catalog, EveryEntryIsLegalUnderItsTypeAndUnique) {
  std::set<std::string_view> seen;
  for (const CatalogEntry& e : catalog()) {
    auto parsed = parse_metric_name(e.name, e.type);
    EXPECT_TRUE(parsed.ok()) << parsed.reason();
    if (parsed.ok()) {
      EXPECT_EQ(parsed->full(), e.name);
    }
    EXPECT_TRUE(seen.insert(e.name).second) << "listed twice: " << e.name;
    EXPECT_FALSE(e.label.empty()) << e.name;
    EXPECT_FALSE(e.note.empty()) << e.name;
    // A peak's absence always has a reason; a metric peak names another catalog entry.
    if (e.peak.kind == PeakRule::Kind::none) {
      EXPECT_FALSE(e.peak.reason.empty()) << e.name;
    }
    if (e.peak.kind == PeakRule::Kind::metric) {
      EXPECT_NE(find_metric(e.peak.metric), nullptr) << e.name;
    }
    // A percent-of-peak name peaks at 100 of its own unit.
    auto name = parse_metric_name(e.name);
    if (name.ok() && is_percent_submetric(name->submetric)) {
      EXPECT_EQ(e.unit, Unit::pct) << e.name;
      EXPECT_EQ(e.peak.kind, PeakRule::Kind::fixed) << e.name;
      EXPECT_EQ(e.peak.value, 100) << e.name;
    }
  }
}

// The host metrics (docs/metrics.md#naming-choices-for-metrics-outside-cupti), row by row: name, type,
// unit, peak and scope.
TEST(Catalog, HostMetricsRowByRow) {
  struct Row {
    std::string_view name;
    MetricType type;
    Unit unit;
    PeakRule::Kind peak;
    Scope::Kind scope;
  };
  using P = PeakRule::Kind;
  using S = Scope::Kind;
  const Row rows[] = {
      {"cpu__cycles_busy.avg.pct_of_peak_sustained_elapsed", MetricType::throughput, Unit::pct, P::fixed,
       S::system},
      {"cpu__cycles_user.avg.pct_of_peak_sustained_elapsed", MetricType::throughput, Unit::pct, P::fixed,
       S::system},
      {"cpu__cycles_kernel.avg.pct_of_peak_sustained_elapsed", MetricType::throughput, Unit::pct, P::fixed,
       S::system},
      {"cpu__cycles_iowait.avg.pct_of_peak_sustained_elapsed", MetricType::throughput, Unit::pct, P::fixed,
       S::system},
      {"mem__capacity_bytes", MetricType::counter, Unit::bytes, P::none, S::system},
      {"mem__used_bytes", MetricType::counter, Unit::bytes, P::metric, S::system},
      {"mem__available_bytes", MetricType::counter, Unit::bytes, P::metric, S::system},
      {"mem__buffers_bytes", MetricType::counter, Unit::bytes, P::metric, S::system},
      {"mem__cached_bytes", MetricType::counter, Unit::bytes, P::metric, S::system},
      {"proc__cycles_active.sum.per_second", MetricType::counter, Unit::pct, P::per_cpu, S::process},
      {"proc__rss_bytes", MetricType::counter, Unit::bytes, P::metric, S::process},
      {"proc__vms_bytes", MetricType::counter, Unit::bytes, P::none, S::process},
      {"proc__shared_bytes", MetricType::counter, Unit::bytes, P::metric, S::process},
      {"disk__read_bytes.sum.per_second", MetricType::counter, Unit::bytes_per_second, P::none, S::device},
      {"disk__write_bytes.sum.per_second", MetricType::counter, Unit::bytes_per_second, P::none, S::device},
      {"disk__read_inflight", MetricType::counter, Unit::requests, P::none, S::device},
      {"disk__write_inflight", MetricType::counter, Unit::requests, P::none, S::device},
      {"proc__io_rchar.sum.per_second", MetricType::counter, Unit::bytes_per_second, P::none, S::process},
      {"proc__io_wchar.sum.per_second", MetricType::counter, Unit::bytes_per_second, P::none, S::process},
  };
  for (const Row& row : rows) {
    const CatalogEntry* e = find_metric(row.name);
    ASSERT_NE(e, nullptr) << row.name;
    EXPECT_EQ(e->type, row.type) << row.name;
    EXPECT_EQ(e->unit, row.unit) << row.name;
    EXPECT_EQ(e->peak.kind, row.peak) << row.name;
    EXPECT_EQ(e->scope, row.scope) << row.name;
    EXPECT_EQ(e->source, Source::procfs) << row.name;
  }
  EXPECT_EQ(entry("mem__used_bytes").peak.metric, "mem__capacity_bytes");
  EXPECT_EQ(entry("proc__rss_bytes").peak.metric, "mem__capacity_bytes");
  EXPECT_EQ(entry("proc__cycles_active.sum.per_second").peak.value, 100);  // per logical CPU
  EXPECT_EQ(entry("cpu__cycles_busy.avg.pct_of_peak_sustained_elapsed").peak.value, 100);
}

// The method's units and diagnostics (docs/method.md#units-and-recipes), by the label people know
// them by.
TEST(Catalog, CoversTheMethodsUnitsAndDiagnostics) {
  std::set<std::string_view> labels;
  for (const CatalogEntry& e : catalog()) labels.insert(e.label);
  for (std::string_view label : {"FP32 (FMA pipe)",
                                 "FMA heavy",
                                 "FMA lite",
                                 "Tensor",
                                 "Tensor+FP16",
                                 "FP64",
                                 "Load/store",
                                 "DRAM",
                                 "DRAM bytes",
                                 "DRAM rate",
                                 "DRAM throughput",
                                 "DRAM (FBPA)",
                                 "L2",
                                 "SM active",
                                 "Occupancy",
                                 "GR active",
                                 "Video encoder",
                                 "Video decoder",
                                 "JPEG decoder",
                                 "GPU-Util",
                                 "SM clock",
                                 "Memory clock",
                                 "Power limit"}) {
    EXPECT_TRUE(labels.count(label)) << "no catalog entry labelled " << label;
  }
  // The names the first H200 probe read (docs/method.md#the-first-h200-probe) and Hopper's one-pass set.
  for (std::string_view name : {
           "gr__cycles_active.avg.pct_of_peak_sustained_elapsed",
           "sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_elapsed",
           "sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed",
           "dram__bytes.sum.pct_of_peak_sustained_elapsed",
           "dram__bytes.sum",
           "lts__t_bytes.sum.pct_of_peak_sustained_elapsed",
           "TPC.TriageCompute.sm__inst_executed_pipe_fma_realtime.avg.pct_of_peak_sustained_elapsed",
           "TPC.TriageCompute.sm__inst_executed_pipe_fmaheavy_realtime.avg.pct_of_peak_sustained_elapsed",
           "TPC.TriageCompute.sm__inst_executed_pipe_fmalite_realtime.avg.pct_of_peak_sustained_elapsed",
           "TPC.TriageCompute.sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed",
           "TPC.TriageCompute.sm__pipe_fp64_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed",
           "TPC.TriageCompute.sm__inst_executed_pipe_alu_realtime.avg.pct_of_peak_sustained_elapsed",
           "TPC.TriageCompute.tpc__warps_active_realtime.avg.pct_of_peak_sustained_elapsed",
           "SM_A.TriageCompute.l1tex__m_xbar2l1tex_read_sectors_realtime.avg.pct_of_peak_sustained_elapsed",
           "lts__t_bytes.avg.pct_of_peak_sustained_elapsed",
       }) {
    EXPECT_NE(find_metric(name), nullptr) << name;
  }
}

TEST(Catalog, SourcesAndScopes) {
  EXPECT_EQ(entry("gpu__nvml_utilization.pct").source, Source::nvml);
  EXPECT_EQ(entry("gpu__nvml_utilization.pct").type, MetricType::ratio);
  EXPECT_EQ(entry("nvenc__utilization.pct").source, Source::nvml);
  EXPECT_EQ(entry("gpu__nvml_sm_clock_mhz").unit, Unit::mhz);
  EXPECT_EQ(entry("gpu__nvml_power_limit_watts").unit, Unit::watts);
  EXPECT_EQ(entry("dram__bytes.sum").unit, Unit::bytes);
  EXPECT_EQ(entry("dram__bytes.sum.per_second").unit, Unit::bytes_per_second);
  EXPECT_EQ(entry("dram__throughput.avg.pct_of_peak_sustained_elapsed").type, MetricType::throughput);
  for (const CatalogEntry& e : catalog()) {
    if (e.source != Source::procfs) {
      EXPECT_EQ(e.scope, Scope::Kind::gpu) << e.name;
    }
  }
}

TEST(CatalogLookup, KnownName) {
  auto found = lookup_metric("mem__used_bytes");
  ASSERT_TRUE(found.ok());
  EXPECT_EQ((*found)->name, "mem__used_bytes");
}

TEST(CatalogLookup, UnknownNameGetsTheClosestKnownNames) {
  // Well formed, not in the catalog: "avg" for "sum" is 3 edits from the DRAM unit's name, more from the
  // rest.
  auto found = lookup_metric("dram__bytes.avg.pct_of_peak_sustained_elapsed");
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(
      found.reason().rfind("unknown metric \"dram__bytes.avg.pct_of_peak_sustained_elapsed\"; closest known: "
                           "dram__bytes.sum.pct_of_peak_sustained_elapsed, ",
                           0),
      0u)
      << found.reason();
  EXPECT_EQ(closest_metric_names("mem__usd_bytes", 1), std::vector<std::string_view>{"mem__used_bytes"});
}

TEST(CatalogLookup, MisspelledSuffixGetsTheParseReasonAndAHint) {
  auto found = lookup_metric("dram__bytes.sum.pct_of_peak_sustained_elapse");  // one letter short
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(
      found.reason().rfind("metric name \"dram__bytes.sum.pct_of_peak_sustained_elapse\": unknown submetric "
                           "\"pct_of_peak_sustained_elapse\" at column 17 (e.g. per_second, "
                           "pct_of_peak_sustained_elapsed; docs/metrics.md lists them); closest known: "
                           "dram__bytes.sum.pct_of_peak_sustained_elapsed, ",
                           0),
      0u)
      << found.reason();
}

TEST(CatalogLookup, UnrelatedNameGetsNoHint) {
  auto found = lookup_metric("zz__q");
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.reason(), "unknown metric \"zz__q\"; docs/metrics.md lists the known names");
}

TEST(CatalogLookup, MalformedNameGetsTheParseReasonAndAHint) {
  auto found = lookup_metric("mem_used_bytes");
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(
      found.reason().rfind("metric name \"mem_used_bytes\": no \"__\" between entity and counter (expected "
                           "<entity>__<counter>, e.g. sm__cycles_active); closest known: mem__used_bytes",
                           0),
      0u)
      << found.reason();
}

TEST(CatalogDescribe, FixedPeakAndParts) {
  auto d = describe_metric(
      "TPC.TriageCompute.sm__inst_executed_pipe_fma_realtime.avg.pct_of_peak_sustained_elapsed",
      Scope::gpu(0));
  ASSERT_TRUE(d.ok()) << d.reason();
  EXPECT_EQ(d->entity(), "sm");
  EXPECT_EQ(d->counter(), "inst_executed_pipe_fma_realtime");
  EXPECT_EQ(d->rollup(), Rollup::avg);
  EXPECT_EQ(d->submetric(), "pct_of_peak_sustained_elapsed");
  EXPECT_EQ(d->name.group, "TPC");
  EXPECT_EQ(d->type, MetricType::counter);
  EXPECT_EQ(d->unit, Unit::pct);
  EXPECT_EQ(d->peak, 100.0);
  EXPECT_EQ(d->scope, Scope::gpu(0));
}

TEST(CatalogDescribe, PeakPerLogicalCpu) {
  PeakInputs inputs;
  inputs.logical_cpus = 8;
  auto d = describe_metric("proc__cycles_active.sum.per_second", Scope::process(4242), inputs);
  ASSERT_TRUE(d.ok()) << d.reason();
  EXPECT_EQ(d->peak, 800.0);  // 100% of one core x 8 logical CPUs
  EXPECT_EQ(d->scope.label(), "pid 4242");

  auto unknown_cpus = describe_metric("proc__cycles_active.sum.per_second", Scope::process(1));
  ASSERT_TRUE(unknown_cpus.ok());
  EXPECT_FALSE(unknown_cpus->peak.has_value());
  EXPECT_EQ(unknown_cpus->no_peak_reason, "the number of logical CPUs is not known");
}

TEST(CatalogDescribe, PeakFromAnotherMetric) {
  PeakInputs inputs;
  inputs.readings["mem__capacity_bytes"] = 64e9;
  auto d = describe_metric("mem__used_bytes", Scope::system(), inputs);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->peak, 64e9);

  auto missing = describe_metric("proc__rss_bytes", Scope::process(7));
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->peak.has_value());
  EXPECT_EQ(missing->no_peak_reason, "its peak is mem__capacity_bytes, which has no reading");

  inputs.readings["mem__capacity_bytes"] = std::nan("");  // unread is no peak, not a zero peak
  auto nan_capacity = describe_metric("mem__used_bytes", Scope::system(), inputs);
  ASSERT_TRUE(nan_capacity.ok());
  EXPECT_FALSE(nan_capacity->peak.has_value());
}

TEST(CatalogDescribe, NoPeakCarriesItsReason) {
  auto d = describe_metric("disk__read_bytes.sum.per_second", Scope::block_device("nvme0n1"));
  ASSERT_TRUE(d.ok());
  EXPECT_FALSE(d->peak.has_value());
  EXPECT_EQ(d->no_peak_reason, "no /sys/block source gives a device's rated bandwidth");
  EXPECT_EQ(d->scope.label(), "device nvme0n1");
}

TEST(CatalogDescribe, WrongScopeKindIsRefused) {
  auto d = describe_metric("proc__rss_bytes", Scope::system());
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.reason(), "metric \"proc__rss_bytes\" comes with process scope, not system");
}

TEST(CatalogDescribe, UnknownNameIsRefused) {
  auto d = describe_metric("mem__usd_bytes", Scope::system());
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.reason().rfind("unknown metric \"mem__usd_bytes\"; closest known: mem__used_bytes", 0), 0u)
      << d.reason();
}

TEST(CatalogDoc, PeakDescriptions) {
  EXPECT_EQ(describe(PeakRule::fixed_at(100)), "100");
  EXPECT_EQ(describe(PeakRule::per_logical_cpu(100)), "100 per logical CPU");
  EXPECT_EQ(describe(PeakRule::from_metric("mem__capacity_bytes")), "mem__capacity_bytes");
  EXPECT_EQ(describe(PeakRule::unknown("why")), "none: why");
}

TEST(CatalogDoc, TableHasOneRowPerEntryAndNoStrayPipes) {
  const std::string table = catalog_markdown_table();
  std::size_t rows = 0;
  for (std::size_t pos = 0; (pos = table.find('\n', pos)) != std::string::npos; ++pos) ++rows;
  EXPECT_EQ(rows, catalog().size() + 2);  // header and separator
  for (const CatalogEntry& e : catalog()) {
    for (std::string_view field : {e.name, e.label, e.note, e.peak.reason}) {
      EXPECT_EQ(field.find('|'), std::string_view::npos) << e.name;
    }
  }
}

}  // namespace
}  // namespace diescope::metrics
