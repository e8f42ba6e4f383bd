// Streams a recording to disk in the format of docs/recording-format.md. Lines are buffered in
// memory and reach the OS on flush() (live collection flushes after every drain, so a crash loses
// at most what was measured since the last drain); close() and the destructor also fsync.
//
// The writer enforces every rule the reader checks (column counts, no inf, no NaN GPU-Util, times
// never decreasing within a kind, end not before start), so what it writes always reads back. A
// record that breaks a rule is a bug in its producer: write() throws Error with kExitInternal and
// writes nothing for it.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <set>
#include <string>

#include "diescope/recording/record_kinds.hpp"
#include "diescope/recording/records.hpp"
#include "diescope/recording/sink.hpp"

namespace diescope::recording {

class RecordingWriter final : public RecordSink {
 public:
  // Creates (or truncates) `path` and writes the header and meta lines. Throws Error naming the path
  // and a fix when the file cannot be created, and Error (internal) when the meta is invalid.
  RecordingWriter(std::filesystem::path path, const RecordingMeta& meta);
  ~RecordingWriter() override;  // close(), swallowing errors: call close() to see them
  RecordingWriter(const RecordingWriter&) = delete;
  RecordingWriter& operator=(const RecordingWriter&) = delete;

  // write() (RecordSink) takes a record of any kind, or its owning form.

  // Hands every buffered line to the OS (write(2)); survives a crash of this process, not of the
  // machine. Throws Error naming the path (e.g. disk full).
  void flush();
  // flush(), fsync and close. Idempotent. Writing after close() throws.
  void close();

  const std::filesystem::path& path() const { return path_; }
  const RecordingMeta& meta() const { return meta_; }
  long lines_written() const { return lines_; }

 private:
  void write_record(AnyRecord record) override;
  // Checks one record, then appends its line (the kind's word, then its fields).
  template <typename Record>
  void append(const Record& record);
  void append_line_end();
  void check_open() const;
  // Checks that a record of kind `kind` (its index in RecordKinds) at `ts` keeps its kind's time
  // order, then remembers `ts`.
  void stamp(std::size_t kind, TimeNs ts);
  [[noreturn]] void reject(const std::string& what) const;

  std::filesystem::path path_;
  RecordingMeta meta_;
  int fd_ = -1;
  std::string buffer_;
  long lines_ = 0;
  bool saw_end_ = false;
  std::set<std::int64_t> host_ids_;           // host streams declared so far
  std::array<TimeNs, kKindCount> last_ts_{};  // latest time written per kind
  std::array<bool, kKindCount> have_ts_{};
};

}  // namespace diescope::recording
