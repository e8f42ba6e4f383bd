// Text that came from a file or the command line, made safe to write to a terminal
// (docs/report.md#the-terminal-headline): control and escape bytes are shown, not obeyed; and made
// safe to put inside the HTML and SVG reports.
#pragma once

#include <string>
#include <string_view>

namespace diescope::core {

// Every C0 control byte but newline and tab, DEL, and the UTF-8 forms of the C1 controls
// (U+0080..U+009F, which include the 8-bit escape CSI) written as \xHH; everything else unchanged.
std::string printable(std::string_view text);

// Text made safe inside HTML and SVG, in element content and in double-quoted attributes:
// & < > " written as entities; everything else unchanged.
std::string markup_escaped(std::string_view text);

}  // namespace diescope::core
