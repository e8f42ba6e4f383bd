// Where calibrate_gpu writes the file (write_calibration_output): a .json name, a folder, or the
// default folder; never over an existing file. The whole command runs in calibrate_cli_test.
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "diescope/calibrate/calibrate.hpp"
#include "diescope/core/error.hpp"
#include "helpers.hpp"

namespace diescope::calibrate {
namespace {

using namespace test;

// Sets an environment variable (or unsets it, with nullopt) for one test and puts it back after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      ::setenv(name, value->c_str(), 1);
    else
      ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(CalibrateOutput, AJsonNameIsTheFileAndIsNeverOverwritten) {
  const fs::path dir = scratch("output-file");
  const fs::path path = dir / "new" / "h200.json";  // its folder does not exist yet
  EXPECT_EQ(write_calibration_output(h200_file(), path.string()), path);
  EXPECT_EQ(read_text(path), dump_calibration(h200_file()));
  try {
    write_calibration_output(h200_file("2026-12-01T00:00:00Z"), path.string());
    FAIL() << "wrote over " << path;
  } catch (const core::UsageError& e) {
    EXPECT_EQ(e.cause(), "--output " + path.string() + " exists");
    EXPECT_EQ(e.exit_code(), core::kExitUsage);
  }
  EXPECT_EQ(read_text(path), dump_calibration(h200_file()));  // untouched
}

TEST(CalibrateOutput, AnyOtherNameIsAFolder) {
  const fs::path dir = scratch("output-folder");
  // calibration_file_name: chip, driver, date without separators, full or quick.
  EXPECT_EQ(write_calibration_output(h200_file(), (dir / "cal").string()),
            dir / "cal" / "GH100-580.159.04-20261130T123456Z-full.json");
  // A folder that happens to end in .json is still a folder; a second file of the same name gets "-2".
  fs::create_directories(dir / "cal.json");
  EXPECT_EQ(write_calibration_output(h200_file(), (dir / "cal.json").string()),
            dir / "cal.json" / "GH100-580.159.04-20261130T123456Z-full.json");
  EXPECT_EQ(write_calibration_output(h200_file(), (dir / "cal.json").string()),
            dir / "cal.json" / "GH100-580.159.04-20261130T123456Z-full-2.json");
}

TEST(CalibrateOutput, NoNameIsTheDefaultFolder) {
  const fs::path dir = scratch("output-default");
  {
    const ScopedEnv xdg("XDG_DATA_HOME", dir.string());
    EXPECT_EQ(write_calibration_output(h200_file(), ""),
              dir / "diescope" / "calibrations" / "GH100-580.159.04-20261130T123456Z-full.json");
  }
  const ScopedEnv xdg("XDG_DATA_HOME", std::nullopt);
  const ScopedEnv home("HOME", std::nullopt);
  try {
    write_calibration_output(h200_file(), "");
    FAIL() << "wrote without a folder";
  } catch (const core::UsageError& e) {
    EXPECT_EQ(e.cause(), "no folder for calibration files: neither XDG_DATA_HOME nor HOME is set");
    EXPECT_EQ(e.fix(), "give --output PATH, or set HOME");
  }
}

}  // namespace
}  // namespace diescope::calibrate
