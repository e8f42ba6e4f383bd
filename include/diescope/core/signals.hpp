// Signals as data: a handler only writes to a pipe, and the program reads the pipe in its own loop
// (poll it beside its other descriptors), so no logic runs inside a signal handler.
#pragma once

#include <csignal>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "diescope/core/unique_fd.hpp"

namespace diescope::core {

// "SIGINT"; "signal 99" for a number the C library has no name for.
std::string signal_name(int number);

struct CaughtSignal {
  int number = 0;
  // si_code SI_KERNEL: sent by the kernel, as a terminal's Ctrl-C is (to the whole foreground process
  // group, so a child in that group got it too), not by kill() from another process.
  bool from_kernel = false;
};

// Catches `caught` and ignores `ignored` while it lives; each caught arrival becomes one record on
// fd(). Destroyed, it puts back the dispositions it found. Instances nest: the newest one receives
// the signals it catches, and destroying it (newest first) hands them back to the one before.
// One per thread of control; not copyable.
class SignalSelfPipe {
 public:
  SignalSelfPipe(std::initializer_list<int> caught, std::initializer_list<int> ignored = {});
  ~SignalSelfPipe();
  SignalSelfPipe(const SignalSelfPipe&) = delete;
  SignalSelfPipe& operator=(const SignalSelfPipe&) = delete;

  // Readable (poll POLLIN) while a caught signal waits to be taken with next().
  int fd() const { return pipe_.read.get(); }
  // The oldest signal not yet taken; nullopt when none waits. Never blocks.
  std::optional<CaughtSignal> next();

 private:
  Pipe pipe_;
  std::vector<std::pair<int, struct sigaction>> previous_actions_;
  std::vector<std::pair<int, int>> previous_targets_;  // (signal, the write end it went to before)
};

}  // namespace diescope::core
