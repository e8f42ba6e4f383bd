#include "diescope/core/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "diescope/core/error.hpp"

namespace diescope::core {

namespace {
constexpr std::size_t kBufferBytes = 1 << 16;
}  // namespace

AtomicFileWriter::AtomicFileWriter(std::filesystem::path path) : path_(std::move(path)) {
  tmp_ = path_;
  tmp_ += ".tmp." + std::to_string(::getpid());
  fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    int err = errno;
    throw Error("cannot write " + path_.string() + ": open: " + std::strerror(err),
                "check that the folder exists, is writable and has free space", kExitInput);
  }
  buffer_.reserve(kBufferBytes);
}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(tmp_.c_str());
  }
}

void AtomicFileWriter::fail(const char* step, int err) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  ::unlink(tmp_.c_str());
  throw Error("cannot write " + path_.string() + ": " + step + ": " + std::strerror(err),
              "check that the folder exists, is writable and has free space", kExitInput);
}

void AtomicFileWriter::flush_buffer() {
  std::size_t done = 0;
  while (done < buffer_.size()) {
    ssize_t n = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("write", errno);
    }
    done += static_cast<std::size_t>(n);
  }
  buffer_.clear();
}

void AtomicFileWriter::write(std::string_view data) {
  if (fd_ < 0) throw Error("cannot write " + path_.string() + ": already committed", "", kExitInternal);
  buffer_.append(data);
  if (buffer_.size() >= kBufferBytes) flush_buffer();
}

void AtomicFileWriter::commit() {
  if (fd_ < 0) throw Error("cannot write " + path_.string() + ": already committed", "", kExitInternal);
  flush_buffer();
  if (::fsync(fd_) != 0) fail("flush", errno);
  int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) {
    int err = errno;
    ::unlink(tmp_.c_str());
    throw Error("cannot write " + path_.string() + ": flush: " + std::strerror(err),
                "check that the folder exists, is writable and has free space", kExitInput);
  }
  if (::rename(tmp_.c_str(), path_.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp_.c_str());
    throw Error("cannot write " + path_.string() + ": rename: " + std::strerror(err),
                "check that the folder exists, is writable and has free space", kExitInput);
  }
}

void write_file_atomically(const std::filesystem::path& path, std::string_view contents) {
  AtomicFileWriter writer(path);
  writer.write(contents);
  writer.commit();
}

}  // namespace diescope::core
