#include "diescope/core/unique_fd.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "diescope/core/error.hpp"

namespace diescope::core {

void UniqueFd::reset(int fd) noexcept {
  // close() is not retried on EINTR: on Linux the descriptor is released either way.
  if (fd_ >= 0 && fd_ != fd) ::close(fd_);
  fd_ = fd;
}

Pipe make_pipe(std::string_view purpose) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    throw Error("cannot create a pipe for " + std::string(purpose) + ": " + std::strerror(errno),
                "check the open-file limit (ulimit -n)", kExitInternal);
  }
  return Pipe{UniqueFd(fds[0]), UniqueFd(fds[1])};
}

void set_nonblocking(int fd) {
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
}

}  // namespace diescope::core
