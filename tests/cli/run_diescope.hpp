// Runs the diescope binary as a user would and keeps what it printed and how it exited.
#pragma once

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

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

inline Ran run_diescope(const std::vector<std::string>& args, const std::filesystem::path& cwd = {}) {
  return run_diescope_at(DIESCOPE_BINARY, args, cwd);
}

}  // namespace diescope::test
