#include "diescope/workloads/launcher.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <system_error>

#include "diescope/core/error.hpp"

namespace diescope::workloads {

namespace {

constexpr const char* kBuildFix =
    "build it with the project's CMake (target diescope-workload, needs nvcc and DIESCOPE_CUDA=ON) and keep "
    "it "
    "in the same folder as diescope";

}  // namespace

std::filesystem::path current_executable() {
  std::error_code ec;
  auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) {
    throw core::Error("cannot find diescope's own executable through /proc/self/exe: " + ec.message(),
                      "run diescope on Linux with /proc mounted", core::kExitInternal);
  }
  return path;
}

std::filesystem::path workload_binary_beside(const std::filesystem::path& self_exe) {
  return self_exe.parent_path() / kWorkloadBinaryName;
}

std::filesystem::path find_workload_binary(const std::filesystem::path& self_exe) {
  auto path = workload_binary_beside(self_exe);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw core::Error("the bundled workloads are not installed: " + path.string() + " does not exist",
                      kBuildFix, core::kExitDevice);
  }
  if (::access(path.c_str(), X_OK) != 0) {
    throw core::Error("the bundled workloads cannot run: " + path.string() + " is not executable (" +
                          std::strerror(errno) + ")",
                      "make it executable (chmod +x) or rebuild it; " + std::string(kBuildFix),
                      core::kExitDevice);
  }
  return path;
}

void exec_workload(const std::filesystem::path& binary, const std::vector<std::string>& args) {
  std::vector<std::string> owned;
  owned.reserve(args.size() + 1);
  owned.push_back(binary.string());
  owned.insert(owned.end(), args.begin(), args.end());
  std::vector<char*> argv;
  argv.reserve(owned.size() + 1);
  for (auto& a : owned) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  ::execv(binary.c_str(), argv.data());
  const int err = errno;
  throw core::Error("cannot start " + binary.string() + ": " + std::strerror(err), kBuildFix,
                    core::kExitDevice);
}

}  // namespace diescope::workloads
