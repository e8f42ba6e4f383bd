// top's live feed over the live session (docs/top.md#sources, docs/live-collection.md#who-reads-it):
// the power draw and the pids on NVML's process lists that top shows are the session's own reads, here
// of the swapped NVML function table, once a drain, and reach top's model.
#include <gtest/gtest.h>

#include <cerrno>
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

#include "diescope/collect/live_collection.hpp"
#include "diescope/core/clock.hpp"
#include "diescope/top/model.hpp"
#include "diescope/top/view_feed.hpp"
#include "nvml_fake.hpp"

namespace diescope::top {
namespace {

namespace fake = collect::fake_nvml;
// Above the largest pid_max the kernel allows (2^22): no process has it, so it has no name.
constexpr unsigned kNoSuchPid = 4'194'304;

// The stand-in NVML draws 412.25 W of a 700 W limit; its compute list holds this test's process and
// kNoSuchPid, its graphics list this test's process. A drain of 1000 ms, polled at 0, 10 ms and 1 s:
//   0      the session reads NVML: 412.25 W, pids (self, kNoSuchPid) ascending, counts 2 and 1;
//   10 ms  not a drain (due at 900 ms, a tenth early): the stand-in's draw is now 500 W, unread, so
//          the screen still shows 412.25 W and the same processes;
//   1 s    a drain: 500 W.
// The names are the kernel's: this program for itself (argv[0] without its folder), empty for a pid no
// process has; with attribution off, no holder.
TEST(TopLiveFeed, TheSessionsDrawAndProcessListReachTheModel) {
  auto nvml = std::make_shared<collect::Nvml>(fake::fake_functions());
  const auto self = static_cast<unsigned>(::getpid());
  fake::state().draw_mw = 412'250;
  fake::state().power_mw = 700'000;
  fake::state().compute_pids = {kNoSuchPid, self};
  fake::state().graphics_pids = {self};
  const recording::TimeNs t0 = core::realtime_ns();
  std::vector<collect::SessionGpu> gpus(1);
  gpus[0].telemetry = std::make_unique<collect::NvmlTelemetry>(nvml, 0, t0);  // no unit table: no counters
  auto session = std::make_unique<collect::LiveSession>(std::move(gpus), 10, 1000);
  const std::unique_ptr<ViewFeed> feed = make_live_feed(std::move(session), 1000, false);
  Model model(*feed, 1000);

  auto poll_at = [&](recording::TimeNs at) {
    std::vector<GpuUpdate> updates(1);
    feed->poll(at, updates);
    model.absorb(0, updates[0], at);
    return model.gpus(at).at(0);
  };
  const GpuFrame first = poll_at(t0);
  EXPECT_DOUBLE_EQ(first.power_w, 412.25);
  EXPECT_DOUBLE_EQ(first.power_limit_w, 700);
  EXPECT_EQ(first.compute_processes, 2);
  EXPECT_EQ(first.graphics_processes, 1);
  ASSERT_TRUE(first.processes.has_value());
  ASSERT_EQ(first.processes->size(), 2U);
  EXPECT_EQ((*first.processes)[0].pid, self);
  EXPECT_EQ((*first.processes)[0].name, std::string(program_invocation_short_name));
  EXPECT_EQ((*first.processes)[0].holder, "");
  EXPECT_EQ((*first.processes)[1].pid, kNoSuchPid);
  EXPECT_EQ((*first.processes)[1].name, "");

  fake::state().draw_mw = 500'000;
  const GpuFrame between = poll_at(t0 + 10 * recording::kNsPerMs);
  EXPECT_DOUBLE_EQ(between.power_w, 412.25);
  ASSERT_TRUE(between.processes.has_value());
  EXPECT_EQ(between.processes->size(), 2U);

  const GpuFrame next = poll_at(t0 + 1000 * recording::kNsPerMs);
  EXPECT_DOUBLE_EQ(next.power_w, 500);
  feed->shutdown();
}

}  // namespace
}  // namespace diescope::top
