// `diescope --help` and every command's --help against the committed text in tests/cli/golden/, so
// that an option cannot be renamed, added or dropped in one command without the change being seen
// (CONTRIBUTING.md, "Command-line options").
//
// To accept a deliberate change, regenerate the files and review the diff:
//   DIESCOPE_UPDATE_GOLDEN=1 ctest --test-dir build/ci -R HelpGolden
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "common/run_binary.hpp"

namespace diescope::test {
namespace {

namespace fs = std::filesystem;

struct HelpCase {
  const char* file;  // under tests/cli/golden/
  std::vector<std::string> args;
};

class HelpGolden : public ::testing::TestWithParam<HelpCase> {};

TEST_P(HelpGolden, MatchesTheCommittedText) {
  const HelpCase& c = GetParam();
  const Ran ran = run_diescope(c.args);
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  EXPECT_EQ(ran.err, "");
  const fs::path golden = fs::path(DIESCOPE_SOURCE_DIR) / "tests/cli/golden" / c.file;
  const char* update = std::getenv("DIESCOPE_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    std::ofstream(golden, std::ios::binary) << ran.out;
    GTEST_SKIP() << "wrote " << golden;
  }
  ASSERT_TRUE(fs::exists(golden)) << golden << " is missing; regenerate with DIESCOPE_UPDATE_GOLDEN=1";
  EXPECT_EQ(ran.out, read_all(golden))
      << "the --help text differs from " << golden
      << "; if the change is meant, regenerate with DIESCOPE_UPDATE_GOLDEN=1 and review the diff";
}

INSTANTIATE_TEST_SUITE_P(
    EveryCommand, HelpGolden,
    ::testing::Values(HelpCase{"diescope.txt", {"--help"}}, HelpCase{"run.txt", {"run", "--help"}},
                      HelpCase{"bench.txt", {"bench", "--help"}},
                      HelpCase{"report.txt", {"report", "--help"}},
                      HelpCase{"calibrate.txt", {"calibrate", "--help"}},
                      HelpCase{"workload.txt", {"workload", "--help"}},
                      HelpCase{"workload-ffma.txt", {"workload", "ffma", "--help"}},
                      HelpCase{"agent.txt", {"agent", "--help"}}, HelpCase{"top.txt", {"top", "--help"}},
                      HelpCase{"jobs.txt", {"jobs", "--help"}}, HelpCase{"units.txt", {"units", "--help"}},
                      HelpCase{"roofline.txt", {"roofline", "--help"}},
                      HelpCase{"roofline-profile.txt", {"roofline", "profile", "--help"}},
                      HelpCase{"roofline-plot.txt", {"roofline", "plot", "--help"}}),
    [](const ::testing::TestParamInfo<HelpCase>& param) {
      std::string name = param.param.file;
      name = name.substr(0, name.find('.'));
      for (char& ch : name)
        if (ch == '-') ch = '_';
      return name;
    });

// The convention itself, so that a golden file regenerated without care still cannot bring back a
// second name: no command lists an old spelling, and every command that takes an output folder or
// GPUs lists --output and --gpus.
TEST(HelpConvention, OneNamePerConcept) {
  for (const char* command : {"run", "bench", "report", "calibrate", "agent", "units"}) {
    const Ran ran = run_diescope({command, "--help"});
    ASSERT_EQ(ran.exit_code, 0) << command;
    for (const char* old : {"--report ", "--out ", "--gpu ", "--device ", "--poll-ms"})
      EXPECT_EQ(ran.out.find(old), std::string::npos) << command << " --help lists " << old;
  }
  for (const char* command : {"run", "bench", "report", "calibrate"})
    EXPECT_NE(run_diescope({command, "--help"}).out.find("--output"), std::string::npos) << command;
  for (const char* command : {"run", "bench", "calibrate", "agent", "units"})
    EXPECT_NE(run_diescope({command, "--help"}).out.find("--gpus"), std::string::npos) << command;
  for (const char* command : {"run", "bench", "agent"})
    EXPECT_NE(run_diescope({command, "--help"}).out.find("--drain-ms"), std::string::npos) << command;
}

// --help and the docs in step: every option a command's --help lists is named in the README or in
// docs/ (as "--name" not followed by more of a name, so --gpu does not count for --gpus).
TEST(HelpConvention, EveryListedOptionIsDocumented) {
  std::string docs = read_all(fs::path(DIESCOPE_SOURCE_DIR) / "README.md");
  for (const auto& entry : fs::directory_iterator(fs::path(DIESCOPE_SOURCE_DIR) / "docs"))
    if (entry.path().extension() == ".md") docs += read_all(entry.path());
  const std::regex listed("^  (--[a-z][a-z-]*)");
  for (const char* command : {"run", "bench", "report", "calibrate", "agent", "units", "jobs"}) {
    const Ran ran = run_diescope({command, "--help"});
    std::istringstream lines(ran.out);
    int options = 0;
    for (std::string line; std::getline(lines, line);) {
      std::smatch m;
      if (!std::regex_search(line, m, listed)) continue;
      ++options;
      const std::regex named(m[1].str() + "([^a-z-]|$)");
      EXPECT_TRUE(std::regex_search(docs, named))
          << command << " " << m[1] << " is in --help but not in the docs";
    }
    EXPECT_GT(options, 0) << command;
  }
}

}  // namespace
}  // namespace diescope::test
