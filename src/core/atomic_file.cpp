#include "diescope/core/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "diescope/core/error.hpp"

namespace diescope {

namespace {
[[noreturn]] void fail(const std::filesystem::path& path, const char* step, int err) {
  throw Error("cannot write " + path.string() + ": " + step + ": " + std::strerror(err),
              "check that the folder exists, is writable and has free space", kExitInput);
}
}  // namespace

void write_file_atomically(const std::filesystem::path& path, std::string_view contents) {
  std::filesystem::path tmp = path;
  tmp += ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail(path, "open", errno);
  std::size_t done = 0;
  while (done < contents.size()) {
    ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      fail(path, "write", err);
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    fail(path, "flush", err);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    fail(path, "rename", err);
  }
}

}  // namespace diescope
