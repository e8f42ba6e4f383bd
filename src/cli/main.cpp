// diescope: how much of the GPU is in use, from the chip's own counters.
#include <cstdio>

#include "command.hpp"
#include "diescope/core/error.hpp"
#include "diescope/core/printable.hpp"

int main(int argc, char** argv) {
  try {
    return diescope::cli::run_command_line(argc, argv);
  } catch (const diescope::core::Error& e) {
    // A cause may quote a file's bytes: shown, never sent to the terminal as they are.
    std::fprintf(stderr, "diescope: error: %s\n", diescope::core::printable(e.cause()).c_str());
    if (!e.fix().empty()) std::fprintf(stderr, "  fix: %s\n", diescope::core::printable(e.fix()).c_str());
    return e.exit_code();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "diescope: internal error: %s\n  fix: please report this with the command you ran\n",
                 diescope::core::printable(e.what()).c_str());
    return diescope::core::kExitInternal;
  }
}
