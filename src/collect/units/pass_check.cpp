// Runs diescope-cupti (the only executable that links CUPTI) and reads its pass count, so the main
// binary and the tests check tables without loading CUPTI themselves.
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <poll.h>
#include <spawn.h>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

#include "diescope/collect/unit_tables.hpp"

extern char** environ;

namespace diescope::collect {
namespace {

struct Fd {
  int fd = -1;
  Fd() = default;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  void reset() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

}  // namespace

ToolRun run_tool(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  ToolRun run;
  if (argv.empty()) {
    run.error = "no program to run";
    return run;
  }
  int out_pipe[2];
  int err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
    run.error = errno_text("pipe");
    return run;
  }
  Fd out_read(out_pipe[0]), out_write(out_pipe[1]);
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    run.error = errno_text("pipe");
    return run;
  }
  Fd err_read(err_pipe[0]), err_write(err_pipe[1]);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_write.fd, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err_write.fd, STDERR_FILENO);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    run.error = "could not run " + argv[0] + ": " + std::strerror(rc);
    return run;
  }
  run.started = true;
  out_write.reset();
  err_write.reset();

  const auto deadline = std::chrono::steady_clock::now() + timeout;
  char buffer[4096];
  while (out_read.fd >= 0 || err_read.fd >= 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      run.timed_out = true;
      ::kill(pid, SIGKILL);
      break;
    }
    pollfd fds[2] = {{out_read.fd, POLLIN, 0}, {err_read.fd, POLLIN, 0}};
    const int n = ::poll(fds, 2, static_cast<int>(left.count()));
    if (n < 0 && errno != EINTR) break;
    Fd* owners[2] = {&out_read, &err_read};
    std::string* sinks[2] = {&run.out, &run.err};
    for (int i = 0; i < 2; ++i) {
      if (owners[i]->fd < 0 || fds[i].revents == 0) continue;
      const ssize_t got = ::read(owners[i]->fd, buffer, sizeof buffer);
      if (got > 0) {
        sinks[i]->append(buffer, static_cast<std::size_t>(got));
      } else if (got == 0 || errno != EINTR) {
        owners[i]->reset();
      }
    }
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) {
    run.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    run.signal = WTERMSIG(status);
  }
  return run;
}

PassCheck check_passes(const std::string& diescope_cupti, std::string_view chip,
                       const std::vector<std::string>& metrics) {
  PassCheck check;
  check.chip = std::string(chip);
  check.metrics = metrics.size();
  std::vector<std::string> argv = {diescope_cupti, "passes", "--chip", std::string(chip)};
  argv.insert(argv.end(), metrics.begin(), metrics.end());
  const ToolRun run = run_tool(argv, std::chrono::seconds(120));
  if (!run.started) {
    check.error = run.error;
    return check;
  }
  std::istringstream lines(run.out);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string key, value;
    fields >> key >> value;
    if (key == "passes") {
      try {
        check.passes = std::stoi(value);
      } catch (const std::exception&) {
        check.error = "diescope-cupti printed an unreadable pass count: " + line;
      }
    } else if (key == "rejected") {
      check.rejected.push_back(value);
    }
  }
  if (run.timed_out) {
    check.error = "diescope-cupti did not finish within 120 s";
  } else if (run.exit_code != 0 && check.rejected.empty()) {
    std::string why = run.err;
    while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
    check.error = why.empty() ? (run.signal ? "diescope-cupti was killed by signal " + std::to_string(run.signal)
                                            : "diescope-cupti exited with code " + std::to_string(run.exit_code))
                              : why;
  } else if (!check.passes && check.rejected.empty()) {
    check.error = "diescope-cupti printed no pass count";
  }
  return check;
}

std::string find_diescope_cupti() {
  if (const char* env = std::getenv("DIESCOPE_CUPTI"); env && *env) return env;
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  const auto candidate = self.parent_path() / "diescope-cupti";
  if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  return {};
}

}  // namespace diescope::collect
