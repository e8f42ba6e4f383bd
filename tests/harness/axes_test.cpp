#include <gtest/gtest.h>

#include "diescope/harness/axes.hpp"
#include "diescope/core/error.hpp"

namespace diescope::harness {
namespace {

TEST(Axes, CartesianProductInDeclarationOrderLastAxisFastest) {
  const std::vector<Axis> axes = {{"bytes", {std::int64_t{1024}, std::int64_t{4096}}},
                                  {"mode", {std::string("cold"), std::string("batch")}},
                                  {"scale", {0.5}}};
  const auto points = cartesian_product(axes);
  ASSERT_EQ(points.size(), 4u);  // 2 x 2 x 1
  EXPECT_EQ(points[0].name_suffix(), "/bytes:1024/mode:cold/scale:0.5");
  EXPECT_EQ(points[1].name_suffix(), "/bytes:1024/mode:batch/scale:0.5");
  EXPECT_EQ(points[2].name_suffix(), "/bytes:4096/mode:cold/scale:0.5");
  EXPECT_EQ(points[3].name_suffix(), "/bytes:4096/mode:batch/scale:0.5");
  EXPECT_EQ(points[3].get_int("bytes"), 4096);
  EXPECT_EQ(points[3].get_string("mode"), "batch");
  EXPECT_DOUBLE_EQ(points[3].get_double("scale"), 0.5);
  EXPECT_DOUBLE_EQ(points[3].get_double("bytes"), 4096.0);  // an integer axis reads as a double too
}

TEST(Axes, NoAxesIsOnePointAnEmptyAxisIsNone) {
  const auto none = cartesian_product({});
  ASSERT_EQ(none.size(), 1u);
  EXPECT_EQ(none[0].name_suffix(), "");
  EXPECT_TRUE(cartesian_product({{"n", {}}}).empty());
}

TEST(Axes, WrongNameOrTypeIsAUsageError) {
  const AxisPoint p({{"n", std::int64_t{3}}});
  EXPECT_THROW(p.get_int("m"), core::UsageError);
  EXPECT_THROW(p.get_string("n"), core::UsageError);
  try {
    p.get_int("bytes");
  } catch (const core::UsageError& e) {
    EXPECT_NE(e.cause().find("'bytes'"), std::string::npos);
    EXPECT_FALSE(e.fix().empty());
  }
}

}  // namespace
}  // namespace diescope::harness
