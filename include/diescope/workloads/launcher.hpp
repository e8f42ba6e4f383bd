// `diescope workload NAME` runs the separate `diescope-workload` executable that sits beside
// `diescope`, so the main binary never links the CUDA runtime or cuBLAS and starts without a GPU.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace diescope::workloads {

inline constexpr const char* kWorkloadBinaryName = "diescope-workload";

// The running executable, from /proc/self/exe. Throws Error when it cannot be read.
std::filesystem::path current_executable();

// Where the workload executable must be: the same folder as `self_exe`.
std::filesystem::path workload_binary_beside(const std::filesystem::path& self_exe);

// The workload executable beside `self_exe`; throws Error naming the path looked at and how to
// build it when it is missing or not executable.
std::filesystem::path find_workload_binary(const std::filesystem::path& self_exe);

// Replaces this process with `binary args...` (stdout is flushed first). Returns only by throwing
// Error when the exec fails.
[[noreturn]] void exec_workload(const std::filesystem::path& binary, const std::vector<std::string>& args);

}  // namespace diescope::workloads
