// The catalog's chip-counter names against CUPTI itself. The profiler host API works without a GPU:
// it knows each chip's metrics by the chip's name. So this runs on the CPU-only machine.
#include <gtest/gtest.h>

#include <cupti_profiler_host.h>

#include <string>
#include <vector>

#include "cupti_call.hpp"
#include "diescope/metrics/catalog.hpp"

namespace diescope::metrics {
namespace {

// One chip per architecture the unit tables cover, Turing to Blackwell.
constexpr const char* kChips[] = {"TU104", "GA100", "GA102", "AD102", "GH100", "GB100", "GB202"};

class HostObject {
 public:
  explicit HostObject(const char* chip) {
    auto p = DIESCOPE_CUPTI_PARAMS(CUpti_Profiler_Host_Initialize_Params);
    p.profilerType = CUPTI_PROFILER_TYPE_PM_SAMPLING;
    p.pChipName = chip;
    if (cuptiProfilerHostInitialize(&p) == CUPTI_SUCCESS) object_ = p.pHostObject;
  }
  ~HostObject() {
    if (!object_) return;
    auto p = DIESCOPE_CUPTI_PARAMS(CUpti_Profiler_Host_Deinitialize_Params);
    p.pHostObject = object_;
    cuptiProfilerHostDeinitialize(&p);
  }
  HostObject(const HostObject&) = delete;
  HostObject& operator=(const HostObject&) = delete;
  CUpti_Profiler_Host_Object* get() const { return object_; }

 private:
  CUpti_Profiler_Host_Object* object_ = nullptr;
};

// Whether the chip's PM-sampling configuration takes the full name (rollup and submetric included).
bool chip_accepts(const char* chip, const std::string& name) {
  HostObject host(chip);  // a fresh object per name: a refused name must not taint the next
  if (!host.get()) return false;
  const char* names[] = {name.c_str()};
  auto p = DIESCOPE_CUPTI_PARAMS(CUpti_Profiler_Host_ConfigAddMetrics_Params);
  p.pHostObject = host.get();
  p.ppMetricNames = names;
  p.numMetrics = 1;
  return cuptiProfilerHostConfigAddMetrics(&p) == CUPTI_SUCCESS;
}

TEST(CuptiNames, HostApiKnowsTheChips) {
  for (const char* chip : kChips) {
    EXPECT_NE(HostObject(chip).get(), nullptr) << chip;
  }
}

TEST(CuptiNames, EveryChipCounterInTheCatalogIsReadableOnSomeChip) {
  // The check can fail: a made-up counter and a suffix CUPTI does not list are refused.
  EXPECT_FALSE(chip_accepts("GH100", "sm__no_such_counter.avg.pct_of_peak_sustained_elapsed"));
  EXPECT_FALSE(chip_accepts("GH100", "dram__throughput.sum.per_second"));
  EXPECT_TRUE(chip_accepts("GH100", "dram__bytes.sum.per_second"));
  for (const CatalogEntry& e : catalog()) {
    if (e.source != Source::cupti) continue;
    std::vector<std::string> accepted_by;
    for (const char* chip : kChips) {
      if (chip_accepts(chip, std::string(e.name))) accepted_by.emplace_back(chip);
    }
    EXPECT_FALSE(accepted_by.empty()) << e.name << " is refused by every chip tried";
  }
}

TEST(CuptiNames, TypesAgreeWithCupti) {
  HostObject host("GH100");
  ASSERT_NE(host.get(), nullptr);
  int checked = 0;
  for (const CatalogEntry& e : catalog()) {
    if (e.source != Source::cupti) continue;
    const std::string base = parse_metric_name(e.name)->base();
    auto p = DIESCOPE_CUPTI_PARAMS(CUpti_Profiler_Host_GetMetricProperties_Params);
    p.pHostObject = host.get();
    p.pMetricName = base.c_str();
    if (cuptiProfilerHostGetMetricProperties(&p) != CUPTI_SUCCESS) continue;  // not a GH100 metric
    const MetricType cupti_type = p.metricType == CUPTI_METRIC_TYPE_RATIO        ? MetricType::ratio
                                  : p.metricType == CUPTI_METRIC_TYPE_THROUGHPUT ? MetricType::throughput
                                                                                 : MetricType::counter;
    EXPECT_EQ(to_string(e.type), to_string(cupti_type)) << e.name;
    ++checked;
  }
  EXPECT_GE(checked, 20) << "GH100 should know most of the catalog's chip counters";
}

// Our suffix rules admit every suffix CUPTI lists for a metric of each type (PM sampling's lists;
// the range profiler's extra forms, e.g. per_cycle_region, are in the rules too:
// docs/metrics.md#types-and-their-legal-suffixes).
TEST(CuptiNames, SuffixRulesAdmitWhatCuptiLists) {
  HostObject host("GH100");
  ASSERT_NE(host.get(), nullptr);
  const std::pair<const char*, MetricType> samples[] = {
      {"dram__bytes", MetricType::counter},
      {"TPC.TriageCompute.sm__inst_executed_pipe_fma_realtime", MetricType::counter},
      {"smsp__average_warps_active_per_issue_active", MetricType::ratio},
      {"dram__throughput", MetricType::throughput},
      {"TriageCompute.sm__throughput", MetricType::throughput},
  };
  for (const auto& [base, type] : samples) {
    auto p = DIESCOPE_CUPTI_PARAMS(CUpti_Profiler_Host_GetSubMetrics_Params);
    p.pHostObject = host.get();
    p.pMetricName = base;
    p.metricType = type == MetricType::ratio        ? CUPTI_METRIC_TYPE_RATIO
                   : type == MetricType::throughput ? CUPTI_METRIC_TYPE_THROUGHPUT
                                                    : CUPTI_METRIC_TYPE_COUNTER;
    ASSERT_EQ(cuptiProfilerHostGetSubMetrics(&p), CUPTI_SUCCESS) << base;
    ASSERT_GT(p.numOfSubmetrics, 0u) << base;
    for (std::size_t i = 0; i < p.numOfSubmetrics; ++i) {
      const std::string full = std::string(base) + p.ppSubMetrics[i];
      auto parsed = parse_metric_name(full, type);
      EXPECT_TRUE(parsed.ok()) << full << ": " << (parsed.ok() ? "" : parsed.reason());
      if (parsed.ok()) {
        EXPECT_EQ(parsed->full(), full);
      }
    }
  }
}

}  // namespace
}  // namespace diescope::metrics
