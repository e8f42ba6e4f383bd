// The summary of several GPUs (docs/method.md#several-gpus) on hand-built report documents: the
// least-used GPU and the gap between GPUs, ties, the busy rule at its threshold, a GPU without
// DIE-Util, the steady window before the run, NVLink rates, gpus.json's nulls and the printed text.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "diescope/report/gpus_summary.hpp"

namespace diescope::report {
namespace {

using nlohmann::json;

// A report document with only what the summary reads. A NaN figure is written as null, as
// build_report writes a figure it could not compute.
json report_of(int index, double gpu_util, double die_util, const std::string& limiting = "FP32") {
  json headline = json::object();
  headline["gpu_util_pct"] = std::isfinite(gpu_util) ? json(gpu_util) : json(nullptr);
  headline["die_util_pct"] = std::isfinite(die_util) ? json(die_util) : json(nullptr);
  json r;
  r["gpu"] = {{"index", index}, {"uuid", "GPU-" + std::to_string(index)}, {"model", "NVIDIA H200"}};
  r["window"] = {{"found", false}, {"how", "no markers"}};
  r["results"] = {
      {"headline", headline}, {"limiting_unit_label", limiting}, {"rates_per_s", {{"dram_bytes", 1e9}}}};
  return r;
}

GpusSummary summary_of(const std::vector<json>& reports) {
  std::vector<GpuFigures> figures;
  for (const json& r : reports)
    figures.push_back(gpu_figures(r, "r" + std::to_string(r["gpu"]["index"].get<int>())));
  return summarise_gpus(figures);
}

TEST(GpusSummary, LeastUsedAndGapBetweenTwoBusyGpus) {
  // GPU 0 DIE-Util 60.3, GPU 1 20.1: GPU 1 is the least used, 60.3 - 20.1 = 40.2 points below GPU 0.
  // Both GPU-Utils (97, 88) are at least 5%: both busy.
  const GpusSummary s = summary_of({report_of(1, 88.0, 20.1), report_of(0, 97.0, 60.3)});
  ASSERT_EQ(s.gpus.size(), 2u);
  EXPECT_EQ(s.gpus[0].index, 0);  // sorted by index
  ASSERT_TRUE(s.least_used.has_value());
  EXPECT_EQ(*s.least_used, 1);
  EXPECT_EQ(*s.most_used, 0);
  EXPECT_DOUBLE_EQ(s.gap_points, 40.2);
  EXPECT_EQ(s.busy, (std::vector<int>{0, 1}));
  EXPECT_TRUE(s.idle.empty());
  EXPECT_EQ(s.busy_wording, "every GPU was busy (GPU-Util at least 5%)");
  EXPECT_EQ(gpus_summary_text(s),
            "\nAll 2 GPUs, over the run:\n"
            "  GPU 0  GPU-Util  97.0%  DIE-Util  60.3%  limiting FP32\n"
            "  GPU 1  GPU-Util  88.0%  DIE-Util  20.1%  limiting FP32\n"
            "least used: GPU 1 (DIE-Util 20.1%), 40.2 points below GPU 0 (60.3%)\n"
            "busy: every GPU was busy (GPU-Util at least 5%)\n"
            "NVLink: n/a (the recording's unit table counts no NVLink bytes (GPM's does: --source gpm))\n");
}

TEST(GpusSummary, TieGoesToTheLowestIndex) {
  const GpusSummary s = summary_of({report_of(0, 90.0, 30.0), report_of(1, 90.0, 30.0)});
  EXPECT_EQ(*s.least_used, 0);
  EXPECT_EQ(*s.most_used, 0);
  EXPECT_DOUBLE_EQ(s.gap_points, 0.0);
  const std::string text = gpus_summary_text(s);
  EXPECT_NE(text.find("least used: GPU 0 (DIE-Util 30.0%), level with every other GPU (gap 0.0 points)\n"),
            std::string::npos)
      << text;
}

TEST(GpusSummary, OnlyOneGpuBusySaysSo) {
  // GPU 1's GPU-Util 0 is under 5%: idle. The least used is GPU 1 (DIE-Util 0.0), 60.0 points below.
  const GpusSummary s = summary_of({report_of(0, 97.0, 60.0), report_of(1, 0.0, 0.0, "")});
  EXPECT_EQ(s.busy, (std::vector<int>{0}));
  EXPECT_EQ(s.idle, (std::vector<int>{1}));
  EXPECT_EQ(s.busy_wording, "only GPU 0 was busy (GPU-Util at least 5%); GPU 1 was idle");
  EXPECT_EQ(*s.least_used, 1);
  EXPECT_DOUBLE_EQ(s.gap_points, 60.0);
  const json j = gpus_summary_json(s);
  EXPECT_EQ(j["busy_gpus"], json::array({0}));
  EXPECT_EQ(j["idle_gpus"], json::array({1}));
  EXPECT_EQ(j["gpus"][1]["busy"], false);
  EXPECT_TRUE(j["gpus"][1]["limiting_unit"].is_null());
}

TEST(GpusSummary, BusyThresholdAndDieUtilStandingInForGpuUtil) {
  // 5.0 is busy, 4.9 is not; without GPU-Util, DIE-Util 7.0 decides (busy); with neither, unknown.
  const GpusSummary s = summary_of(
      {report_of(0, 5.0, 3.0), report_of(1, 4.9, 3.0), report_of(2, NAN, 7.0), report_of(3, NAN, NAN)});
  EXPECT_EQ(s.busy, (std::vector<int>{0, 2}));
  EXPECT_EQ(s.idle, (std::vector<int>{1}));
  EXPECT_EQ(s.unknown, (std::vector<int>{3}));
  EXPECT_EQ(
      s.busy_wording,
      "GPUs 0 and 2 were busy (GPU-Util at least 5%); GPU 1 was idle; GPU 3 cannot be told (no GPU-Util "
      "or DIE-Util)");
  // GPU 3 has no DIE-Util and is left out of the comparison: least GPU 0 (3.0, the lower index of
  // the tie with GPU 1), most GPU 2 (7.0), gap 4.0.
  EXPECT_EQ(*s.least_used, 0);
  EXPECT_EQ(*s.most_used, 2);
  EXPECT_DOUBLE_EQ(s.gap_points, 4.0);
  EXPECT_EQ(gpus_summary_json(s)["gpus"][3]["busy"], nullptr);
}

TEST(GpusSummary, NoComparisonWithoutTwoDieUtils) {
  const GpusSummary s = summary_of({report_of(0, 97.0, 60.0), report_of(1, 97.0, NAN)});
  EXPECT_FALSE(s.least_used.has_value());
  EXPECT_TRUE(std::isnan(s.gap_points));
  EXPECT_EQ(s.least_used_reason, "1 of 2 GPUs have a DIE-Util");
  const json j = gpus_summary_json(s);
  EXPECT_TRUE(j["least_used_gpu"].is_null());
  EXPECT_EQ(j["gap_points_reason"], "1 of 2 GPUs have a DIE-Util");
  EXPECT_TRUE(j["gpus"][1]["die_util_pct"].is_null());
  EXPECT_EQ(j["gpus"][1]["die_util_pct_reason"], "the headline has no DIE-Util");
  EXPECT_EQ(summary_of({report_of(0, 97.0, 60.0)}).least_used_reason, "one GPU was measured");
}

TEST(GpusSummary, SteadyWindowBeforeTheRun) {
  json r = report_of(0, 90.0, 40.0);
  json window_results;
  window_results["headline"] = {{"gpu_util_pct", 99.0}, {"die_util_pct", 50.0}};
  window_results["limiting_unit_label"] = "DRAM";
  r["window"] = {{"found", true}, {"results", window_results}};
  const GpuFigures g = gpu_figures(r, "x/report.json");
  EXPECT_EQ(g.span, "window");
  EXPECT_DOUBLE_EQ(g.die_util_pct, 50.0);
  EXPECT_DOUBLE_EQ(g.gpu_util_pct, 99.0);
  EXPECT_EQ(g.limiting_unit, "DRAM");
  EXPECT_EQ(g.report, "x/report.json");
}

TEST(GpusSummary, NvlinkRatesWhereCounted) {
  // GPM's NVLink columns: 1000 MiB/s each way is 1000 x 2^20 = 1,048,576,000 B/s, printed 1.05 GB/s.
  json a = report_of(0, 97.0, 60.0);
  a["results"]["rates_per_s"] = {{"nvlink_tx_bytes", 1048576000.0}, {"nvlink_rx_bytes", 524288000.0}};
  json b = report_of(1, 97.0, 50.0);
  b["results"]["rates_per_s"] = {{"nvlink_tx_bytes", nullptr},
                                 {"nvlink_tx_bytes_reason", "no raw count in the usable samples"},
                                 {"nvlink_rx_bytes", nullptr}};
  const GpusSummary s = summary_of({a, b});
  EXPECT_DOUBLE_EQ(s.gpus[0].nvlink_tx_bytes_per_s, 1048576000.0);
  EXPECT_TRUE(std::isnan(s.gpus[1].nvlink_tx_bytes_per_s));
  EXPECT_EQ(s.gpus[1].nvlink_reason, "no raw count in the usable samples");
  const std::string text = gpus_summary_text(s);
  EXPECT_NE(text.find("NVLink GPU 0: sent 1.05 GB/s, received 0.52 GB/s\n"), std::string::npos) << text;
  EXPECT_NE(text.find("NVLink GPU 1: n/a (no raw count in the usable samples)\n"), std::string::npos) << text;
  const json j = gpus_summary_json(s);
  EXPECT_DOUBLE_EQ(j["gpus"][0]["nvlink_rx_bytes_per_s"].get<double>(), 524288000.0);
  EXPECT_TRUE(j["gpus"][1]["nvlink_tx_bytes_per_s"].is_null());
}

}  // namespace
}  // namespace diescope::report
