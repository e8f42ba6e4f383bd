// Runs a program as a user would and keeps what it printed and how it exited: the diescope binary
// with its arguments (no shell: stdout and stderr apart), or a command line through the shell (stdout
// and stderr together); and a fresh scratch folder under the build tree. The one helper every C++
// test that runs the binary uses.
#pragma once

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace diescope::test {

struct Ran {
  int exit_code = -1;  // 128 + the signal when it was killed
  std::string out;
  std::string err;
};

inline std::string read_all(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// `args` follow the program name; the command runs in `cwd` (the current folder when empty), with
// standard input from /dev/null.
inline Ran run_diescope_at(const std::filesystem::path& binary, const std::vector<std::string>& args,
                           const std::filesystem::path& cwd = {}) {
  static int counter = 0;
  const std::filesystem::path base =
      std::filesystem::temp_directory_path() /
      ("diescope-cli-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  const std::string out_path = base.string() + ".out", err_path = base.string() + ".err";
  std::vector<std::string> owned{binary.string()};
  owned.insert(owned.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : owned) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  pid_t pid = -1;
  Ran ran;
  if (posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ) == 0) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    ran.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  posix_spawn_file_actions_destroy(&actions);
  ran.out = read_all(out_path);
  ran.err = read_all(err_path);
  std::filesystem::remove(out_path);
  std::filesystem::remove(err_path);
  return ran;
}

// The diescope binary of this build; DIESCOPE_TEST_BIN_DIR names the binaries' folder of a build
// copied elsewhere (bench/run/gpu_regression.sh runs the gpu tests that way).
inline std::string diescope_binary() {
  if (const char* dir = std::getenv("DIESCOPE_TEST_BIN_DIR"); dir != nullptr)
    return std::string(dir) + "/diescope";
#ifdef DIESCOPE_BINARY
  return DIESCOPE_BINARY;
#else
  return std::string(DIESCOPE_BINARY_DIR) + "/bin/diescope";
#endif
}

inline Ran run_diescope(const std::vector<std::string>& args, const std::filesystem::path& cwd = {}) {
  return run_diescope_at(diescope_binary(), args, cwd);
}

// A command line through the shell: stdout, and stderr with it unless with_stderr is false (then
// stderr goes where the test's goes); `err` stays empty.
inline Ran run_shell(const std::string& command_line, bool with_stderr = true) {
  const std::string command = command_line + (with_stderr ? " 2>&1" : "");
  Ran r;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) r.out.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
  return r;
}

// `diescope ARGS` through the shell.
inline Ran run_diescope_shell(const std::string& args, bool with_stderr = true) {
  return run_shell(diescope_binary() + " " + args, with_stderr);
}

// An empty folder build/<area>/<name>, emptied first if an earlier run left one.
inline std::filesystem::path scratch_dir(const std::string& area, const std::string& name) {
  const std::filesystem::path dir = std::filesystem::path(DIESCOPE_BINARY_DIR) / area / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace diescope::test
