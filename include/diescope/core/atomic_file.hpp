// Reports are written atomically: to a temporary file in the same folder, flushed, then renamed
// over the destination, so a reader never sees half a report and a crash leaves the old one.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace diescope::core {

// Throws Error naming the path and the system's reason on failure; the temporary is removed.
void write_file_atomically(const std::filesystem::path& path, std::string_view contents);

// The streaming form, for files too long to hold in memory (samples.csv of a day-long recording):
// writes go to a temporary beside `path`; commit() flushes and renames it into place. Destroyed
// without commit(), it removes the temporary and leaves any old file untouched.
class AtomicFileWriter {
 public:
  explicit AtomicFileWriter(std::filesystem::path path);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  void write(std::string_view data);
  void commit();  // throws Error like write_file_atomically

 private:
  void flush_buffer();
  [[noreturn]] void fail(const char* step, int err);

  std::filesystem::path path_;
  std::filesystem::path tmp_;
  int fd_ = -1;
  std::string buffer_;
};

}  // namespace diescope::core
