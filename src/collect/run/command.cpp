#include "command.hpp"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "diescope/collect/run.hpp"
#include "diescope/core/error.hpp"

namespace diescope::collect {

std::string find_command(const std::string& name) {
  if (name.empty()) return {};
  auto runnable = [](const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
  };
  if (name.find('/') != std::string::npos) return runnable(name) && ::access(name.c_str(), X_OK) == 0 ? name : std::string{};
  const char* path_env = std::getenv("PATH");
  std::string path = path_env ? path_env : "/usr/local/bin:/usr/bin:/bin";
  std::size_t begin = 0;
  for (;;) {
    auto colon = path.find(':', begin);
    std::string dir = path.substr(begin, colon == std::string::npos ? std::string::npos : colon - begin);
    if (dir.empty()) dir = ".";
    std::string candidate = dir + "/" + name;
    if (runnable(candidate) && ::access(candidate.c_str(), X_OK) == 0) return candidate;
    if (colon == std::string::npos) break;
    begin = colon + 1;
  }
  return {};
}

namespace run_internal {

std::string signal_name(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? "SIG" + std::string(abbrev) : "signal " + std::to_string(sig);
}

CommandProcess start_command(const std::vector<std::string>& argv_in) {
  if (argv_in.empty()) throw UsageError("no command to run", "put the command after --, e.g. diescope run -- ./train.sh");
  const std::string resolved = find_command(argv_in[0]);
  if (resolved.empty()) {
    throw Error("command not found: " + argv_in[0],
                argv_in[0].find('/') == std::string::npos
                    ? "check its spelling, or give its path; it is looked up in PATH"
                    : "check the path: no such file",
                127);
  }
  std::vector<std::string> args = argv_in;
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  int out[2], exec_err[2];
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(exec_err, O_CLOEXEC) != 0)
    throw Error("cannot create a pipe for the command's output: " + std::string(std::strerror(errno)),
                "check the open-file limit (ulimit -n)", kExitInternal);
  const pid_t pid = fork();
  if (pid < 0)
    throw Error("cannot start the command: " + std::string(std::strerror(errno)), "check the process limit (ulimit -u)",
                kExitInternal);
  if (pid == 0) {
    dup2(out[1], 1);
    // What diescope ignores or blocks must not be inherited by the command.
    for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGCHLD, SIGHUP, SIGQUIT}) std::signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execv(resolved.c_str(), argv.data());
    int err = errno;
    if (write(exec_err[1], &err, sizeof err) < 0) {
    }
    _exit(127);
  }
  ::close(out[1]);
  ::close(exec_err[1]);
  int err = 0;
  ssize_t got;
  do got = ::read(exec_err[0], &err, sizeof err);
  while (got < 0 && errno == EINTR);
  ::close(exec_err[0]);
  if (got == sizeof err) {
    int status = 0;
    waitpid(pid, &status, 0);
    ::close(out[0]);
    throw Error("cannot run " + argv_in[0] + ": " + std::strerror(err),
                err == EACCES ? "make it executable (chmod +x) or run it through its interpreter"
                              : "check that it is a program for this machine",
                err == ENOENT ? 127 : 126);
  }
  fcntl(out[0], F_SETFL, fcntl(out[0], F_GETFL) | O_NONBLOCK);
  return CommandProcess{pid, out[0]};
}

}  // namespace run_internal
}  // namespace diescope::collect
