// Runs a shell command line as a user would type it and keeps what it printed (stdout and stderr
// together) and how it exited; and a fresh scratch folder under the build tree. Shared by the tests
// that drive the diescope binary through a shell (calibrate, roofline).
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace diescope::test {

struct ShellRun {
  int exit_code = -1;  // -1 when the shell could not start or the command did not exit
  std::string out;     // stdout and stderr together, unless with_stderr is false
};

inline ShellRun run_shell(const std::string& command_line, bool with_stderr = true) {
  const std::string command = command_line + (with_stderr ? " 2>&1" : "");
  ShellRun r;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buffer{};
  while (std::fgets(buffer.data(), static_cast<int>(buffer.size()), pipe) != nullptr) r.out += buffer.data();
  const int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// `diescope ARGS` from this build, through the shell; DIESCOPE_TEST_BIN_DIR names the binaries'
// folder of a build copied elsewhere (bench/run/gpu_regression.sh runs the gpu tests that way).
inline ShellRun run_diescope_shell(const std::string& args, bool with_stderr = true) {
  const char* bin_dir = std::getenv("DIESCOPE_TEST_BIN_DIR");
  const std::string bin = bin_dir != nullptr ? bin_dir : std::string(DIESCOPE_BINARY_DIR) + "/bin";
  return run_shell(bin + "/diescope " + args, with_stderr);
}

// An empty folder build/<area>/<name>, emptied first if an earlier run left one.
inline std::filesystem::path scratch_dir(const std::string& area, const std::string& name) {
  const std::filesystem::path dir = std::filesystem::path(DIESCOPE_BINARY_DIR) / area / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace diescope::test
