// Child processes with one owner: started from an argv, optionally with pipes on their standard
// streams and a changed environment, and never left behind. Destroying a ChildProcess whose child
// still runs stops it (SIGTERM, a grace period, then SIGKILL) and reaps it, so an exception in the
// parent (a full disk under the recording writer) cannot leave the child running or a zombie.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "diescope/core/error.hpp"
#include "diescope/core/unique_fd.hpp"

namespace diescope::core {

// Where a program is found the way execvp finds it: a name with '/' is used as it is, any other is
// looked up in $PATH. A regular, executable file only. Empty when there is none.
std::string find_executable(const std::string& name);

// A program that could not be started. `system_error` is the errno behind it (ENOENT when the
// program does not exist). Exit codes follow the shell: 127 not found, 126 found but not runnable.
class StartError : public Error {
 public:
  StartError(std::string cause, std::string fix, int exit_code, int system_error)
      : Error(std::move(cause), std::move(fix), exit_code), system_error_(system_error) {}
  int system_error() const { return system_error_; }

 private:
  int system_error_;
};

// find_executable(name), or the one "command not found" StartError (exit code 127) naming the
// cause and the fix.
std::string resolve_command(const std::string& name);

// How a child ended: it exited with a code, or a signal killed it.
class ExitStatus {
 public:
  static ExitStatus exited_with(int code) { return ExitStatus(code, 0); }
  static ExitStatus killed_by(int signal) { return ExitStatus(-1, signal); }
  static ExitStatus from_wait_status(int status);  // a waitpid() status

  bool exited() const { return signal_ == 0; }
  int code() const { return code_; }      // when exited(); -1 otherwise
  int signal() const { return signal_; }  // when killed; 0 otherwise
  // What a shell reports: the code, or 128 + the signal.
  int shell_code() const { return exited() ? code_ : 128 + signal_; }
  // "exited with code 3", "killed by signal SIGSEGV (Segmentation fault)".
  std::string describe() const;
  bool operator==(const ExitStatus&) const = default;

 private:
  ExitStatus(int code, int signal) : code_(code), signal_(signal) {}
  int code_;
  int signal_;
};

// One standard stream of a child.
struct Stdio {
  enum class Kind { inherit, pipe, null, fd };
  Kind kind = Kind::inherit;
  int fd = -1;  // Kind::fd: the caller's descriptor, duplicated into the child (the caller keeps it)

  static Stdio inherit() { return {}; }
  static Stdio pipe() { return {Kind::pipe, -1}; }  // the parent's end is the ChildProcess's
  static Stdio null() { return {Kind::null, -1}; }  // /dev/null
  static Stdio from_fd(int fd) { return {Kind::fd, fd}; }
};

struct ChildSpec {
  std::vector<std::string> argv;  // argv[0] is resolved with resolve_command
  Stdio in, out, err;
  std::vector<std::pair<std::string, std::string>> set_env;  // on top of this process's environment
  std::vector<std::string> unset_env;
  // In a process group of its own: a terminal's Ctrl-C (sent to the foreground group) misses it.
  bool own_process_group = false;
  // Sent to the child when this process dies (0: none), so it never outlives a crashed parent.
  int parent_death_signal = 0;
  // The destructor's SIGTERM-to-SIGKILL wait.
  std::chrono::milliseconds stop_grace{1000};
};

class ChildProcess {
 public:
  ChildProcess() = default;  // no child
  // Starts the child. It begins with default dispositions for the signals diescope catches or
  // ignores and with no signal blocked. Throws StartError when the program is missing, cannot be
  // executed or the process cannot be created, Error when a pipe cannot be.
  explicit ChildProcess(const ChildSpec& spec);
  ~ChildProcess();
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // The child's pid, kept after it has been reaped (for messages); -1 when none was started.
  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0 && !status_; }

  // The parent's ends of the pipes asked for (empty otherwise): stdin's is the write end; stdout's
  // and stderr's are read ends and non-blocking. Reset one to close it (e.g. stdin, to say "stop").
  UniqueFd& stdin_pipe() { return stdin_; }
  UniqueFd& stdout_pipe() { return stdout_; }
  UniqueFd& stderr_pipe() { return stderr_; }
  const UniqueFd& stdin_pipe() const { return stdin_; }
  const UniqueFd& stdout_pipe() const { return stdout_; }
  const UniqueFd& stderr_pipe() const { return stderr_; }

  // Sends `signal` while the child has not been reaped (never to a recycled pid).
  void signal(int signal) const;
  // Reaps the child if it has ended; nullopt while it runs.
  std::optional<ExitStatus> try_wait();
  // Blocks until the child ends and reaps it.
  ExitStatus wait();
  // SIGTERM, up to `grace` for it to end, then SIGKILL; reaps it. Returns how it ended.
  ExitStatus stop(std::chrono::milliseconds grace);
  // How it ended, once reaped.
  const std::optional<ExitStatus>& exit_status() const { return status_; }

 private:
  void stop_if_running() noexcept;

  pid_t pid_ = -1;
  std::optional<ExitStatus> status_;
  std::chrono::milliseconds stop_grace_{1000};
  UniqueFd stdin_, stdout_, stderr_;
};

}  // namespace diescope::core
