// The options module (src/cli/options.hpp, docs/command-line.md#shared-options): each shared option's
// default, both ends of its range, the values just outside them, and the message a refusal gives.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "common/run_binary.hpp"
#include "options.hpp"

namespace diescope::cli {
namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();

// The refusal's cause and fix, or two empty strings when the value is taken.
std::pair<std::string, std::string> refusal(const NumberRule& rule, double value) {
  try {
    check_range(rule, value);
  } catch (const core::UsageError& e) {
    EXPECT_EQ(e.exit_code(), 2);
    return {e.cause(), e.fix()};
  }
  return {};
}

TEST(OptionsModule, DefaultsAreTheDocumentedOnes) {
  // docs/command-line.md#shared-options: 10 ms samples, a drain every 1000 ms, host probes every 100 ms.
  EXPECT_EQ(kIntervalMs.fallback, 10.0);
  EXPECT_EQ(kDrainMs.fallback, 1000.0);
  EXPECT_EQ(kHostIntervalMs.fallback, 100.0);
  // The libraries' own defaults are the same constants, not copies of the figures.
  EXPECT_EQ(recording::RecordingMeta{}.interval_ms, 10.0);
  EXPECT_EQ(recording::RecordingMeta{}.drain_ms, 1000.0);
}

TEST(OptionsModule, IntervalRangeIsPointOneToTenThousand) {
  EXPECT_TRUE(in_range(kIntervalMs, 0.1));
  EXPECT_TRUE(in_range(kIntervalMs, 10'000));
  EXPECT_FALSE(in_range(kIntervalMs, 0.09));
  EXPECT_FALSE(in_range(kIntervalMs, 10'000.5));
  EXPECT_FALSE(in_range(kIntervalMs, 0));  // 0 is no interval, not "off"
  EXPECT_FALSE(in_range(kIntervalMs, -5));
  EXPECT_FALSE(in_range(kIntervalMs, kNaN));
  const auto [cause, fix] = refusal(kIntervalMs, 20'000);
  EXPECT_EQ(cause, "--interval-ms 20000 is out of range");
  EXPECT_EQ(fix, "give a sample interval from 0.1 to 10000 ms (default 10)");
  EXPECT_EQ(refusal(kIntervalMs, -5).first, "--interval-ms -5 is out of range");
  EXPECT_EQ(refusal(kIntervalMs, 10).first, "");
}

TEST(OptionsModule, DrainRangeIsTenToSixtyThousand) {
  EXPECT_TRUE(in_range(kDrainMs, 10));
  EXPECT_TRUE(in_range(kDrainMs, 60'000));
  EXPECT_FALSE(in_range(kDrainMs, 9.99));
  EXPECT_FALSE(in_range(kDrainMs, 60'001));
  EXPECT_FALSE(in_range(kDrainMs, 0));
  EXPECT_FALSE(in_range(kDrainMs, kNaN));
  const auto [cause, fix] = refusal(kDrainMs, 1);
  EXPECT_EQ(cause, "--drain-ms 1 is out of range");
  EXPECT_EQ(fix, "give a drain period from 10 to 60000 ms (default 1000)");
}

TEST(OptionsModule, HostIntervalTakesZeroForOffAndOneToSixtyThousand) {
  EXPECT_TRUE(in_range(kHostIntervalMs, 0));
  EXPECT_TRUE(in_range(kHostIntervalMs, 1));
  EXPECT_TRUE(in_range(kHostIntervalMs, 60'000));
  EXPECT_FALSE(in_range(kHostIntervalMs, 0.5));
  EXPECT_FALSE(in_range(kHostIntervalMs, 60'000.1));
  EXPECT_FALSE(in_range(kHostIntervalMs, -1));
  EXPECT_FALSE(in_range(kHostIntervalMs, kNaN));
  const auto [cause, fix] = refusal(kHostIntervalMs, 0.5);
  EXPECT_EQ(cause, "--host-interval-ms 0.5 is out of range");
  EXPECT_EQ(fix, "give a host probe interval from 1 to 60000 ms, or 0 for no host probes (default 100)");
}

TEST(OptionsModule, HelpNamesTheDefaultFromTheRule) {
  EXPECT_EQ(rule_text(kIntervalMs, kIntervalMs.help), "chip counter sample interval in ms (default 10)");
  EXPECT_EQ(rule_text(kDrainMs, kDrainMs.help),
            "how often the counter buffer is decoded, in ms (default 1000)");
  EXPECT_EQ(rule_text(kHostIntervalMs, "every {default} ms, {min} to {max}"), "every 100 ms, 1 to 60000");
}

TEST(OptionsModule, ValueParsersNameTheOptionAndTheText) {
  EXPECT_EQ(parse_number("--x", "2.5", "--x 1"), 2.5);
  EXPECT_THROW(parse_number("--x", "ten", "--x 1"), core::UsageError);
  EXPECT_THROW(parse_number("--x", "1e999", "--x 1"), core::UsageError);
  EXPECT_EQ(parse_whole("--n", "-3", "--n 1"), -3);
  EXPECT_THROW(parse_whole("--n", "3.5", "--n 1"), core::UsageError);
  EXPECT_EQ(parse_gpu_index("--gpus", "7"), 7);
  EXPECT_THROW(parse_gpu_index("--gpus", "-1"), core::UsageError);
  try {
    parse_number("--interval-ms", "ten", "--interval-ms 10");
    ADD_FAILURE();
  } catch (const core::UsageError& e) {
    EXPECT_EQ(e.cause(), "--interval-ms 'ten' is not a number");
    EXPECT_EQ(e.fix(), "give a number, e.g. --interval-ms 10");
  }
  EXPECT_EQ(in_quotes("a\x01"), "'a\\x01'");
  EXPECT_EQ(closest_name("--interval-m", {"--interval-ms", "--drain-ms"}), "--interval-ms");
  EXPECT_EQ(did_you_mean("xyzzy", {"run", "report"}), "");
}

// docs/method.md#duty-cycles-in-run: ON/PERIOD in ms, each part at least one of run's 100 ms ticks.
TEST(OptionsModule, DutyTakesOnAndPeriodEachAtLeastOneLoopTick) {
  EXPECT_EQ(parse_duty("2000/10000", 100), std::make_pair(2000.0, 10000.0));
  EXPECT_EQ(parse_duty("100/200", 100), std::make_pair(100.0, 200.0));  // both parts exactly one tick
  auto cause = [](const std::string& text) {
    try {
      parse_duty(text, 100);
    } catch (const core::UsageError& e) {
      return e.cause();
    }
    return std::string();
  };
  EXPECT_EQ(cause("abc"), "--duty 'abc' is not ON/PERIOD");
  EXPECT_EQ(
      cause("50/1000"),
      "--duty 50/1000: the counters' on-time 50 ms is shorter than run's 100 ms loop, which switches them");
  // 1050 - 1000 = 50 ms off, under one 100 ms tick.
  EXPECT_EQ(cause("1000/1050"),
            "--duty 1000/1050: the period leaves the counters off for 50 ms, under run's 100 ms loop");
  EXPECT_NE(cause("x/100"), "");
}

// docs/command-line.md#backend-options: `roofline profile --help` lists each backend's flags under its
// heading, and -O, the old spelling, is not listed.
TEST(OptionsModule, RooflineHelpListsEachBackendsFlagsUnderItsHeading) {
  const test::Ran help = test::run_diescope({"roofline", "profile", "--help"});
  ASSERT_EQ(help.exit_code, 0) << help.err;
  std::map<std::string, std::vector<std::string>> listed;  // heading -> flags under it
  std::string heading;
  std::istringstream in(help.out);
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) {
      heading.clear();
    } else if (line.back() == ':' && line[0] != ' ') {
      heading = line.substr(0, line.size() - 1);
    } else if (!heading.empty() && line.rfind("  --", 0) == 0) {
      listed[heading].push_back(line.substr(2, line.find(' ', 2) - 2));
    }
  }
  EXPECT_EQ(listed["ncu backend"], (std::vector<std::string>{"--ncu", "--metrics", "--ncu-arg"}));
  EXPECT_EQ(listed["ncu and range backends"], (std::vector<std::string>{"--aslr"}));
  EXPECT_EQ(listed["range and sampled backends"], (std::vector<std::string>{"--lib"}));
  EXPECT_EQ(listed["sampled backend"],
            (std::vector<std::string>{"--iterations", "--interval-ms", "--threshold", "--gap-ms",
                                      "--min-window-ms", "--activity-ratio"}));
  EXPECT_EQ(help.out.find("-O "), std::string::npos) << help.out;
}

}  // namespace
}  // namespace diescope::cli
