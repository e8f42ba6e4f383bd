#include "diescope/core/child_process.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "diescope/core/signals.hpp"

extern char** environ;

namespace diescope::core {

namespace {

// Signals diescope catches or ignores somewhere; a child starts with each at its default. (Caught
// ones are reset by exec anyway; an ignored one, such as SIGPIPE, would otherwise be inherited.)
constexpr int kResetSignals[] = {SIGPIPE, SIGINT, SIGTERM, SIGCHLD, SIGHUP, SIGQUIT};

bool is_runnable_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// The environment the child gets: this process's, with `spec`'s changes.
std::vector<std::string> child_environment(const ChildSpec& spec) {
  std::vector<std::string> env;
  auto changed = [&](std::string_view entry) {
    const std::string_view name = entry.substr(0, entry.find('='));
    return std::any_of(spec.unset_env.begin(), spec.unset_env.end(),
                       [&](const auto& n) { return n == name; }) ||
           std::any_of(spec.set_env.begin(), spec.set_env.end(),
                       [&](const auto& kv) { return kv.first == name; });
  };
  for (char** entry = environ; entry && *entry; ++entry)
    if (!changed(*entry)) env.emplace_back(*entry);
  for (const auto& [name, value] : spec.set_env) {
    std::string entry = name;
    entry += '=';
    entry += value;
    env.push_back(std::move(entry));
  }
  return env;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// In the child, between fork and exec: async-signal-safe calls only.
void redirect_in_child(const Stdio& stdio, int child_end, int target) {
  int fd = -1;
  switch (stdio.kind) {
    case Stdio::Kind::inherit:
      return;
    case Stdio::Kind::pipe:
      fd = child_end;
      break;
    case Stdio::Kind::fd:
      fd = stdio.fd;
      break;
    case Stdio::Kind::null:
      fd = ::open("/dev/null", target == STDIN_FILENO ? O_RDONLY : O_WRONLY);
      break;
  }
  if (fd == target)
    ::fcntl(fd, F_SETFD, 0);  // dup2 onto itself would leave close-on-exec set
  else if (fd >= 0)
    ::dup2(fd, target);
}

}  // namespace

std::string find_executable(const std::string& name) {
  if (name.empty()) return {};
  if (name.find('/') != std::string::npos) return is_runnable_file(name) ? name : std::string{};
  const char* path_env = std::getenv("PATH");
  const std::string path = path_env ? path_env : "/usr/local/bin:/usr/bin:/bin";
  std::size_t begin = 0;
  for (;;) {
    const auto colon = path.find(':', begin);
    std::string dir = path.substr(begin, colon == std::string::npos ? std::string::npos : colon - begin);
    if (dir.empty()) dir = ".";
    std::string candidate = std::move(dir);
    candidate += '/';
    candidate += name;
    if (is_runnable_file(candidate)) return candidate;
    if (colon == std::string::npos) break;
    begin = colon + 1;
  }
  return {};
}

std::string resolve_command(const std::string& name) {
  std::string resolved = find_executable(name);
  if (resolved.empty()) {
    throw StartError("command not found: " + name,
                     name.find('/') == std::string::npos
                         ? "check its spelling, or give its path; it is looked up in PATH"
                         : "check the path: no such file",
                     127, ENOENT);
  }
  return resolved;
}

ExitStatus ExitStatus::from_wait_status(int status) {
  if (WIFSIGNALED(status)) return killed_by(WTERMSIG(status));
  return exited_with(WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

std::string ExitStatus::describe() const {
  if (exited()) return "exited with code " + std::to_string(code_);
  std::string out = "killed by signal " + signal_name(signal_);
  if (const char* text = ::strsignal(signal_)) out += " (" + std::string(text) + ")";
  return out;
}

ChildProcess::ChildProcess(const ChildSpec& spec) : stop_grace_(spec.stop_grace) {
  if (spec.argv.empty()) throw Error("no program to start", "", kExitInternal);
  const std::string program = resolve_command(spec.argv.front());

  // Everything the child needs is built here: after fork it may only make async-signal-safe calls.
  std::vector<std::string> args = spec.argv;
  std::vector<char*> argv = pointers(args);
  std::vector<std::string> env = child_environment(spec);
  std::vector<char*> envp = pointers(env);
  const std::string& name = spec.argv.front();
  std::optional<Pipe> in, out, err;
  if (spec.in.kind == Stdio::Kind::pipe) in = make_pipe("the standard input of " + name);
  if (spec.out.kind == Stdio::Kind::pipe) out = make_pipe("the output of " + name);
  if (spec.err.kind == Stdio::Kind::pipe) err = make_pipe("the error output of " + name);
  // The child writes exec's errno here; exec closes it (close-on-exec), so EOF means it started.
  Pipe exec_error = make_pipe("starting " + name);
  const pid_t parent = ::getpid();

  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err_no = errno;
    throw StartError("cannot start " + name + ": " + std::strerror(err_no),
                     "check the process limit (ulimit -u) and free memory", kExitInternal, err_no);
  }
  if (pid == 0) {
    if (spec.own_process_group) ::setpgid(0, 0);
    if (spec.parent_death_signal != 0) {
      ::prctl(PR_SET_PDEATHSIG, spec.parent_death_signal);
      if (::getppid() != parent) ::_exit(127);  // the parent died before the line above
    }
    redirect_in_child(spec.in, in ? in->read.get() : -1, STDIN_FILENO);
    redirect_in_child(spec.out, out ? out->write.get() : -1, STDOUT_FILENO);
    redirect_in_child(spec.err, err ? err->write.get() : -1, STDERR_FILENO);
    struct sigaction default_action {};
    default_action.sa_handler = SIG_DFL;
    for (int number : kResetSignals) ::sigaction(number, &default_action, nullptr);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execve(program.c_str(), argv.data(), envp.data());
    const int exec_errno = errno;
    [[maybe_unused]] const ssize_t written = ::write(exec_error.write.get(), &exec_errno, sizeof exec_errno);
    ::_exit(127);
  }

  pid_ = pid;
  exec_error.write.reset();
  int exec_errno = 0;
  ssize_t got;
  do got = ::read(exec_error.read.get(), &exec_errno, sizeof exec_errno);
  while (got < 0 && errno == EINTR);
  if (got == static_cast<ssize_t>(sizeof exec_errno)) {
    wait();
    throw StartError("cannot run " + name + ": " + std::strerror(exec_errno),
                     exec_errno == EACCES ? "make it executable (chmod +x) or run it through its interpreter"
                                          : "check that it is a program for this machine",
                     exec_errno == ENOENT ? 127 : 126, exec_errno);
  }
  if (in) stdin_ = std::move(in->write);
  if (out) {
    stdout_ = std::move(out->read);
    set_nonblocking(stdout_.get());
  }
  if (err) {
    stderr_ = std::move(err->read);
    set_nonblocking(stderr_.get());
  }
}

ChildProcess::~ChildProcess() {
  stop_if_running();
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      status_(std::exchange(other.status_, std::nullopt)),
      stop_grace_(other.stop_grace_),
      stdin_(std::move(other.stdin_)),
      stdout_(std::move(other.stdout_)),
      stderr_(std::move(other.stderr_)) {}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    stop_if_running();
    pid_ = std::exchange(other.pid_, -1);
    status_ = std::exchange(other.status_, std::nullopt);
    stop_grace_ = other.stop_grace_;
    stdin_ = std::move(other.stdin_);
    stdout_ = std::move(other.stdout_);
    stderr_ = std::move(other.stderr_);
  }
  return *this;
}

void ChildProcess::stop_if_running() noexcept {
  if (running()) stop(stop_grace_);
}

void ChildProcess::signal(int signal) const {
  if (running()) ::kill(pid_, signal);
}

std::optional<ExitStatus> ChildProcess::try_wait() {
  if (!running()) return status_;
  int status = 0;
  pid_t got;
  do got = ::waitpid(pid_, &status, WNOHANG);
  while (got < 0 && errno == EINTR);
  if (got == pid_)
    status_ = ExitStatus::from_wait_status(status);
  else if (got < 0)
    status_ = ExitStatus::exited_with(-1);  // ECHILD: reaped elsewhere; nothing left to wait for
  return status_;
}

ExitStatus ChildProcess::wait() {
  if (!running()) return status_.value_or(ExitStatus::exited_with(-1));
  int status = 0;
  pid_t got;
  do got = ::waitpid(pid_, &status, 0);
  while (got < 0 && errno == EINTR);
  status_ = got == pid_ ? ExitStatus::from_wait_status(status) : ExitStatus::exited_with(-1);
  return *status_;
}

ExitStatus ChildProcess::stop(std::chrono::milliseconds grace) {
  if (!running()) return status_.value_or(ExitStatus::exited_with(-1));
  signal(SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (!try_wait()) {
    if (std::chrono::steady_clock::now() >= deadline) {
      signal(SIGKILL);
      return wait();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return *status_;
}

}  // namespace diescope::core
