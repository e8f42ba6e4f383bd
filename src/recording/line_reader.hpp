// A reader of complete lines from a byte range of an open file, for the recording reader. It maps a
// window of the file at a time (kWindowBytes, more for a longer line) rather than copying it into a
// buffer, so reading costs no copy and memory does not grow with the file. Each cursor owns one, so
// cursors move independently; all share the file descriptor.
#pragma once

#include <bit>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace diescope::recording::recfmt {

// An open recording file; closed when the last reader lets go of it.
struct OpenFile {
  OpenFile(std::string path_for_messages, int descriptor)
      : path(std::move(path_for_messages)), fd(descriptor) {}
  ~OpenFile();
  OpenFile(const OpenFile&) = delete;
  OpenFile& operator=(const OpenFile&) = delete;
  std::string path;
  int fd;
};

class LineReader {
 public:
  // Reads [begin, limit) of the file; `first_line` is the 1-based number of the line at `begin`.
  // `strict_limit`: the file is known to hold `limit` bytes, so ending sooner is an error (it shrank).
  // `buffer_bytes` is kept for callers; the window is what it maps.
  LineReader(std::shared_ptr<const OpenFile> file, std::int64_t begin, std::int64_t limit, long first_line,
             std::size_t buffer_bytes, bool strict_limit);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // The next complete line, without its '\n' and a '\r' before it. False at the end of the range;
  // tail_bytes() then says how many bytes followed the last newline.
  bool next(std::string_view& line);
  long line_number() const { return line_number_; }          // of the line last returned
  std::int64_t line_offset() const { return line_offset_; }  // where that line starts in the file
  std::int64_t offset_after() const { return line_offset_ + static_cast<std::int64_t>(line_length_) + 1; }
  std::size_t tail_bytes() const { return tail_bytes_; }

  // Longest line accepted; a longer one is an error rather than unbounded memory.
  static constexpr std::size_t kMaxLineBytes = std::size_t{4} << 20;
  // The part of the file mapped at a time.
  static constexpr std::size_t kWindowBytes = std::size_t{2} << 20;

 private:
  void fill();
  std::uint64_t newlines(std::size_t at) const;
  void unmap();
  [[noreturn]] void line_too_long() const;

  std::shared_ptr<const OpenFile> file_;
  std::int64_t limit_;
  std::int64_t file_pos_;  // file offset of map_[end_]
  bool strict_limit_;
  bool eof_ = false;
  const char* map_ = nullptr;  // the window mapped, at file offset map_offset_
  std::size_t map_bytes_ = 0;
  std::int64_t map_offset_ = 0;
  std::size_t window_ = kWindowBytes;
  std::size_t pos_ = 0;             // start of the unread part
  std::size_t end_ = 0;             // end of the bytes mapped within the range
  std::size_t scanned_ = 0;         // the newlines before this offset are in newline_bits_ or taken
  std::uint64_t newline_bits_ = 0;  // those not taken of the 64 bytes before scanned_
  long line_number_;
  std::int64_t line_offset_ = 0;
  std::size_t line_length_ = 0;
  std::size_t tail_bytes_ = 0;
};

// In the header, so that the reader's loops take a line without a call.
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

inline bool LineReader::next(std::string_view& line) {
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

}  // namespace diescope::recording::recfmt
