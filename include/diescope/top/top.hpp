// `diescope top`'s loop (docs/top.md): polls the source every drain, keeps the model, and draws
// the frame on the terminal (alternate screen, raw keys) or, when stdout is not a terminal or
// --once is given, prints one frame as plain text. The terminal is restored on every way out:
// q, Ctrl-C, SIGTERM, SIGHUP, an error (the terminal's owner is a scope guard).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "diescope/top/screen.hpp"
#include "diescope/top/view_feed.hpp"

namespace diescope::top {

struct TopOptions {
  double drain_ms = 1000;  // poll and refresh
  bool once = false;       // one frame as plain text, then exit
  // --once and non-terminal output: collect this long (source time) before the frame, so that it
  // holds a drain of chip samples.
  double once_after_ms = 2000;
  // A replay's one frame (--once, or stdout not a terminal): the source time it shows, reached by
  // reading the recordings up to it at once rather than at their pace (replay_moment says which).
  std::optional<recording::TimeNs> at_ns;
  SortKey sort = SortKey::index;
  int stdin_fd = 0;
  int stdout_fd = 1;
  int stop_fd = -1;                    // readable: stop (SIGINT, SIGTERM, SIGHUP)
  int resize_fd = -1;                  // readable: the terminal changed size (SIGWINCH)
  std::function<int()> drain_stop;     // takes what made stop_fd readable; the exit code (128 + signal)
  std::function<void()> drain_resize;  // takes what made resize_fd readable
};

// Runs until q, a stop signal, or (--once / not a terminal) one frame. Returns the exit code: 0, or
// drain_stop's after a signal.
int run_top(ViewFeed& source, const TopOptions& options);

// The frame's time of day, "13:45:02 UTC".
std::string time_of_day(recording::TimeNs ns);

}  // namespace diescope::top
