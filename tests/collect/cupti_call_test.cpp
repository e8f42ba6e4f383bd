// The one CUPTI check (src/collect/cupti/cupti_call.hpp), with fake result codes: no GPU needed,
// only CUPTI's library for its names.
#include <cupti_profiler_target.h>

#include <string>

#include <gtest/gtest.h>

#include "cupti_call.hpp"

namespace diescope::collect::cupti {
namespace {

// Stands in for a CUPTI call: returns what it is told to.
CUptiResult fake_call(CUptiResult result) {
  return result;
}

TEST(CuptiCall, SuccessPasses) {
  EXPECT_NO_THROW(DIESCOPE_CUPTI_CHECK(fake_call(CUPTI_SUCCESS)));
}

TEST(CuptiCall, AFailureNamesTheCallItsFileAndLineAndCuptisName) {
  int line = 0;
  try {
    line = __LINE__ + 1;
    DIESCOPE_CUPTI_CHECK(fake_call(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES));
    FAIL() << "a failed call did not throw";
  } catch (const CuptiError& e) {
    const std::string where = "cupti_call_test.cpp:" + std::to_string(line);
    EXPECT_EQ(e.call(), "fake_call(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)");
    EXPECT_EQ(e.location(), where);
    EXPECT_EQ(e.result(), CUPTI_ERROR_INSUFFICIENT_PRIVILEGES);
    EXPECT_EQ(e.result_name(), "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES");
    const std::string start = "fake_call(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES) failed at " + where +
                              ": CUPTI_ERROR_INSUFFICIENT_PRIVILEGES";
    EXPECT_EQ(e.cause().substr(0, start.size()), start) << e.cause();
    EXPECT_EQ(e.cause().find('\n'), std::string::npos) << "one line, as the sampler's protocol needs";
    // The fix says how to get the permission; the exit code is a device failure's.
    EXPECT_NE(e.fix().find("NVreg_RestrictProfilingToAdminUsers=0"), std::string::npos) << e.fix();
    EXPECT_EQ(e.exit_code(), core::kExitDevice);
  }
}

TEST(CuptiCall, TheFixFollowsTheResult) {
  EXPECT_NE(fix_for(CUPTI_ERROR_HARDWARE_BUSY).find("another profiler"), std::string::npos);
  EXPECT_NE(fix_for(CUPTI_ERROR_INVALID_CHIP_NAME).find("diescope-cupti list-chips"), std::string::npos);
  EXPECT_NE(fix_for(CUPTI_ERROR_INVALID_METRIC_NAME).find("diescope-cupti list-metrics"), std::string::npos);
}

TEST(CuptiCall, AResultCuptiHasNoNameForIsNumbered) {
  EXPECT_EQ(result_name(static_cast<CUptiResult>(123456)), "CUPTI result 123456");
}

TEST(CuptiCall, ParamsAreZeroedWithTheirSizeSet) {
  const auto params = DIESCOPE_CUPTI_PARAMS(CUpti_Profiler_Initialize_Params);
  EXPECT_EQ(params.structSize, CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
  EXPECT_EQ(params.pPriv, nullptr);
}

}  // namespace
}  // namespace diescope::collect::cupti
