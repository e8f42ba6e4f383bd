// Every unit table fits one PM-sampling pass on every chip it lists, as CUPTI's profiler host API
// counts passes (through diescope-cupti; no GPU needed). Also shows the check can fail.
#include <gtest/gtest.h>

#include "diescope/collect/unit_tables.hpp"

namespace diescope::collect {
namespace {

const std::string kTool = DIESCOPE_CUPTI_TOOL;

TEST(UnitsPasses, every_table_fits_one_pass_on_every_chip_it_lists) {
  for (const auto& table : unit_tables()) {
    const auto metrics = table_metrics(table);
    for (const auto& chip : table.chips) {
      PassCheck check = check_passes(kTool, chip, metrics);
      EXPECT_TRUE(check.fits()) << table.name << " on " << chip << ": "
                                << (check.passes ? std::to_string(*check.passes) + " passes" : check.error)
                                << (check.rejected.empty() ? "" : ", unknown: " + check.rejected.front());
    }
  }
}

TEST(UnitsPasses, TheCheckSeesASetThatNeedsTwoPasses) {
  // GH100's plain FP64 counter takes 2 passes on its own (why Hopper reads the grouped form).
  PassCheck check =
      check_passes(kTool, "GH100", {"sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_elapsed"});
  ASSERT_TRUE(check.passes) << check.error;
  EXPECT_EQ(*check.passes, 2);
  EXPECT_FALSE(check.fits());
}

TEST(UnitsPasses, TheCheckNamesAnUnknownCounter) {
  PassCheck check = check_passes(
      kTool, "GA102",
      {"dram__bytes.sum", "l1tex__m_xbar2l1tex_read_sectors_realtime.avg.pct_of_peak_sustained_elapsed"});
  EXPECT_FALSE(check.fits());
  EXPECT_EQ(check.rejected,
            std::vector<std::string>{
                "l1tex__m_xbar2l1tex_read_sectors_realtime.avg.pct_of_peak_sustained_elapsed"});
}

TEST(UnitsPasses, AnUnknownChipIsAnErrorNotAPass) {
  PassCheck check = check_passes(kTool, "GX999", {"dram__bytes.sum"});
  EXPECT_FALSE(check.fits());
  EXPECT_NE(check.error.find("GX999"), std::string::npos) << check.error;
}

TEST(UnitsPasses, AMissingToolIsAnError) {
  PassCheck check = check_passes("/nonexistent/diescope-cupti", "GH100", {"dram__bytes.sum"});
  EXPECT_FALSE(check.fits());
  EXPECT_NE(check.error.find("could not run /nonexistent/diescope-cupti"), std::string::npos) << check.error;
}

}  // namespace
}  // namespace diescope::collect
