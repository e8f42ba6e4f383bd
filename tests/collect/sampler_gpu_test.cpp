// The real sampler child on a real GPU (label gpu): it samples, its samples touch one another and
// lie on the host's clock, and it ends cleanly when asked. Skips without a driver or when another
// profiler holds the counters.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>
#include <string>

#include "diescope/collect/sampler.hpp"
#include "diescope/core/clock.hpp"

namespace diescope::collect {
namespace {

namespace m = sampler_msg;
using namespace std::chrono_literals;

TEST(SamplerGpu, SamplesDeviceWideAndStopsCleanly) {
  if (!dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL))
    GTEST_SKIP() << "no NVIDIA driver (libcuda.so.1) on this machine";
  SamplerConfig config;
  // DIESCOPE_TEST_BIN_DIR: the binaries' folder of a build copied elsewhere (bench/run/gpu_regression.sh).
  const char* bin_dir = std::getenv("DIESCOPE_TEST_BIN_DIR");
  config.executable =
      bin_dir != nullptr ? std::string(bin_dir) + "/diescope-cupti" : std::string(DIESCOPE_CUPTI_EXE);
  config.leading_args = {"sample"};
  config.interval_ms = 10;
  config.drain_ms = 100;
  config.metrics = {"gr__cycles_active.avg.pct_of_peak_sustained_elapsed", "dram__bytes.sum"};
  const recording::TimeNs started = core::realtime_ns();
  SamplerProcess child(config);
  std::vector<SamplerMessage> messages;
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  long samples = 0;
  while (samples < 40 && std::chrono::steady_clock::now() < deadline) {
    if (!child.pump_for(messages, 200ms)) break;
    samples = child.samples_received();
  }
  for (const auto& message : messages) {
    if (auto* error = std::get_if<m::Error>(&message)) {
      if (error->kind == m::ErrorKind::busy)
        GTEST_SKIP() << "counters held by another profiler: " << error->text;
      FAIL() << "sampler error: " << error->text;
    }
  }
  child.request_stop();
  while (child.pump_for(messages, 500ms)) {}
  SamplerExit exit = child.wait(10s);
  EXPECT_TRUE(exit.clean()) << exit.describe() << "\n" << exit.stderr_tail;

  std::vector<m::Sample> s;
  for (const auto& message : messages)
    if (auto* x = std::get_if<m::Sample>(&message)) s.push_back(*x);
  ASSERT_GE(s.size(), 40u);
  const recording::TimeNs ended = core::realtime_ns();
  for (std::size_t k = 1; k < s.size(); ++k) {
    if (s[k].end_ns <= s[k].start_ns) continue;  // untimed (the retimer places runs; a lone one may stay)
    EXPECT_EQ(s[k].values.size(), 2u);
    // A GPU-time trigger: 10 ms samples, each starting where the previous one ended (to 1 us).
    EXPECT_NEAR(static_cast<double>(s[k].end_ns - s[k].start_ns), 10e6, 1e3);
    EXPECT_NEAR(static_cast<double>(s[k].start_ns - s[k - 1].end_ns), 0, 1e3);
    // On the host's clock: inside the test's own time.
    EXPECT_GE(s[k].start_ns, started);
    EXPECT_LE(s[k].end_ns, ended);
  }
}

}  // namespace
}  // namespace diescope::collect
