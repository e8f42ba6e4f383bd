#include <gtest/gtest.h>

#include <fstream>

#include "diescope/core/error.hpp"
#include "diescope/workloads/launcher.hpp"

namespace fs = std::filesystem;
using namespace diescope::workloads;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("diescope-workloads-test-" + std::to_string(::getpid()));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

}  // namespace

TEST(WorkloadLauncher, BinaryIsLookedForBesideDiescope) {
  EXPECT_EQ(workload_binary_beside("/opt/diescope/bin/diescope"),
            fs::path("/opt/diescope/bin/diescope-workload"));
}

TEST(WorkloadLauncher, CurrentExecutableIsThisTest) {
  EXPECT_EQ(current_executable().filename(), "workloads_test");
}

TEST(WorkloadLauncher, MissingBinaryNamesThePathAndTheFix) {
  TempDir dir;
  try {
    find_workload_binary(dir.path / "diescope");
    FAIL() << "a missing diescope-workload was accepted";
  } catch (const diescope::core::Error& e) {
    EXPECT_NE(e.cause().find((dir.path / "diescope-workload").string()), std::string::npos) << e.cause();
    EXPECT_NE(e.fix().find("diescope-workload"), std::string::npos) << e.fix();
    EXPECT_EQ(e.exit_code(), diescope::core::kExitDevice);
  }
}

TEST(WorkloadLauncher, NonExecutableBinaryIsRefused) {
  TempDir dir;
  const fs::path binary = dir.path / "diescope-workload";
  std::ofstream(binary) << "#!/bin/sh\n";
  fs::permissions(binary, fs::perms::owner_read | fs::perms::owner_write);
  try {
    find_workload_binary(dir.path / "diescope");
    FAIL() << "a non-executable diescope-workload was accepted";
  } catch (const diescope::core::Error& e) {
    EXPECT_NE(e.cause().find("not executable"), std::string::npos) << e.cause();
  }
  fs::permissions(binary, fs::perms::owner_all);
  EXPECT_EQ(find_workload_binary(dir.path / "diescope"), binary);
}

TEST(WorkloadLauncher, FailedExecThrowsInsteadOfReturning) {
  TempDir dir;
  // A folder cannot be executed: execv fails and the error says which path.
  try {
    exec_workload(dir.path, {"ffma"});
    FAIL() << "exec_workload returned without an error";
  } catch (const diescope::core::Error& e) {
    EXPECT_NE(e.cause().find("cannot start " + dir.path.string()), std::string::npos) << e.cause();
  }
}
