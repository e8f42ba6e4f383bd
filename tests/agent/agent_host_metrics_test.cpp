// The agent's host metrics (docs/agent.md#host-metrics): the host probes on the fixture /proc trees
// of tests/collect/host (t0, then t1 100 ms later), through metrics::Pipeline, on /metrics under the
// recording's metric names. Expected values are worked out from the fixture files by hand (the
// same files tests/collect/host/host_probes_test.cpp reads).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "diescope/agent/host_metrics.hpp"
#include "diescope/agent/metrics.hpp"

namespace diescope::agent {
namespace {

namespace fs = std::filesystem;

const fs::path kFixtures = fs::path(DIESCOPE_SOURCE_DIR) / "tests/collect/host/fixtures";
constexpr recording::TimeNs kT0 = 1'796'130'000'000'000'000;
constexpr recording::TimeNs kMono0 = 1'000'000'000;
constexpr recording::TimeNs kStep = 100'000'000;

HostMetrics fixture_metrics() {
  collect::HostProbeOptions o;
  o.proc = kFixtures / "t0";
  o.sys_block = kFixtures / "sys_block";
  o.page_bytes = 4096;
  return HostMetrics(o);
}

const HostFigure* find(const std::vector<HostFigure>& figures, const std::string& name,
                       const std::string& scope) {
  for (const HostFigure& f : figures)
    if (f.descriptor.full_name() == name && metrics::scope_word(f.descriptor.scope) == scope) return &f;
  return nullptr;
}

const std::string kBusy = "cpu__cycles_busy.avg.pct_of_peak_sustained_elapsed";

TEST(HostMetrics, TwoReadsThroughThePipeline) {
  HostMetrics host = fixture_metrics();
  host.read(kT0, kMono0);
  EXPECT_TRUE(host.publish(kT0).empty()) << "one read: no span to publish yet";
  host.set_proc_root(kFixtures / "t1");
  host.read(kT0 + kStep, kMono0 + kStep);
  const std::vector<HostFigure>& f = host.publish(kT0 + kStep);
  // Host CPU over the 100 ms: user +70, system +20 of 200 jiffies = 45%; cpu0 80%, cpu1 10%. One
  // value over the whole span: min, mean and max are that value.
  const HostFigure* busy = find(f, kBusy, "system");
  ASSERT_NE(busy, nullptr);
  EXPECT_DOUBLE_EQ(busy->mean, 45.0);
  EXPECT_DOUBLE_EQ(busy->min, 45.0);
  EXPECT_DOUBLE_EQ(busy->max, 45.0);
  ASSERT_NE(find(f, kBusy, "cpu:0"), nullptr);
  EXPECT_DOUBLE_EQ(find(f, kBusy, "cpu:0")->mean, 80.0);
  EXPECT_DOUBLE_EQ(find(f, kBusy, "cpu:1")->mean, 10.0);
  // nvme0n1 moved in the span: busy 50 of 100 ms; 3 requests in flight at t1 (a level).
  ASSERT_NE(find(f, "disk__busy.pct", "device:nvme0n1"), nullptr);
  EXPECT_DOUBLE_EQ(find(f, "disk__busy.pct", "device:nvme0n1")->mean, 50.0);
  EXPECT_DOUBLE_EQ(find(f, "disk__inflight", "device:nvme0n1")->max, 3.0);
  // Memory available: 4096000 kB at both reads, a level.
  ASSERT_NE(find(f, "mem__available_bytes", "system"), nullptr);
  EXPECT_DOUBLE_EQ(find(f, "mem__available_bytes", "system")->mean, 4096000.0 * 1024);
  // No process tree in the agent: no process streams.
  for (const HostFigure& h : f)
    EXPECT_EQ(metrics::scope_word(h.descriptor.scope).rfind("process:", 0), std::string::npos);

  // /metrics: one family, labelled with the recording's names.
  const std::string text =
      render_metrics({}, AgentInfo{"live", 2000, 60000, 1000}, ExpositionFormat::prometheus_text, f);
  EXPECT_NE(text.find("# TYPE diescope_host_metric gauge\n"), std::string::npos);
  EXPECT_NE(text.find("diescope_host_metric{metric=\"cpu__cycles_busy.avg.pct_of_peak_sustained_elapsed\","
                      "scope=\"system\",unit=\"pct\",stat=\"mean\"} 45\n"),
            std::string::npos)
      << text;
  // No host figures: no family.
  EXPECT_EQ(render_metrics({}, AgentInfo{"replay", 2000, 60000, 1000}, ExpositionFormat::prometheus_text)
                .find("diescope_host_metric"),
            std::string::npos);
}

TEST(HostMetrics, APublishWithoutNewReadsKeepsThePreviousFigures) {
  HostMetrics host = fixture_metrics();
  host.read(kT0, kMono0);
  host.set_proc_root(kFixtures / "t1");
  host.read(kT0 + kStep, kMono0 + kStep);
  const std::size_t n = host.publish(kT0 + kStep).size();
  ASSERT_GT(n, 0u);
  EXPECT_EQ(host.publish(kT0 + 2 * kStep).size(), n);
  EXPECT_DOUBLE_EQ(find(host.figures(), kBusy, "system")->mean, 45.0);
}

}  // namespace
}  // namespace diescope::agent
