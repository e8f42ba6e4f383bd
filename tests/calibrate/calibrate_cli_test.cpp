// `diescope calibrate` as a user runs it: --help answers, a machine without an NVIDIA driver gets
// the cause, the fix and exit code 4, and (label gpu) a quick check on a real GPU writes a file
// that reads back. GPU tests skip themselves, with the reason, where there is no GPU.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/run_binary.hpp"

namespace {

namespace fs = std::filesystem;

using diescope::test::Ran;
using diescope::test::run_shell;

Ran run(const std::string& args) {
  return diescope::test::run_diescope_shell(args);
}

bool have_nvidia_device() {
  return fs::exists("/dev/nvidiactl") || fs::exists("/dev/nvidia0");
}

fs::path scratch(const std::string& name) {
  return diescope::test::scratch_dir("test-calibrate-cli", name);
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
  if (have_nvidia_device())
    GTEST_SKIP() << "this machine has an NVIDIA device: the no-driver path cannot be shown here";
  const fs::path dir = scratch("no_driver");
  const Ran r = run("calibrate --quick --output " + (dir / "x.json").string());
  EXPECT_EQ(r.exit_code, 4) << r.out;
  EXPECT_NE(r.out.find("fix:"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir / "x.json"));
}

TEST(CalibrateCli, BadGpuIndexIsAUsageError) {
#ifdef DIESCOPE_FAKE_NVML_DIR
  // The stand-in NVML lists one GPU.
  const Ran r = run_shell("env LD_LIBRARY_PATH=" + std::string(DIESCOPE_FAKE_NVML_DIR) + " " +
                          std::string(DIESCOPE_BINARY_DIR) + "/bin/diescope calibrate --quick --gpus 99");
#else
  if (!have_nvidia_device()) GTEST_SKIP() << "no NVIDIA device: NVML cannot count the GPUs here";
  const Ran r = run("calibrate --quick --gpus 99");
#endif
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("--gpus 99"), std::string::npos) << r.out;
}

#ifdef DIESCOPE_FAKE_NVML_DIR
// The whole command on the CPU: the stand-in libnvidia-ml.so.1, the fake sampler child and a
// stand-in diescope-workload (fake_calibrate_workload.py) beside a hard link to diescope, so every
// part of `diescope calibrate` but the kernels runs: probe, plan, the run machinery, the progress
// lines, measure_step from the recording, build_calibration, the file and the summary. The verdicts
// are whatever the fake figures give; only that they are there is checked.
TEST(CalibrateCli, QuickCheckEndToEndOnTheFakePath) {
  const fs::path dir = scratch("fake_path");
  std::error_code ec;
  fs::create_hard_link(fs::path(DIESCOPE_BINARY_DIR) / "bin" / "diescope", dir / "diescope", ec);
  if (ec) fs::copy_file(fs::path(DIESCOPE_BINARY_DIR) / "bin" / "diescope", dir / "diescope");
  fs::copy_file(DIESCOPE_FAKE_WORKLOAD, dir / "diescope-workload");
  fs::permissions(dir / "diescope-workload", fs::perms::owner_all, fs::perm_options::add);
  fs::create_directories(dir / "tmp");
  const std::string env = "env LD_LIBRARY_PATH=" + std::string(DIESCOPE_FAKE_NVML_DIR) +
                          " DIESCOPE_CUPTI=" + DIESCOPE_FAKE_SAMPLER_WRAPPER +
                          " DIESCOPE_TEST_FAKE_SAMPLER=" + DIESCOPE_FAKE_SAMPLER +
                          " XDG_DATA_HOME=" + (dir / "xdg").string() + " TMPDIR=" + (dir / "tmp").string() +
                          " ";
  const Ran r = run_shell(env + (dir / "diescope").string() + " calibrate --quick");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  // Progress: plain lines, since stderr is a pipe here; the summary; where the file went.
  EXPECT_NE(r.out.find("diescope: step 1/15: ffma 132/132 SMs (about 41 s left)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("diescope: step 15/15: stream"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Quick calibration of NVIDIA H200"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("A quick check is a setup check"), std::string::npos) << r.out;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir / "xdg" / "diescope" / "calibrations"))
    files.push_back(e.path());
  ASSERT_EQ(files.size(), 1u);
  EXPECT_NE(files[0].filename().string().find("-quick.json"), std::string::npos);
  std::ifstream in(files[0]);
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(j["kind"], "diescope-calibration");
  EXPECT_EQ(j["quick"], true);
  EXPECT_EQ(j["gpu"]["l2_bytes"], 52428800);  // the workload's device line, not NVML's
  std::vector<std::string> keys;
  for (const auto& u : j["units"]) keys.push_back(u["key"]);
  EXPECT_EQ(keys, (std::vector<std::string>{"fp32", "tensor", "fp64", "ldst", "l2", "dram"}));
  for (const auto& u : j["units"]) {
    ASSERT_FALSE(u["check"]["steps"].empty()) << u.dump();
    // Every step was measured from the recording: a reading and a counter window the work covers.
    for (const auto& step : u["check"]["steps"])
      EXPECT_TRUE(step["counted"].get<bool>() || step.contains("not_counted"));
  }
  EXPECT_EQ(j["device_model"]["stream"]["best_kernel"], "add");
  // The scratch folder is gone unless --keep.
  EXPECT_TRUE(fs::is_empty(dir / "tmp"));

  // --json --output FILE: the file on stdout, written where named, never over an existing file.
  const Ran again = run_shell(env + (dir / "diescope").string() + " calibrate --quick --json --output " +
                                  (dir / "named.json").string() + " 2>/dev/null",
                              false);
  ASSERT_EQ(again.exit_code, 0) << again.out;
  EXPECT_EQ(nlohmann::json::parse(again.out)["kind"], "diescope-calibration");
  EXPECT_TRUE(fs::exists(dir / "named.json"));
  const Ran exists = run_shell(env + (dir / "diescope").string() + " calibrate --quick --output " +
                               (dir / "named.json").string());
  EXPECT_EQ(exists.exit_code, 2) << exists.out;
}

// Counters held by another profiler, and no permission for them: exit 4, the cause and the fix,
// before the long part, and no file.
TEST(CalibrateCli, CountersBusyOrForbiddenStopWithTheFix) {
  for (const std::string kind : {"busy", "permission"}) {
    const fs::path dir = scratch("counters_" + kind);
    const fs::path wrapper = dir / "sampler.sh";
    std::ofstream(wrapper)
        << "#!/bin/sh\n[ \"$1\" = sample ] && shift\nexec \"$DIESCOPE_TEST_FAKE_SAMPLER\" \"$@\" "
           "--fail-with "
        << kind << "\n";
    fs::permissions(wrapper, fs::perms::owner_all, fs::perm_options::add);
    std::error_code ec;
    fs::create_hard_link(fs::path(DIESCOPE_BINARY_DIR) / "bin" / "diescope", dir / "diescope", ec);
    if (ec) fs::copy_file(fs::path(DIESCOPE_BINARY_DIR) / "bin" / "diescope", dir / "diescope");
    fs::copy_file(DIESCOPE_FAKE_WORKLOAD, dir / "diescope-workload");
    fs::permissions(dir / "diescope-workload", fs::perms::owner_all, fs::perm_options::add);
    const Ran r = run_shell(
        "env LD_LIBRARY_PATH=" + std::string(DIESCOPE_FAKE_NVML_DIR) + " DIESCOPE_CUPTI=" + wrapper.string() +
        " DIESCOPE_TEST_FAKE_SAMPLER=" + DIESCOPE_FAKE_SAMPLER + " XDG_DATA_HOME=" + (dir / "xdg").string() +
        " " + (dir / "diescope").string() + " calibrate --quick");
    EXPECT_EQ(r.exit_code, 4) << kind << ": " << r.out;
    EXPECT_NE(r.out.find("fix:"), std::string::npos) << kind << ": " << r.out;
    EXPECT_EQ(r.out.find("diescope: step 1/"), std::string::npos) << kind << ": the steps ran: " << r.out;
    EXPECT_FALSE(fs::exists(dir / "xdg" / "diescope" / "calibrations")) << kind;
    std::cout << kind << ":\n" << r.out;
  }
}
#endif

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
