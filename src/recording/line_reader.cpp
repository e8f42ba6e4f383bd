#include "line_reader.hpp"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>

#include "diescope/core/error.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

// The newlines of the 64 bytes at map_ + at, as bits (bit i: map_[at + i]), those before pos_ and
// from end_ on left out. The 64 bytes lie in the mapping's pages, as map_ is page-aligned and at is a
// multiple of 64 below end_.
[[gnu::always_inline]] inline std::uint64_t LineReader::newlines(std::size_t at) const {
  const char* block = map_ + at;
  std::uint64_t bits = 0;
#if defined(__SSE2__)
  const __m128i nl = _mm_set1_epi8('\n');
  for (std::size_t i = 0; i < 64; i += 16) {
    const __m128i x = _mm_load_si128(reinterpret_cast<const __m128i*>(block + i));
    bits |= static_cast<std::uint64_t>(static_cast<std::uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(x, nl))))
            << i;
  }
#else
  for (std::size_t i = 0; i < 64; ++i) bits |= static_cast<std::uint64_t>(block[i] == '\n') << i;
#endif
  if (at < pos_) bits &= ~std::uint64_t{0} << (pos_ - at);
  if (end_ - at < 64) bits &= (std::uint64_t{1} << (end_ - at)) - 1;
  return bits;
}

bool LineReader::next(std::string_view& line) {
  for (;;) {
    // Newlines are found 64 bytes at a time and kept as bits, so a line costs a bit's position
    // rather than a search of its own.
    while (newline_bits_ == 0 && scanned_ < end_) {
      newline_bits_ = newlines(scanned_);
      scanned_ += 64;
    }
    if (newline_bits_ != 0) {
      const std::size_t nl = scanned_ - 64 + static_cast<std::size_t>(std::countr_zero(newline_bits_));
      newline_bits_ &= newline_bits_ - 1;
      const char* start = map_ + pos_;
      std::size_t length = nl - pos_;
      if (length >= kMaxLineBytes) line_too_long();
      line_offset_ = map_offset_ + static_cast<std::int64_t>(pos_);
      line_length_ = length;
      if (length > 0 && start[length - 1] == '\r') --length;
      line = std::string_view(start, length);
      pos_ += line_length_ + 1;
      ++line_number_;
      return true;
    }
    if (eof_) {
      tail_bytes_ = end_ - pos_;
      return false;
    }
    fill();
    // The new window: search again from the 64 bytes that hold the first unread byte.
    scanned_ = pos_ / 64 * 64;
    newline_bits_ = 0;
  }
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
