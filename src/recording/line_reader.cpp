#include "line_reader.hpp"

#include <sys/mman.h>
#include <sys/stat.h>
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
                       long first_line, std::size_t /*buffer_bytes*/, bool strict_limit)
    : file_(std::move(file)),
      limit_(limit),
      file_pos_(begin),
      strict_limit_(strict_limit),
      eof_(begin >= limit),
      map_offset_(begin),
      line_number_(first_line - 1) {}

LineReader::~LineReader() {
  unmap();
}

void LineReader::unmap() {
  if (map_ != nullptr) ::munmap(const_cast<char*>(map_), map_bytes_);
  map_ = nullptr;
  map_bytes_ = 0;
}

void LineReader::line_too_long() const {
  throw core::InputError(file_->path, line_number_ + 1,
                         "the line is longer than " + std::to_string(kMaxLineBytes >> 20) + " MiB",
                         "this is not a recording diescope wrote; check the file");
}

// Maps the next window: from the page that holds the first unread byte, so a line cut by the old
// window's end is whole in the new one. A window with no newline in it doubles, up to a line of
// kMaxLineBytes.
void LineReader::fill() {
  const std::size_t unread = end_ - pos_;
  if (unread >= kMaxLineBytes) line_too_long();
  if (unread >= window_) window_ = std::min(window_ * 2, kMaxLineBytes);  // a whole window without a newline
  const std::int64_t unread_at = map_offset_ + static_cast<std::int64_t>(pos_);
  static const std::int64_t page = ::sysconf(_SC_PAGESIZE);
  const std::int64_t from = unread_at / page * page;
  std::int64_t to = std::min<std::int64_t>(limit_, from + static_cast<std::int64_t>(window_ + page));
  // A file cut shorter after it was opened: mapping past its end would fault, so ask its size first.
  struct stat st {};
  if (::fstat(file_->fd, &st) != 0) {
    const int err = errno;
    throw core::InputError(file_->path, 0, std::string("reading failed: ") + std::strerror(err),
                           "check the disk, or copy the recording elsewhere and read the copy");
  }
  if (st.st_size < to) {
    if (strict_limit_)
      throw core::InputError(file_->path, 0, "the file became shorter while it was being read",
                             "do not change a recording while reading it; copy it first and read the copy");
    to = std::max<std::int64_t>(st.st_size, unread_at + static_cast<std::int64_t>(unread));
  }
  if (to <= unread_at + static_cast<std::int64_t>(unread)) {
    eof_ = true;
    return;
  }
  const auto bytes = static_cast<std::size_t>(to - from);
  void* mapped = ::mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE | MAP_POPULATE, file_->fd, from);
  if (mapped == MAP_FAILED) {
    const int err = errno;
    throw core::InputError(file_->path, 0, std::string("reading failed: ") + std::strerror(err),
                           "check the disk, or copy the recording elsewhere and read the copy");
  }
  ::madvise(mapped, bytes, MADV_SEQUENTIAL);
  unmap();
  map_ = static_cast<const char*>(mapped);
  map_bytes_ = bytes;
  map_offset_ = from;
  pos_ = static_cast<std::size_t>(unread_at - from);
  end_ = bytes;
  file_pos_ = to;
  if (file_pos_ >= limit_) eof_ = true;
}

}  // namespace diescope::recording::recfmt
