#include "diescope/core/edit_distance.hpp"

#include <gtest/gtest.h>

namespace diescope::core {
namespace {

TEST(EditDistance, EmptyAndEqual) {
  EXPECT_EQ(edit_distance("", ""), 0U);
  EXPECT_EQ(edit_distance("", "abc"), 3U);  // three insertions
  EXPECT_EQ(edit_distance("abc", ""), 3U);  // three deletions
  EXPECT_EQ(edit_distance("--output", "--output"), 0U);
}

TEST(EditDistance, CountsEachKindOfEdit) {
  // kitten -> sitten (substitute k) -> sittin (substitute e) -> sitting (insert g): 3.
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3U);
  // Two neighbours swapped are one typo, not two substitutions.
  EXPECT_EQ(edit_distance("--gpsu", "--gpus"), 1U);
  EXPECT_EQ(edit_distance("plto", "plot"), 1U);
  // ... but only neighbours: "abc" -> "cba" is two substitutions (a<->c are not adjacent).
  EXPECT_EQ(edit_distance("abc", "cba"), 2U);
  // One missing letter.
  EXPECT_EQ(edit_distance("--ouput", "--output"), 1U);
  // Symmetric.
  EXPECT_EQ(edit_distance("sitting", "kitten"), 3U);
}

}  // namespace
}  // namespace diescope::core
