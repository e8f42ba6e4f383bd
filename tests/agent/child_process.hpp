// Runs a program as a child with its stdout and stderr on pipes, for the agent's process-level
// tests (the real diescope binary, a real Prometheus server).
#pragma once

#include <cerrno>
#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <optional>
#include <poll.h>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace diescope::agent::testing {

class ChildProcess {
 public:
  // stderr goes to a pipe too unless `stderr_path` names a file.
  explicit ChildProcess(std::vector<std::string> argv, const std::string& stderr_path = "") {
    int out[2], err[2];
    if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(out[1], 1);
      if (stderr_path.empty()) {
        ::dup2(err[1], 2);
      } else {
        const int fd = ::open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) ::dup2(fd, 2);
      }
      const int null_in = ::open("/dev/null", O_RDONLY);
      if (null_in >= 0) ::dup2(null_in, 0);
      std::vector<char*> args;
      for (auto& a : argv) args.push_back(a.data());
      args.push_back(nullptr);
      ::execv(args[0], args.data());
      ::_exit(127);
    }
    ::close(out[1]);
    ::close(err[1]);
    out_fd_ = out[0];
    err_fd_ = err[0];
    ::fcntl(out_fd_, F_SETFL, O_NONBLOCK);
    ::fcntl(err_fd_, F_SETFL, O_NONBLOCK);
  }
  ~ChildProcess() {
    if (pid_ > 0 && !exited_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (out_fd_ >= 0) ::close(out_fd_);
    if (err_fd_ >= 0) ::close(err_fd_);
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  bool started() const { return pid_ > 0; }

  // The next complete stdout line (without '\n'), or nullopt after `timeout` or at the end.
  std::optional<std::string> read_line(std::chrono::milliseconds timeout) {
    return next_line(out_fd_, out_buf_, out_closed_, timeout);
  }
  std::optional<std::string> read_err_line(std::chrono::milliseconds timeout) {
    return next_line(err_fd_, err_buf_, err_closed_, timeout);
  }
  // Everything stdout still holds, in complete lines (a partial last line is left out).
  std::vector<std::string> drain_lines() {
    std::vector<std::string> lines;
    while (auto line = read_line(std::chrono::milliseconds(200))) lines.push_back(*line);
    return lines;
  }
  std::string stderr_text() {
    while (read_err_line(std::chrono::milliseconds(50))) {
    }
    return err_all_;
  }

  void signal(int sig) { ::kill(pid_, sig); }
  // Exit status as waitpid gives it, or nullopt after `timeout`.
  std::optional<int> wait(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      const pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        exited_ = true;
        return status;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return std::nullopt;
  }

 private:
  std::optional<std::string> next_line(int fd, std::string& buf, bool& closed, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      const auto nl = buf.find('\n');
      if (nl != std::string::npos) {
        std::string line = buf.substr(0, nl);
        buf.erase(0, nl + 1);
        if (fd == err_fd_) err_all_ += line + "\n";
        return line;
      }
      if (closed) return std::nullopt;
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return std::nullopt;
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      char tmp[4096];
      const ssize_t n = ::read(fd, tmp, sizeof tmp);
      if (n > 0) buf.append(tmp, static_cast<std::size_t>(n));
      else if (n == 0 || (errno != EAGAIN && errno != EINTR)) closed = true;
    }
  }

  pid_t pid_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
  std::string out_buf_, err_buf_, err_all_;
  bool out_closed_ = false, err_closed_ = false;
  bool exited_ = false;
};

}  // namespace diescope::agent::testing
