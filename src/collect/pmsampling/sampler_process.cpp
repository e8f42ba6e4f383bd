// Parent side of the sampler child: start it, read its messages, stop it, reap it.
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "diescope/collect/sampler.hpp"
#include "diescope/core/error.hpp"

namespace diescope::collect {

namespace {

constexpr std::size_t kStderrTailBytes = 4096;

std::string join_metrics(const std::vector<std::string>& metrics) {
  std::string out;
  for (const auto& name : metrics) {
    if (!out.empty()) out += ',';
    out += name;
  }
  return out;
}

std::string number_arg(double value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", value);
  return buf;
}

void set_nonblocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace

std::string SamplerExit::describe() const {
  std::string out;
  if (exited) {
    out = "exited with code " + std::to_string(exit_code);
  } else if (signal > 0) {
    const char* name = sigabbrev_np(signal);
    const char* text = strsignal(signal);
    out = "killed by signal " + std::string(name ? "SIG" + std::string(name) : std::to_string(signal));
    if (text) out += " (" + std::string(text) + ")";
  } else {
    out = "ended in an unknown way";
  }
  if (!said_bye) out += " without finishing its protocol";
  return out;
}

std::string find_sampler_executable() {
  if (const char* env = std::getenv("DIESCOPE_CUPTI"); env && *env) return env;
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  auto candidate = self.parent_path() / "diescope-cupti";
  if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  return {};
}

SamplerProcess::SamplerProcess(const SamplerConfig& config) : device_(config.device) {
  std::vector<std::string> args;
  args.push_back(config.executable);
  for (const auto& a : config.leading_args) args.push_back(a);
  args.insert(args.end(), {"--device", std::to_string(config.device), "--interval-ms", number_arg(config.interval_ms),
                           "--drain-ms", number_arg(config.drain_ms), "--metrics", join_metrics(config.metrics)});
  for (const auto& a : config.extra_args) args.push_back(a);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  int in_pipe[2], out_pipe[2], err_pipe[2], exec_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) != 0 || pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0 ||
      pipe2(exec_pipe, O_CLOEXEC) != 0)
    throw DeviceError("could not create pipes for the counter sampler: " + std::string(std::strerror(errno)),
                      "check the process's open-file limit (ulimit -n)");

  const pid_t parent = getpid();
  pid_ = fork();
  if (pid_ < 0)
    throw DeviceError("could not start the counter sampler: " + std::string(std::strerror(errno)),
                      "check the process limit (ulimit -u) and free memory");
  if (pid_ == 0) {
    // Child: only async-signal-safe calls until exec.
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(127);
    dup2(in_pipe[0], 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int sig : {SIGINT, SIGTERM, SIGPIPE, SIGHUP, SIGCHLD}) std::signal(sig, SIG_DFL);
    // CUDA device indexes in PCI order, as NVML numbers them, over every GPU.
    setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", 1);
    unsetenv("CUDA_VISIBLE_DEVICES");
    execv(argv[0], argv.data());
    int err = errno;
    if (write(exec_pipe[1], &err, sizeof err) < 0) {
    }
    _exit(127);
  }
  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  ::close(exec_pipe[1]);
  in_fd_ = in_pipe[1];
  out_fd_ = out_pipe[0];
  err_fd_ = err_pipe[0];

  int exec_errno = 0;
  ssize_t got;
  do got = ::read(exec_pipe[0], &exec_errno, sizeof exec_errno);
  while (got < 0 && errno == EINTR);
  ::close(exec_pipe[0]);
  if (got == sizeof exec_errno) {
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    close_fd(in_fd_);
    close_fd(out_fd_);
    close_fd(err_fd_);
    throw DeviceError("could not run the counter sampler " + config.executable + ": " + std::strerror(exec_errno),
                      "reinstall diescope so that diescope-cupti sits beside diescope, or point DIESCOPE_CUPTI at it");
  }
  set_nonblocking(out_fd_);
  set_nonblocking(err_fd_);
}

SamplerProcess::~SamplerProcess() {
  if (pid_ > 0 && !exit_) {
    request_stop();
    wait(std::chrono::seconds(3));
  }
  close_fd(in_fd_);
  close_fd(out_fd_);
  close_fd(err_fd_);
}

void SamplerProcess::read_into_buffer(int& fd, std::string& buffer, bool& closed) {
  closed = false;
  if (fd < 0) {
    closed = true;
    return;
  }
  char chunk[65536];
  for (;;) {
    ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n > 0) {
      buffer.append(chunk, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    close_fd(fd);  // EOF or a hard error: the child is gone or closed its end
    closed = true;
    return;
  }
}

void SamplerProcess::parse_buffer(std::vector<SamplerMessage>& out, bool flush_partial) {
  std::size_t begin = 0;
  for (;;) {
    auto nl = out_buffer_.find('\n', begin);
    std::string_view line;
    if (nl == std::string::npos) {
      if (!flush_partial || begin >= out_buffer_.size()) break;
      line = std::string_view(out_buffer_).substr(begin);
      begin = out_buffer_.size();
      out.push_back(sampler_msg::Note{"protocol", "the sampler's output ended mid-line: '" + std::string(line) + "'"});
      break;
    }
    line = std::string_view(out_buffer_).substr(begin, nl - begin);
    begin = nl + 1;
    if (line.empty()) continue;
    std::string why;
    auto message = parse_message(line, &why);
    if (!message) {
      out.push_back(sampler_msg::Note{"protocol", "unreadable line from the sampler (" + why + "): " +
                                                      std::string(line.substr(0, 200))});
      continue;
    }
    if (std::holds_alternative<sampler_msg::Sample>(*message)) ++samples_received_;
    if (std::holds_alternative<sampler_msg::Bye>(*message)) said_bye_ = true;
    out.push_back(std::move(*message));
  }
  out_buffer_.erase(0, begin);
}

bool SamplerProcess::pump(std::vector<SamplerMessage>& out) {
  for (auto& message : pending_) out.push_back(std::move(message));
  pending_.clear();
  bool closed = false;
  read_into_buffer(out_fd_, out_buffer_, closed);
  parse_buffer(out, closed);
  pump_stderr();
  return !closed;
}

bool SamplerProcess::pump_for(std::vector<SamplerMessage>& out, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const std::size_t before = out.size();
  for (;;) {
    bool open = pump(out);
    if (!open || out.size() > before) return open;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return open;
    pollfd fds[2] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
    ::poll(fds, err_fd_ >= 0 ? 2 : 1, static_cast<int>(left.count()));
  }
}

void SamplerProcess::pump_stderr() {
  bool closed = false;
  read_into_buffer(err_fd_, err_tail_, closed);
  if (err_tail_.size() > kStderrTailBytes) err_tail_.erase(0, err_tail_.size() - kStderrTailBytes);
}

void SamplerProcess::request_stop() { close_fd(in_fd_); }

void SamplerProcess::send_signal(int sig) {
  if (pid_ > 0 && !exit_) ::kill(pid_, sig);
}

SamplerExit SamplerProcess::wait(std::chrono::milliseconds timeout) {
  if (exit_) return *exit_;
  SamplerExit result;
  if (pid_ <= 0) {
    exit_ = result;
    return result;
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  pid_t got = 0;
  for (;;) {
    got = waitpid(pid_, &status, WNOHANG);
    if (got == pid_ || (got < 0 && errno != EINTR)) break;
    // Keep its pipes drained so a child blocked on a full pipe can finish; the caller still gets
    // what was read from its next pump().
    std::vector<SamplerMessage> read;
    pump(read);
    for (auto& message : read) pending_.push_back(std::move(message));
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(pid_, SIGKILL);
      do got = waitpid(pid_, &status, 0);
      while (got < 0 && errno == EINTR);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  std::vector<SamplerMessage> read;
  pump(read);
  for (auto& message : read) pending_.push_back(std::move(message));
  if (got == pid_) {
    if (WIFEXITED(status)) {
      result.exited = true;
      result.exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
      result.signal = WTERMSIG(status);
    }
  }
  result.said_bye = said_bye_;
  result.stderr_tail = err_tail_;
  exit_ = result;
  return result;
}

}  // namespace diescope::collect
