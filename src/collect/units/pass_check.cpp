// Runs diescope-cupti (the only executable that links CUPTI) and reads its pass count, so the main
// binary and the tests check tables without loading CUPTI themselves.
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <poll.h>
#include <sstream>
#include <unistd.h>

#include "diescope/collect/unit_tables.hpp"
#include "diescope/core/child_process.hpp"

namespace diescope::collect {

ToolRun run_tool(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  ToolRun run;
  if (argv.empty()) {
    run.error = "no program to run";
    return run;
  }
  core::ChildSpec spec;
  spec.argv = argv;
  spec.in = core::Stdio::null();
  spec.out = core::Stdio::pipe();
  spec.err = core::Stdio::pipe();
  core::ChildProcess child;
  try {
    child = core::ChildProcess(spec);
  } catch (const core::StartError& e) {
    run.error = "could not run " + argv[0] + ": " + std::strerror(e.system_error());
    return run;
  } catch (const core::Error& e) {
    run.error = e.cause();
    return run;
  }
  run.started = true;

  const auto deadline = std::chrono::steady_clock::now() + timeout;
  char buffer[4096];
  core::UniqueFd* pipes[2] = {&child.stdout_pipe(), &child.stderr_pipe()};
  std::string* sinks[2] = {&run.out, &run.err};
  while (*pipes[0] || *pipes[1]) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      run.timed_out = true;
      child.signal(SIGKILL);
      break;
    }
    pollfd fds[2] = {{pipes[0]->get(), POLLIN, 0}, {pipes[1]->get(), POLLIN, 0}};
    const int n = ::poll(fds, 2, static_cast<int>(left.count()));
    if (n < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (!*pipes[i] || fds[i].revents == 0) continue;
      const ssize_t got = ::read(pipes[i]->get(), buffer, sizeof buffer);
      if (got > 0) {
        sinks[i]->append(buffer, static_cast<std::size_t>(got));
      } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
        pipes[i]->reset();
      }
    }
  }
  const core::ExitStatus status = child.wait();
  if (status.exited()) {
    run.exit_code = status.code();
  } else {
    run.signal = status.signal();
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
    check.error = why.empty()
                      ? (run.signal ? "diescope-cupti was killed by signal " + std::to_string(run.signal)
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
