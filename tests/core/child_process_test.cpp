// ChildProcess: exit codes and signals as values, the one "command not found" error, pipes, the
// environment, and a destructor that never leaves a child running or unreaped.
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <string>

#include <gtest/gtest.h>

#include "diescope/core/child_process.hpp"

namespace diescope {
namespace {

using namespace std::chrono_literals;

core::ChildSpec shell(const std::string& script) {
  core::ChildSpec spec;
  spec.argv = {"/bin/sh", "-c", script};
  return spec;
}

// Everything the child writes to the pipe until it closes it.
std::string read_all(core::UniqueFd& fd) {
  std::string out;
  char chunk[256];
  for (;;) {
    const ssize_t n = ::read(fd.get(), chunk, sizeof chunk);
    if (n > 0)
      out.append(chunk, static_cast<std::size_t>(n));
    else if (n == 0)
      return out;
    else if (errno == EAGAIN || errno == EINTR)
      ::usleep(1000);
    else
      return out;
  }
}

TEST(ExitStatus, ShellCodesAndDescriptions) {
  EXPECT_EQ(core::ExitStatus::exited_with(3).shell_code(), 3);
  EXPECT_EQ(core::ExitStatus::killed_by(SIGTERM).shell_code(), 128 + 15);
  EXPECT_EQ(core::ExitStatus::exited_with(3).describe(), "exited with code 3");
  EXPECT_EQ(core::ExitStatus::killed_by(SIGSEGV).describe(), "killed by signal SIGSEGV (Segmentation fault)");
}

TEST(ChildProcess, ReturnsTheExitCode) {
  core::ChildProcess child(shell("exit 3"));
  const core::ExitStatus status = child.wait();
  EXPECT_TRUE(status.exited());
  EXPECT_EQ(status.code(), 3);
  EXPECT_FALSE(child.running());
  EXPECT_EQ(child.exit_status(), status);
}

TEST(ChildProcess, ReturnsTheSignalThatKilledIt) {
  core::ChildProcess child(shell("kill -9 $$"));
  const core::ExitStatus status = child.wait();
  EXPECT_FALSE(status.exited());
  EXPECT_EQ(status.signal(), SIGKILL);
  EXPECT_EQ(status.shell_code(), 137);
}

TEST(ChildProcess, TryWaitIsEmptyWhileItRuns) {
  core::ChildProcess child(shell("exec sleep 5"));
  EXPECT_FALSE(child.try_wait());
  EXPECT_TRUE(child.running());
  child.signal(SIGTERM);
  EXPECT_EQ(child.wait(), core::ExitStatus::killed_by(SIGTERM));
}

TEST(ChildProcess, ACommandNotFoundSaysWhyAndHowToFixIt) {
  core::ChildSpec spec;
  spec.argv = {"diescope-no-such-command-xyz"};
  try {
    core::ChildProcess child(spec);
    FAIL() << "a missing command started";
  } catch (const core::StartError& e) {
    EXPECT_EQ(e.cause(), "command not found: diescope-no-such-command-xyz");
    EXPECT_EQ(e.fix(), "check its spelling, or give its path; it is looked up in PATH");
    EXPECT_EQ(e.exit_code(), 127);
    EXPECT_EQ(e.system_error(), ENOENT);
  }
  spec.argv = {"/nonexistent/tool"};
  try {
    core::ChildProcess child(spec);
    FAIL() << "a missing path started";
  } catch (const core::StartError& e) {
    EXPECT_EQ(e.cause(), "command not found: /nonexistent/tool");
    EXPECT_EQ(e.fix(), "check the path: no such file");
  }
}

TEST(ChildProcess, FindsCommandsLikeExecvp) {
  EXPECT_EQ(core::find_executable("/bin/sh"), "/bin/sh");
  EXPECT_FALSE(core::find_executable("sh").empty());
  EXPECT_TRUE(core::find_executable("/nonexistent/tool").empty());
  EXPECT_TRUE(core::find_executable("/tmp").empty());  // a folder is not a command
  EXPECT_TRUE(core::find_executable("").empty());
}

TEST(ChildProcess, DestructorKillsAndReapsARunningChild) {
  pid_t pid = -1;
  {
    core::ChildSpec spec = shell("exec sleep 30");
    spec.stop_grace = 100ms;
    core::ChildProcess child(spec);
    pid = child.pid();
    ASSERT_GT(pid, 0);
    EXPECT_EQ(::kill(pid, 0), 0);  // alive
  }
  // Reaped: the pid is no longer this process's child, and no process has it (barring reuse).
  EXPECT_EQ(::waitpid(pid, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
  EXPECT_EQ(::kill(pid, 0), -1);
  EXPECT_EQ(errno, ESRCH);
}

TEST(ChildProcess, DestructorKillsAChildThatIgnoresSigterm) {
  pid_t pid = -1;
  {
    // The shell prints once its trap is set, so SIGTERM cannot arrive before it.
    core::ChildSpec spec = shell("trap '' TERM; echo ready; while :; do sleep 0.01; done");
    spec.out = core::Stdio::pipe();
    spec.stop_grace = 100ms;
    core::ChildProcess child(spec);
    pid = child.pid();
    char byte = 0;
    while (::read(child.stdout_pipe().get(), &byte, 1) != 1) ::usleep(1000);
  }
  EXPECT_EQ(::waitpid(pid, nullptr, WNOHANG), -1);
  EXPECT_EQ(::kill(pid, 0), -1);
}

TEST(ChildProcess, StopSendsSigtermFirst) {
  core::ChildProcess child(shell("exec sleep 30"));
  EXPECT_EQ(child.stop(5s), core::ExitStatus::killed_by(SIGTERM));
}

TEST(ChildProcess, PipesCarryItsStandardStreams) {
  core::ChildSpec spec = shell("read line; echo \"out:$line\"; echo err >&2");
  spec.in = core::Stdio::pipe();
  spec.out = core::Stdio::pipe();
  spec.err = core::Stdio::pipe();
  core::ChildProcess child(spec);
  ASSERT_EQ(::write(child.stdin_pipe().get(), "hello\n", 6), 6);
  child.stdin_pipe().reset();
  EXPECT_EQ(read_all(child.stdout_pipe()), "out:hello\n");
  EXPECT_EQ(read_all(child.stderr_pipe()), "err\n");
  EXPECT_EQ(child.wait().code(), 0);
}

TEST(ChildProcess, StdinFromDevNullReadsNothing) {
  core::ChildSpec spec = shell("cat; echo done");
  spec.in = core::Stdio::null();
  spec.out = core::Stdio::pipe();
  core::ChildProcess child(spec);
  EXPECT_EQ(read_all(child.stdout_pipe()), "done\n");
}

TEST(ChildProcess, SetsAndUnsetsEnvironmentVariables) {
  ::setenv("DIESCOPE_TEST_UNSET_ME", "present", 1);
  core::ChildSpec spec = shell("echo \"${DIESCOPE_TEST_SET:-none} ${DIESCOPE_TEST_UNSET_ME:-none}\"");
  spec.out = core::Stdio::pipe();
  spec.set_env = {{"DIESCOPE_TEST_SET", "yes"}};
  spec.unset_env = {"DIESCOPE_TEST_UNSET_ME"};
  core::ChildProcess child(spec);
  EXPECT_EQ(read_all(child.stdout_pipe()), "yes none\n");
  ::unsetenv("DIESCOPE_TEST_UNSET_ME");
}

TEST(ChildProcess, StartsWithDefaultSignalDispositions) {
  // SIGPIPE ignored here must not be inherited: a child that sends itself SIGPIPE dies of it.
  struct sigaction ignore {
  }, previous{};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore, &previous);
  core::ChildProcess child(shell("kill -PIPE $$; exit 0"));
  EXPECT_EQ(child.wait(), core::ExitStatus::killed_by(SIGPIPE));
  ::sigaction(SIGPIPE, &previous, nullptr);
}

TEST(ChildProcess, AMovedChildIsOwnedOnce) {
  core::ChildProcess first(shell("exit 4"));
  const pid_t pid = first.pid();
  core::ChildProcess second(std::move(first));
  EXPECT_EQ(first.pid(), -1);
  EXPECT_FALSE(first.running());
  EXPECT_EQ(second.pid(), pid);
  EXPECT_EQ(second.wait().code(), 4);
}

}  // namespace
}  // namespace diescope
