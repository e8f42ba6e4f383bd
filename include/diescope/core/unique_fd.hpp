// File descriptors with one owner each: closed exactly once, by whoever holds them last.
#pragma once

#include <string_view>

namespace diescope::core {

// Owns one file descriptor. Move-only; a moved-from UniqueFd is empty (get() == -1) and closes
// nothing.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) noexcept : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const noexcept { return fd_; }
  explicit operator bool() const noexcept { return fd_ >= 0; }
  // Gives up ownership without closing.
  int release() noexcept {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  // Closes the descriptor held (if any) and takes `fd`.
  void reset(int fd = -1) noexcept;

 private:
  int fd_ = -1;
};

// Both ends of a pipe, close-on-exec.
struct Pipe {
  UniqueFd read;
  UniqueFd write;
};

// `purpose` completes "cannot create a pipe for ..." in the Error thrown when the system refuses
// (usually the open-file limit).
Pipe make_pipe(std::string_view purpose);

// Reads and writes on `fd` return EAGAIN instead of blocking.
void set_nonblocking(int fd);

}  // namespace diescope::core
