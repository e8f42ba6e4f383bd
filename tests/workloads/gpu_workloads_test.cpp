// Runs each bundled workload briefly on the GPU and checks its markers and result line.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <sys/wait.h>
#include <vector>

namespace {

struct WorkloadRun {
  int exit_code = -1;
  std::vector<std::string> lines;
};

WorkloadRun run_workload(const std::string& args) {
  // DIESCOPE_WORKLOAD_BIN points at the executable when the build folder has moved (a copied build).
  const char* override_path = std::getenv("DIESCOPE_WORKLOAD_BIN");
  const std::string binary =
      override_path != nullptr ? override_path : std::string(DIESCOPE_BINARY_DIR) + "/bin/diescope-workload";
  const std::string command = binary + " " + args;
  WorkloadRun run;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return run;
  std::array<char, 65536> buffer{};
  while (std::fgets(buffer.data(), static_cast<int>(buffer.size()), pipe) != nullptr) {
    std::string line(buffer.data());
    if (!line.empty() && line.back() == '\n') line.pop_back();
    run.lines.push_back(line);
  }
  const int status = ::pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

bool have_gpu() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

// Every window: a start marker, a stop marker, then its JSON line. Returns the results in order.
std::vector<nlohmann::json> windows(const WorkloadRun& run) {
  std::vector<nlohmann::json> results;
  EXPECT_EQ(run.lines.size() % 3, 0u) << "stdout holds something other than whole windows";
  for (std::size_t i = 0; i + 2 < run.lines.size(); i += 3) {
    EXPECT_EQ(run.lines[i], "diescope: measure start");
    EXPECT_EQ(run.lines[i + 1], "diescope: measure stop");
    results.push_back(nlohmann::json::parse(run.lines[i + 2]));
  }
  return results;
}

#define REQUIRE_GPU() \
  if (!have_gpu()) GTEST_SKIP() << "no CUDA GPU on this machine"

}  // namespace

TEST(GpuWorkloads, FfmaOnAllAndOneSm) {
  REQUIRE_GPU();
  for (const std::string sms : {"", " --sms 1"}) {
    const WorkloadRun run = run_workload("ffma --seconds 0.3" + sms);
    ASSERT_EQ(run.exit_code, 0) << sms;
    const auto results = windows(run);
    ASSERT_EQ(results.size(), 1u);
    const auto& r = results[0];
    const double seconds = r["time_s"].get<double>();
    EXPECT_GT(seconds, 0.2);
    EXPECT_NEAR(r["result"]["tflops"].get<double>(), r["work"]["flops"].get<double>() / seconds / 1e12, 1e-6);
    const double mhz = r["clock"]["sm_mhz"].get<double>();
    EXPECT_GT(mhz, 100.0);
    EXPECT_LT(mhz, r["device"]["rated_max_sm_clock_mhz"].get<double>() * 1.1);
    const int used = r["result"]["sms_used"].get<int>();
    EXPECT_EQ(r["result"]["distinct_sms_seen"].get<int>(), used);
    const double loaded_pct = r["result"]["fma_pipe_pct_of_loaded_sms"].get<double>();
    EXPECT_GT(loaded_pct, 50.0);
    EXPECT_LT(loaded_pct, 101.0);
    // The device-wide figure is the loaded one scaled by loaded SMs over all SMs.
    EXPECT_NEAR(r["result"]["expected_fma_pipe_pct"].get<double>(),
                loaded_pct * used / r["device"]["sm_count"].get<double>(), 1e-6);
  }
}

TEST(GpuWorkloads, StreamCopyAndTriad) {
  REQUIRE_GPU();
  const WorkloadRun run = run_workload("stream --kernel all --elements 16777216 --seconds 0.2");
  ASSERT_EQ(run.exit_code, 0);
  const auto results = windows(run);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0]["config"]["kernel"], "copy");
  EXPECT_EQ(results[1]["config"]["kernel"], "triad");
  // 2^24 floats: copy moves 2 x 2^24 x 4 = 134217728 bytes a launch, triad 3 x 2^24 x 4 = 201326592.
  EXPECT_EQ(results[0]["work"]["bytes_per_launch"].get<std::uint64_t>(), 134217728u);
  EXPECT_EQ(results[1]["work"]["bytes_per_launch"].get<std::uint64_t>(), 201326592u);
  for (const auto& r : results) EXPECT_GT(r["result"]["gb_per_s"].get<double>(), 1.0);
}

TEST(GpuWorkloads, GemmRunsOnCublas) {
  REQUIRE_GPU();
  const WorkloadRun run = run_workload("gemm --m 1024 --n 1024 --k 1024 --seconds 0.2");
  ASSERT_EQ(run.exit_code, 0);
  const auto results = windows(run);
  ASSERT_EQ(results.size(), 1u);
  // 2 x 1024^3 = 2147483648 FLOP a call.
  EXPECT_DOUBLE_EQ(results[0]["work"]["flops_per_call"].get<double>(), 2147483648.0);
  EXPECT_GT(results[0]["result"]["tflops"].get<double>(), 0.1);
}

TEST(GpuWorkloads, DutyCycleReachesItsTarget) {
  REQUIRE_GPU();
  const WorkloadRun run = run_workload("duty --on-ms 10 --period-ms 40 --seconds 0.4");
  ASSERT_EQ(run.exit_code, 0);
  const auto results = windows(run);
  ASSERT_EQ(results.size(), 1u);
  // 10 of every 40 ms: 0.25; launch latency and timer granularity stay well inside 0.05.
  EXPECT_NEAR(results[0]["result"]["on_fraction"].get<double>(), 0.25, 0.05);
  EXPECT_EQ(results[0]["config"]["periods"].get<int>(), 10);
}

TEST(GpuWorkloads, BadDeviceIndexIsAUsageError) {
  REQUIRE_GPU();
  EXPECT_EQ(run_workload("ffma --device 999 --seconds 0.1 2>/dev/null").exit_code, 2);
}
