// A program under test (the real diescope binary, a real Prometheus server) as a core ChildProcess,
// with its output read line by line, for the agent's process-level tests.
#pragma once

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <fcntl.h>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "diescope/core/child_process.hpp"

namespace diescope::agent::testing {

class RunningProgram {
 public:
  // stdout, and stderr unless `stderr_path` names a file for it, go to pipes; stdin is /dev/null.
  // started() is false when the program could not be started.
  // `env`: variables set on top of this process's environment.
  explicit RunningProgram(std::vector<std::string> argv, const std::string& stderr_path = "",
                          std::vector<std::pair<std::string, std::string>> env = {}) {
    core::ChildSpec spec;
    spec.argv = std::move(argv);
    spec.set_env = std::move(env);
    spec.in = core::Stdio::null();
    spec.out = core::Stdio::pipe();
    core::UniqueFd stderr_file;
    if (stderr_path.empty()) {
      spec.err = core::Stdio::pipe();
    } else {
      stderr_file.reset(::open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
      spec.err = core::Stdio::from_fd(stderr_file.get());
    }
    try {
      child_ = core::ChildProcess(spec);
    } catch (const core::Error& e) {
      start_error_ = e.cause();
    }
  }

  pid_t pid() const { return child_.pid(); }
  bool started() const { return child_.pid() > 0; }
  const std::string& start_error() const { return start_error_; }

  // The next complete stdout line (without '\n'), or nullopt after `timeout` or at the end.
  std::optional<std::string> read_line(std::chrono::milliseconds timeout) {
    return next_line(child_.stdout_pipe(), out_buf_, timeout, nullptr);
  }
  std::optional<std::string> read_err_line(std::chrono::milliseconds timeout) {
    return next_line(child_.stderr_pipe(), err_buf_, timeout, &err_all_);
  }
  // Everything stdout still holds, in complete lines (a partial last line is left out).
  std::vector<std::string> drain_lines() {
    std::vector<std::string> lines;
    while (auto line = read_line(std::chrono::milliseconds(200))) lines.push_back(*line);
    return lines;
  }
  std::string stderr_text() {
    while (read_err_line(std::chrono::milliseconds(50))) {}
    return err_all_;
  }

  void signal(int sig) { child_.signal(sig); }
  // How it ended, or nullopt while it still runs after `timeout`.
  std::optional<core::ExitStatus> wait(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      if (auto status = child_.try_wait()) return status;
      if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

 private:
  static std::optional<std::string> next_line(core::UniqueFd& fd, std::string& buf,
                                              std::chrono::milliseconds timeout, std::string* keep) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      const auto nl = buf.find('\n');
      if (nl != std::string::npos) {
        std::string line = buf.substr(0, nl);
        buf.erase(0, nl + 1);
        if (keep) *keep += line + "\n";
        return line;
      }
      if (!fd) return std::nullopt;
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return std::nullopt;
      pollfd p{fd.get(), POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      char tmp[4096];
      const ssize_t n = ::read(fd.get(), tmp, sizeof tmp);
      if (n > 0)
        buf.append(tmp, static_cast<std::size_t>(n));
      else if (n == 0 || (errno != EAGAIN && errno != EINTR))
        fd.reset();
    }
  }

  core::ChildProcess child_;  // killed and reaped if a test ends while it runs
  std::string start_error_;
  std::string out_buf_, err_buf_, err_all_;
};

// An empty folder <temp>/diescope-<part>-<this pid>/<name> for one test, emptied first.
inline std::filesystem::path fresh_dir(const std::string& part, const std::string& name) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("diescope-" + part + "-" + std::to_string(::getpid())) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace diescope::agent::testing
