// Errors a user can cause or meet. Each carries what went wrong and what to do about it; the
// command line prints both and exits non-zero. Vendor failures (CUDA, CUPTI, NVML) derive from
// VendorError so the call, file:line and the vendor's own error name travel together.
#pragma once

#include <stdexcept>
#include <string>

namespace diescope::core {

// Exit codes the command line uses for its own failures (a measured command's code is passed through).
inline constexpr int kExitUsage = 2;      // bad flag or argument
inline constexpr int kExitInput = 3;      // a file that is missing, unreadable or malformed
inline constexpr int kExitDevice = 4;     // no GPU, no driver, counters unavailable
inline constexpr int kExitInternal = 70;  // a bug: please report it

class Error : public std::runtime_error {
 public:
  Error(std::string cause, std::string fix, int exit_code)
      : std::runtime_error(cause), cause_(std::move(cause)), fix_(std::move(fix)), exit_code_(exit_code) {}
  const std::string& cause() const { return cause_; }
  const std::string& fix() const { return fix_; }
  int exit_code() const { return exit_code_; }

 private:
  std::string cause_;
  std::string fix_;
  int exit_code_;
};

// A file that could not be read as what it claims to be. `line` is 1-based, 0 when not about a line.
class InputError : public Error {
 public:
  InputError(std::string path, long line, const std::string& what, std::string fix)
      : Error(format(path, line, what), std::move(fix), kExitInput), path_(std::move(path)), line_(line) {}
  const std::string& path() const { return path_; }
  long line() const { return line_; }

 private:
  static std::string format(const std::string& path, long line, const std::string& what) {
    return line > 0 ? path + ":" + std::to_string(line) + ": " + what : path + ": " + what;
  }
  std::string path_;
  long line_;
};

class UsageError : public Error {
 public:
  UsageError(std::string cause, std::string fix) : Error(std::move(cause), std::move(fix), kExitUsage) {}
};

class DeviceError : public Error {
 public:
  DeviceError(std::string cause, std::string fix) : Error(std::move(cause), std::move(fix), kExitDevice) {}
};

}  // namespace diescope::core
