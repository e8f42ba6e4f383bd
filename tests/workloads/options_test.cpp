#include <gtest/gtest.h>

#include "diescope/core/error.hpp"
#include "diescope/workloads/options.hpp"

using namespace diescope::workloads;

namespace {

template <typename T>
T parse_as(const std::vector<std::string>& args) {
  const ParsedCommand parsed = parse_command_line(args);
  EXPECT_TRUE(parsed.options.has_value()) << "help was returned instead of options";
  return std::get<T>(*parsed.options);
}

int usage_exit_code(const std::vector<std::string>& args) {
  try {
    parse_command_line(args);
  } catch (const diescope::core::UsageError& e) {
    EXPECT_FALSE(e.fix().empty());
    return e.exit_code();
  }
  return 0;
}

}  // namespace

TEST(WorkloadOptions, FfmaDefaultsLoadEverySmForFiveSeconds) {
  const auto o = parse_as<FfmaOptions>({"ffma"});
  EXPECT_EQ(o.sms, 0);  // 0: every SM of the device, resolved once the device is known
  EXPECT_DOUBLE_EQ(o.common.seconds, 5.0);
  EXPECT_EQ(o.common.device, 0);
}

TEST(WorkloadOptions, FfmaTakesSmsSecondsAndDevice) {
  const auto o = parse_as<FfmaOptions>({"ffma", "--sms", "66", "--seconds", "3.5", "--device", "1"});
  EXPECT_EQ(o.sms, 66);
  EXPECT_DOUBLE_EQ(o.common.seconds, 3.5);
  EXPECT_EQ(o.common.device, 1);
}

TEST(WorkloadOptions, BadValuesAreUsageErrors) {
  EXPECT_EQ(usage_exit_code({"ffma", "--sms", "0"}), diescope::core::kExitUsage);
  EXPECT_EQ(usage_exit_code({"ffma", "--seconds", "-1"}), diescope::core::kExitUsage);
  EXPECT_EQ(usage_exit_code({"ffma", "--seconds", "abc"}), diescope::core::kExitUsage);
  EXPECT_EQ(usage_exit_code({"ffma", "--frobnicate"}), diescope::core::kExitUsage);
  EXPECT_EQ(usage_exit_code({"gemm", "--m", "0"}), diescope::core::kExitUsage);
  EXPECT_EQ(usage_exit_code({"stream", "--elements", "10"}), diescope::core::kExitUsage);
  EXPECT_EQ(usage_exit_code({"stream", "--kernel", "scale"}), diescope::core::kExitUsage);
  EXPECT_EQ(usage_exit_code({"bogus"}), diescope::core::kExitUsage);
}

TEST(WorkloadOptions, StreamKernelChoice) {
  const auto defaults = parse_as<StreamOptions>({"stream"});
  EXPECT_EQ(defaults.kernels, std::vector{StreamKernel::copy});
  EXPECT_EQ(defaults.elements, std::uint64_t{268435456});  // 2^28 floats = 1 GiB per vector
  EXPECT_EQ(parse_as<StreamOptions>({"stream", "--kernel", "TRIAD"}).kernels,
            std::vector{StreamKernel::triad});
  const auto all = parse_as<StreamOptions>({"stream", "--kernel", "all", "--elements", "4096"});
  EXPECT_EQ(all.kernels, (std::vector{StreamKernel::copy, StreamKernel::triad}));  // copy first
  EXPECT_EQ(all.elements, std::uint64_t{4096});
}

TEST(WorkloadOptions, GemmDimensions) {
  const auto defaults = parse_as<GemmOptions>({"gemm"});
  EXPECT_EQ(defaults.m, 8192);
  EXPECT_EQ(defaults.n, 8192);
  EXPECT_EQ(defaults.k, 8192);
  const auto o = parse_as<GemmOptions>({"gemm", "--m", "4096", "--n", "2048", "--k", "1024"});
  EXPECT_EQ(o.m, 4096);
  EXPECT_EQ(o.n, 2048);
  EXPECT_EQ(o.k, 1024);
}

TEST(WorkloadOptions, DutyOnTimeMustFitThePeriod) {
  const auto o = parse_as<DutyOptions>({"duty", "--on-ms", "30", "--period-ms", "100"});
  EXPECT_DOUBLE_EQ(o.on_ms, 30.0);
  EXPECT_DOUBLE_EQ(o.period_ms, 100.0);
  const auto full = parse_as<DutyOptions>({"duty", "--on-ms", "100", "--period-ms", "100"});
  EXPECT_DOUBLE_EQ(full.on_ms, full.period_ms);  // always on is allowed
  try {
    parse_command_line({"duty", "--on-ms", "150", "--period-ms", "100"});
    FAIL() << "an on-time longer than the period was accepted";
  } catch (const diescope::core::UsageError& e) {
    EXPECT_NE(e.cause().find("--on-ms 150 is longer than --period-ms 100"), std::string::npos) << e.cause();
  }
  // 0.05 s cannot hold one 100 ms period.
  EXPECT_EQ(usage_exit_code({"duty", "--seconds", "0.05", "--period-ms", "100"}), diescope::core::kExitUsage);
}

TEST(WorkloadOptions, HelpIsReturnedNotRun) {
  const ParsedCommand overview = parse_command_line({});
  EXPECT_FALSE(overview.options.has_value());
  for (const char* name : {"ffma", "stream", "gemm", "duty"}) {
    EXPECT_NE(overview.help.find(name), std::string::npos) << name;
    const ParsedCommand help = parse_command_line({name, "--help"});
    EXPECT_FALSE(help.options.has_value()) << name;
    EXPECT_NE(help.help.find("--seconds"), std::string::npos) << name;
    EXPECT_NE(help.help.find("diescope: measure start"), std::string::npos) << name;
  }
  EXPECT_NE(parse_command_line({"ffma", "-h"}).help.find("--sms"), std::string::npos);
}

TEST(WorkloadOptions, CatalogNamesTheFour) {
  ASSERT_EQ(workload_catalog().size(), 4u);
  EXPECT_TRUE(is_workload("ffma"));
  EXPECT_TRUE(is_workload("duty"));
  EXPECT_FALSE(is_workload("FFMA"));
  EXPECT_FALSE(is_workload(""));
}
