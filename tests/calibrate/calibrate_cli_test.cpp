// `diescope calibrate` as a user runs it: --help answers, a machine without an NVIDIA driver gets
// the cause, the fix and exit code 4, and (label gpu) a quick check on a real GPU writes a file
// that reads back. GPU tests skip themselves, with the reason, where there is no GPU.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace {

namespace fs = std::filesystem;

struct Ran {
  int exit_code = -1;
  std::string out;  // stdout and stderr together
};

Ran run(const std::string& args) {
  const std::string command = std::string(DIESCOPE_BINARY_DIR) + "/bin/diescope " + args + " 2>&1";
  Ran r;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buffer{};
  while (std::fgets(buffer.data(), static_cast<int>(buffer.size()), pipe) != nullptr) r.out += buffer.data();
  const int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

bool have_nvidia_device() { return fs::exists("/dev/nvidiactl") || fs::exists("/dev/nvidia0"); }

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::path(DIESCOPE_BINARY_DIR) / "test-calibrate-cli" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

#ifndef DIESCOPE_CALIBRATE_GPU_TEST
TEST(CalibrateCli, HelpAnswers) {
  const Ran r = run("calibrate --help");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  for (const char* want : {"--quick", "--gpus", "--output", "--json", "under a minute", "calibration file"})
    EXPECT_NE(r.out.find(want), std::string::npos) << want << " missing from:\n" << r.out;
  EXPECT_NE(run("--help").out.find("calibrate"), std::string::npos);
}

TEST(CalibrateCli, NoDriverSaysWhyAndExits4) {
  if (have_nvidia_device()) GTEST_SKIP() << "this machine has an NVIDIA device: the no-driver path cannot be shown here";
  const fs::path dir = scratch("no_driver");
  const Ran r = run("calibrate --quick --output " + (dir / "x.json").string());
  EXPECT_EQ(r.exit_code, 4) << r.out;
  EXPECT_NE(r.out.find("fix:"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir / "x.json"));
}

TEST(CalibrateCli, BadGpuIndexIsAUsageError) {
  if (!have_nvidia_device()) GTEST_SKIP() << "no NVIDIA device: NVML cannot count the GPUs here";
  const Ran r = run("calibrate --quick --gpus 99");
  EXPECT_EQ(r.exit_code, 2) << r.out;
}

#else
// label gpu (calibrate_gpu_test): a real quick check.
TEST(CalibrateGpu, QuickCheckWritesAFileThatReadsBack) {
  if (!have_nvidia_device()) GTEST_SKIP() << "no NVIDIA GPU on this machine";
  const fs::path dir = scratch("quick");
  const Ran r = run("calibrate --quick --output " + (dir / "quick.json").string());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::ifstream in(dir / "quick.json");
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(j["kind"], "diescope-calibration");
  EXPECT_EQ(j["quick"], true);
  bool fp32 = false, dram = false;
  for (const auto& u : j["units"]) {
    fp32 = fp32 || u["key"] == "fp32";
    dram = dram || u["key"] == "dram";
  }
  EXPECT_TRUE(fp32 && dram) << j["units"].dump();
  EXPECT_NE(r.out.find("FP32"), std::string::npos) << r.out;
}
#endif

}  // namespace
