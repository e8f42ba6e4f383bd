// docs/attribution.md#user-labels
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

#include "diescope/attribution/labels.hpp"
#include "diescope/core/error.hpp"

namespace diescope::attribution {
namespace {

TEST(Labels, KeyValue) {
  std::vector<std::string> notes;
  const Label l = parse_label("team=vision=2", notes);
  EXPECT_EQ(l.key, "team");
  EXPECT_EQ(l.value, "vision=2");  // the first '=' splits
  EXPECT_TRUE(notes.empty());
}

TEST(Labels, QuotesKeptNewlinesBecomeSpaces) {
  std::vector<std::string> notes;
  const Label l = parse_label("note=say \"hi\"\nand\tgo", notes);
  EXPECT_EQ(l.value, "say \"hi\" and go");
  ASSERT_EQ(notes.size(), 1U);
  EXPECT_NE(notes[0].find("control characters"), std::string::npos);
}

TEST(Labels, TenKilobytesCutTo256) {
  std::vector<std::string> notes;
  const Label l = parse_label("blob=" + std::string(10 * 1024, 'x'), notes);
  EXPECT_EQ(l.value.size(), kMaxLabelValueBytes);
  ASSERT_EQ(notes.size(), 1U);
  EXPECT_NE(notes[0].find("10240 bytes was cut to the first 256"), std::string::npos) << notes[0];
}

TEST(Labels, CutKeepsWholeUtf8Characters) {
  std::vector<std::string> notes;
  // 255 ASCII bytes then a 2-byte character: byte 256 would split it, so the cut is at 255.
  const Label l = parse_label("k=" + std::string(255, 'a') + "\xc3\xa9", notes);
  EXPECT_EQ(l.value.size(), 255U);
}

TEST(Labels, BadKeysRefusedWithFix) {
  std::vector<std::string> notes;
  EXPECT_THROW(parse_label("novalue", notes), core::UsageError);
  EXPECT_THROW(parse_label("1team=x", notes), core::UsageError);
  EXPECT_THROW(parse_label("te-am=x", notes), core::UsageError);
  EXPECT_THROW(parse_label("__x=y", notes), core::UsageError);
  try {
    parse_label("pod=mine", notes);
    FAIL();
  } catch (const core::UsageError& e) {
    EXPECT_NE(e.fix().find("user_pod"), std::string::npos);
  }
}

TEST(Labels, LastRepeatWins) {
  const LabelSet s = parse_labels({"a=1", "b=2", "a=3"});
  ASSERT_EQ(s.labels.size(), 2U);
  EXPECT_EQ(s.labels[0], (Label{"a", "3"}));
}

TEST(Labels, FileWithCommentsAndABadLine) {
  const auto dir = std::filesystem::path(DIESCOPE_BINARY_DIR) / "attribution-labels-test";
  std::filesystem::create_directories(dir);
  {
    std::ofstream f(dir / "good");
    f << "# the node's owners\n\nteam=vision\r\n  cost_centre=4711\n";
  }
  const LabelSet s = read_labels_file(dir / "good");
  ASSERT_EQ(s.labels.size(), 2U);
  EXPECT_EQ(s.labels[1], (Label{"cost_centre", "4711"}));
  {
    std::ofstream f(dir / "bad");
    f << "team=vision\nno equals here\n";
  }
  try {
    read_labels_file(dir / "bad");
    FAIL();
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.line(), 2);
  }
  EXPECT_THROW(read_labels_file(dir / "missing"), core::InputError);
}

}  // namespace
}  // namespace diescope::attribution
