// The measured command as a child process: started with its stdout on a pipe (so `run` can tee it
// and see the window markers), everything else inherited.
#pragma once

#include <string>
#include <sys/types.h>
#include <vector>

namespace diescope::collect::run_internal {

struct CommandProcess {
  pid_t pid = -1;
  int stdout_fd = -1;  // read end, non-blocking
};

// Starts argv (argv[0] resolved through PATH). Throws Error with exit code 127 when the command is
// not found and 126 when it cannot be executed.
CommandProcess start_command(const std::vector<std::string>& argv);

// "signal SIGINT" style name for a signal number.
std::string signal_name(int sig);

}  // namespace diescope::collect::run_internal
