// GpmSampler on the CPU: a fake NVML function table answers the GPM calls
// (docs/method.md#gpm-as-a-second-chip-source).
#include <gtest/gtest.h>

#include <cmath>

#include "diescope/collect/gpm.hpp"
#include "diescope/collect/nvml.hpp"
#include "diescope/core/error.hpp"
#include "nvml_fake.hpp"

// Its own namespace: the part's test files compile as one (docs/building.md#one-test-binary-per-part).
namespace diescope::collect::gpm_sampler_test {
namespace {

constexpr recording::TimeNs kMs = recording::kNsPerMs;

class Gpm : public ::testing::Test {
 protected:
  void SetUp() override {
    functions_ = fake_nvml::fake_functions();
    nvml_ = std::make_unique<Nvml>(functions_);
  }
  std::shared_ptr<nvml_abi::Functions> functions_;
  std::unique_ptr<Nvml> nvml_;
};

std::vector<std::string> keys(const std::vector<recording::ColumnDef>& columns) {
  std::vector<std::string> out;
  for (const auto& c : columns) out.push_back(c.key);
  return out;
}

TEST(GpmTable, RecipesNameNvmlMetricsAndGapsNameWhatGpmLacks) {
  const UnitTable& t = gpm_unit_table();
  EXPECT_EQ(keys(t.units), (std::vector<std::string>{"fp32", "tensor", "fp64", "fp16", "integer", "dram"}));
  for (const auto& column : t.units) {
    EXPECT_EQ(column.source, recording::UnitSource::gpm);
    ASSERT_EQ(column.recipe.counters.size(), 1u);
    EXPECT_TRUE(gpm_metric_id(column.recipe.counters[0]).has_value()) << column.recipe.counters[0];
  }
  EXPECT_EQ(*gpm_metric_id("NVML_GPM_METRIC_FP32_UTIL"), 12u);
  EXPECT_EQ(*gpm_metric_id("NVML_GPM_METRIC_ANY_TENSOR_UTIL"), 5u);
  EXPECT_EQ(*gpm_metric_id("NVML_GPM_METRIC_DRAM_BW_UTIL"), 10u);
  EXPECT_FALSE(gpm_metric_id("sm__cycles_active.avg").has_value());
  std::vector<std::string> gaps;
  for (const auto& gap : gpm_unit_gaps()) gaps.push_back(gap.key);
  EXPECT_EQ(gaps, (std::vector<std::string>{"ldst", "l1_fill", "l2"}));
  // No chip's table is the GPM table: unit_table_for_chip never returns it.
  EXPECT_EQ(unit_table_by_name("gpm"), nullptr);
}

TEST(GpmTable, LeavingOutCountersDropsEveryColumnThatReadsThem) {
  const UnitTable& t = gpm_unit_table();
  const UnitTable less =
      table_without_counters(t,
                             {"NVML_GPM_METRIC_FP16_UTIL", "NVML_GPM_METRIC_IMMA_TENSOR_UTIL",
                              "NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC"},
                             "not answered");
  EXPECT_EQ(keys(less.units), (std::vector<std::string>{"fp32", "tensor", "fp64", "integer", "dram"}));
  EXPECT_EQ(keys(less.diagnostics),
            (std::vector<std::string>{"sm_active", "occupancy", "gr_active", "tensor_hmma", "tensor_dfma"}));
  EXPECT_EQ(keys(less.counts),
            (std::vector<std::string>{"pcie_tx_bytes", "pcie_rx_bytes", "nvlink_tx_bytes"}));
  EXPECT_NE(less.note.find("Left out on this GPU: fp16, tensor_imma, nvlink_rx_bytes (not answered)."),
            std::string::npos);
  EXPECT_EQ(table_without_counters(t, {}, "x").note, t.note);
}

TEST_F(Gpm, SupportSaysWhyNot) {
  EXPECT_TRUE(gpm_support(nvml_->device(0)).supported);
  fake_nvml::state().gpm_supported = false;
  const GpmSupport no = gpm_support(nvml_->device(0));
  EXPECT_FALSE(no.supported);
  EXPECT_NE(no.why.find("Hopper or later"), std::string::npos);
  try {
    GpmSampler sampler(nvml_->device(0), 0, 0);
    FAIL() << "an unsupported GPU must throw";
  } catch (const core::DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("NVML GPM cannot be read on GPU 0"), std::string::npos);
    EXPECT_NE(e.fix().find("--source pm"), std::string::npos);
  }
}

TEST_F(Gpm, DriverWithoutGpmCalls) {
  functions_->gpm_query_support = nullptr;
  const GpmSupport no = gpm_support(nvml_->device(0));
  EXPECT_FALSE(no.supported);
  EXPECT_NE(no.why.find("no GPM calls"), std::string::npos);
}

TEST_F(Gpm, EachSampleGivesTheMetricsSinceThePreviousOne) {
  const NvmlDevice device = nvml_->device(0);
  {
    GpmSampler sampler(device, 1000 * kMs, 0);
    // The fake answers every metric but IMMA (id 9): the first pair leaves that column out.
    EXPECT_EQ(sampler.left_out(),
              (std::vector<std::string>{"NVML_GPM_METRIC_IMMA_TENSOR_UTIL: NVML_ERROR_NOT_SUPPORTED"}));
    EXPECT_EQ(
        keys(sampler.table().diagnostics),
        (std::vector<std::string>{"sm_active", "occupancy", "gr_active", "tensor_hmma", "tensor_dfma"}));
    const recording::TimeNs primed = 1000 * kMs;  // probe_ms 0: the first pair ends (almost) at once
    const auto s = sampler.sample(1500 * kMs);
    ASSERT_TRUE(s.has_value());
    EXPECT_GE(s->start_ns, primed);
    EXPECT_LT(s->start_ns, primed + 100 * kMs);
    EXPECT_EQ(s->end_ns, 1500 * kMs);
    // fp32 12 -> 46.3, tensor 5 -> 1.5, fp64 11 -> 0, fp16 13 -> 0, integer 4 -> 3, dram 10 -> 4.
    EXPECT_EQ(s->columns.units, (std::vector<double>{46.3, 1.5, 0, 0, 3, 4}));
    // sm 2 -> 50, occupancy 3 -> 20, graphics 1 -> 97, hmma 7 -> 1, dfma 6 -> 0.
    EXPECT_EQ(s->columns.diagnostics, (std::vector<double>{50, 20, 97, 1, 0}));
    // Rates in MiB/s become bytes over the sample: PCIe TX 10 MiB/s x 1048576 x (1.5 s - start).
    const double seconds = static_cast<double>(s->end_ns - s->start_ns) / 1e9;
    ASSERT_EQ(s->columns.counts.size(), 4u);
    EXPECT_DOUBLE_EQ(s->columns.counts[0], 10 * 1048576.0 * seconds);
    EXPECT_DOUBLE_EQ(s->columns.counts[1], 20 * 1048576.0 * seconds);
    EXPECT_TRUE(s->unread.empty());
    // Every unit the method weighs: GPM's six, then the three GPM does not see, NaN with why.
    ASSERT_EQ(s->units.size(), 9u);
    EXPECT_EQ(s->units[0].key, "fp32");
    EXPECT_DOUBLE_EQ(s->units[0].pct, 46.3);
    EXPECT_TRUE(s->units[0].why.empty());
    EXPECT_EQ(s->units[8].key, "l2");
    EXPECT_TRUE(std::isnan(s->units[8].pct));
    EXPECT_EQ(s->units[8].why, "GPM has no L2 metric");

    // The next sample starts where this one ended.
    fake_nvml::state().gpm_values[12] = 92.5;
    const auto next = sampler.sample(1600 * kMs);
    ASSERT_TRUE(next.has_value());
    EXPECT_EQ(next->start_ns, 1500 * kMs);
    EXPECT_DOUBLE_EQ(next->columns.units[0], 92.5);
    EXPECT_DOUBLE_EQ(next->columns.counts[0], 10 * 1048576.0 * 0.1);
  }
  EXPECT_EQ(fake_nvml::state().gpm_allocated, 0) << "both sample buffers are freed";
}

TEST_F(Gpm, AMetricTheDriverDoesNotAnswerIsNaNWithWhy) {
  GpmSampler sampler(nvml_->device(0), 0, 0);
  fake_nvml::state().gpm_metric_results[12] = nvml_abi::kErrorUnknown;
  const auto s = sampler.sample(200 * kMs);
  ASSERT_TRUE(s.has_value());
  EXPECT_TRUE(std::isnan(s->columns.units[0]));
  EXPECT_DOUBLE_EQ(s->columns.units[1], 1.5);
  EXPECT_EQ(s->unread, (std::vector<std::string>{"fp32: NVML_ERROR_UNKNOWN (Unknown Error)"}));
  EXPECT_TRUE(std::isnan(s->units[0].pct));
  EXPECT_FALSE(s->units[0].why.empty());
}

TEST_F(Gpm, AFailedSampleStartsANewPair) {
  GpmSampler sampler(nvml_->device(0), 0, 0);
  fake_nvml::state().gpm_sample_result = nvml_abi::kErrorGpuIsLost;
  EXPECT_FALSE(sampler.sample(100 * kMs).has_value());
  EXPECT_NE(sampler.last_error().find("nvmlGpmSampleGet: NVML_ERROR_GPU_IS_LOST"), std::string::npos);
  fake_nvml::state().gpm_sample_result = nvml_abi::kSuccess;
  EXPECT_FALSE(sampler.sample(200 * kMs).has_value()) << "the first good sample only starts a pair";
  const auto s = sampler.sample(300 * kMs);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->start_ns, 200 * kMs);
  EXPECT_EQ(s->end_ns, 300 * kMs);
}

TEST_F(Gpm, APairWithNoRefreshInsideStaysOpen) {
  // The driver refreshes GPM every 100 ms (kGpmRefreshNs); a shorter pair with no refresh reads 0 on
  // every metric. Such a pair under 200 ms is kept open, so the next sample spans both.
  GpmSampler sampler(nvml_->device(0), 0, 0);
  const auto first = sampler.sample(100 * kMs);
  ASSERT_TRUE(first.has_value());
  auto& values = fake_nvml::state().gpm_values;
  const auto busy = values;
  for (auto& [id, v] : values) v = 0;
  EXPECT_FALSE(sampler.sample(190 * kMs).has_value()) << "90 ms of zeros: no refresh, kept open";
  EXPECT_TRUE(sampler.last_error().empty());
  values = busy;
  const auto merged = sampler.sample(290 * kMs);
  ASSERT_TRUE(merged.has_value());
  EXPECT_EQ(merged->start_ns, 100 * kMs) << "the open pair and this one together";
  EXPECT_EQ(merged->end_ns, 290 * kMs);
  EXPECT_DOUBLE_EQ(merged->columns.units[0], 46.3);
  // Zeros over 200 ms or more are a reading: an idle GPU.
  for (auto& [id, v] : values) v = 0;
  const auto idle = sampler.sample(500 * kMs);
  ASSERT_TRUE(idle.has_value());
  EXPECT_EQ(idle->start_ns, 290 * kMs);
  EXPECT_DOUBLE_EQ(idle->columns.units[0], 0);
}

TEST_F(Gpm, NoUnitAnsweredIsAnError) {
  for (unsigned id : {4u, 5u, 10u, 11u, 12u, 13u}) fake_nvml::state().gpm_values.erase(id);
  EXPECT_THROW(GpmSampler(nvml_->device(0), 0, 0), core::DeviceError);
  EXPECT_EQ(fake_nvml::state().gpm_allocated, 0);
}

}  // namespace
}  // namespace diescope::collect::gpm_sampler_test
