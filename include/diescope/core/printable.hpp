// Text that came from a file or the command line, made safe to write to a terminal
// (docs/report.md#the-terminal-headline): control and escape bytes are shown, not obeyed.
#pragma once

#include <string>
#include <string_view>

namespace diescope::core {

// Every C0 control byte but newline and tab, DEL, and the UTF-8 forms of the C1 controls
// (U+0080..U+009F, which include the 8-bit escape CSI) written as \xHH; everything else unchanged.
std::string printable(std::string_view text);

}  // namespace diescope::core
