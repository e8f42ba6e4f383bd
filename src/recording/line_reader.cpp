#include "line_reader.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "diescope/core/error.hpp"

namespace diescope::recording::recfmt {

OpenFile::~OpenFile() {
  if (fd >= 0) ::close(fd);
}

LineReader::LineReader(std::shared_ptr<const OpenFile> file, std::int64_t begin, std::int64_t limit,
                       long first_line, std::size_t buffer_bytes, bool strict_limit)
    : file_(std::move(file)),
      limit_(limit),
      file_pos_(begin),
      strict_limit_(strict_limit),
      eof_(begin >= limit),
      capacity_(std::max<std::size_t>(buffer_bytes, 64)),
      line_number_(first_line - 1) {
  buf_.reset(new char[capacity_]);
}

bool LineReader::next(std::string_view& line) {
  for (;;) {
    const char* start = buf_.get() + pos_;
    const auto* nl = static_cast<const char*>(std::memchr(start + scanned_, '\n', end_ - pos_ - scanned_));
    if (nl != nullptr) {
      std::size_t length = static_cast<std::size_t>(nl - start);
      line_offset_ = file_pos_ - static_cast<std::int64_t>(end_ - pos_);
      line_length_ = length;
      if (length > 0 && start[length - 1] == '\r') --length;
      line = std::string_view(start, length);
      pos_ += line_length_ + 1;
      scanned_ = 0;
      ++line_number_;
      return true;
    }
    scanned_ = end_ - pos_;
    if (eof_) {
      tail_bytes_ = end_ - pos_;
      return false;
    }
    fill();
  }
}

void LineReader::fill() {
  const std::size_t unread = end_ - pos_;
  if (pos_ > 0) {
    std::memmove(buf_.get(), buf_.get() + pos_, unread);
    pos_ = 0;
    end_ = unread;
  }
  if (end_ == capacity_) {
    if (capacity_ >= kMaxLineBytes)
      throw core::InputError(file_->path, line_number_ + 1,
                             "the line is longer than " + std::to_string(kMaxLineBytes >> 20) + " MiB",
                             "this is not a recording diescope wrote; check the file");
    const std::size_t bigger = std::min(capacity_ * 2, kMaxLineBytes);
    std::unique_ptr<char[]> grown(new char[bigger]);
    std::memcpy(grown.get(), buf_.get(), end_);
    buf_ = std::move(grown);
    capacity_ = bigger;
  }
  const auto want = static_cast<std::size_t>(
      std::min<std::int64_t>(static_cast<std::int64_t>(capacity_ - end_), limit_ - file_pos_));
  ssize_t n;
  do {
    n = ::pread(file_->fd, buf_.get() + end_, want, file_pos_);
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    const int err = errno;
    throw core::InputError(file_->path, 0, std::string("reading failed: ") + std::strerror(err),
                           "check the disk, or copy the recording elsewhere and read the copy");
  }
  if (n == 0) {
    if (strict_limit_)
      throw core::InputError(file_->path, 0, "the file became shorter while it was being read",
                             "do not change a recording while reading it; copy it first and read the copy");
    eof_ = true;
    return;
  }
  end_ += static_cast<std::size_t>(n);
  file_pos_ += n;
  if (file_pos_ >= limit_) eof_ = true;
}

}  // namespace diescope::recording::recfmt
