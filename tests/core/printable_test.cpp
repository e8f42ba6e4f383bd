// printable(): control and escape bytes from a recording or the command line are shown, not obeyed
// (docs/report.md#the-terminal-headline).
#include "diescope/core/printable.hpp"

#include <gtest/gtest.h>

namespace diescope {
namespace {

TEST(Printable, PlainTextNewlinesTabsAndUtf8AreUnchanged) {
  EXPECT_EQ(core::printable("NVIDIA H200\tGH100\n"), "NVIDIA H200\tGH100\n");
  EXPECT_EQ(core::printable("\xc2\xb5s 25\xc2\xb0"), "\xc2\xb5s 25\xc2\xb0");  // µs 25°: printable UTF-8
}

TEST(Printable, ControlBytesAreShownAsHex) {
  // ESC [ 2 J clears a terminal; it is shown as four visible characters and "[2J".
  EXPECT_EQ(core::printable("a\x1b[2Jb"), "a\\x1b[2Jb");
  EXPECT_EQ(core::printable(std::string("\r\x07\x7f\0", 4)), "\\x0d\\x07\\x7f\\x00");
}

TEST(Printable, C1ControlsInUtf8AreShown) {
  // U+009B is the 8-bit CSI, written in UTF-8 as C2 9B.
  EXPECT_EQ(core::printable("x\xc2\x9b"
                            "31m"),
            "x\\xc2\\x9b31m");
  // C2 A0 (no-break space) is not a control and stays.
  EXPECT_EQ(core::printable("\xc2\xa0"), "\xc2\xa0");
}

TEST(MarkupEscaped, TheFourMarkupCharactersBecomeEntities) {
  // "a<b & \"c\">d" -> a &lt; b, &amp;, &quot;c&quot;, &gt; d; every other byte as it was.
  EXPECT_EQ(core::markup_escaped("a<b & \"c\">d"), "a&lt;b &amp; &quot;c&quot;&gt;d");
  EXPECT_EQ(core::markup_escaped("plain 'text' é"), "plain 'text' é");
  EXPECT_EQ(core::markup_escaped(""), "");
}

}  // namespace
}  // namespace diescope
