// NVML on a real GPU (label gpu): identity, clocks, GPU-Util samples, engines and processes. Skips
// with the reason where there is no driver or no GPU.
#include <chrono>
#include <cmath>
#include <gtest/gtest.h>
#include <thread>

#include "diescope/collect/nvml.hpp"
#include "diescope/core/clock.hpp"

namespace diescope::collect {
namespace {

std::unique_ptr<Nvml> load_or_skip(std::string& why) {
  try {
    auto nvml = Nvml::load();
    if (nvml->device_count() == 0) {
      why = "NVML lists no GPU";
      return nullptr;
    }
    return nvml;
  } catch (const core::Error& e) {
    why = e.cause();
    return nullptr;
  }
}

TEST(NvmlGpu, IdentityClocksAndLimits) {
  std::string why;
  auto nvml = load_or_skip(why);
  if (!nvml) GTEST_SKIP() << "no GPU here: " << why;
  NvmlDevice device = nvml->device(0);
  recording::GpuIdentity id = device.identity();
  EXPECT_FALSE(id.model.empty());
  EXPECT_EQ(id.uuid.rfind("GPU-", 0), 0u) << id.uuid;
  EXPECT_FALSE(id.driver.empty());
  EXPECT_GE(id.compute_capability, 75);  // Turing or newer
  recording::ClockReading clocks = device.clocks(core::realtime_ns());
  EXPECT_GT(clocks.sm_mhz, 0);
  EXPECT_GT(clocks.mem_mhz, 0);
  EXPECT_GT(device.power_limit(core::realtime_ns()).limit_w, 0);
  EXPECT_TRUE(device.throttle_reasons(core::realtime_ns()).mask.has_value());
  recording::ProcessReading processes = device.processes(core::realtime_ns());
  EXPECT_GE(processes.compute, 0);
  EXPECT_GE(processes.graphics, 0);
}

TEST(NvmlGpu, GpuUtilSamplesArriveAndAreInPercent) {
  std::string why;
  auto nvml = load_or_skip(why);
  if (!nvml) GTEST_SKIP() << "no GPU here: " << why;
  NvmlDevice device = nvml->device(0);
  const recording::TimeNs start = core::realtime_ns();
  GpuUtilReader reader(device, start);
  std::vector<recording::UtilSample> out;
  // NVML keeps a sample about every 200 ms on the GPUs seen so far: 1.5 s of reads must bring some.
  for (int i = 0; i < 15; ++i) {
    reader.read(core::realtime_ns(), out);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_FALSE(reader.polling()) << reader.reason_text();
  ASSERT_FALSE(out.empty());
  for (const auto& s : out) {
    EXPECT_GE(s.pct, 0);
    EXPECT_LE(s.pct, 100);
    EXPECT_EQ(s.pct, std::floor(s.pct));  // whole percents
    EXPECT_GT(s.ts_ns, start - 2 * recording::kNsPerSecond);
    EXPECT_LT(s.ts_ns,
              core::realtime_ns() + recording::kNsPerSecond);  // NVML's stamps are on the host's wall clock
  }
}

}  // namespace
}  // namespace diescope::collect
