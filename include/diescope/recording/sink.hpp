// Where records go as they are produced: the file writer (writer.hpp) or a MemoryRecording.
// Collectors and the synthetic generator write to a RecordSink, so the same code fills a file on
// disk or a recording held in memory for tests.
#pragma once

#include <type_traits>
#include <variant>

#include "diescope/recording/memory_recording.hpp"
#include "diescope/recording/record_kinds.hpp"
#include "diescope/recording/records.hpp"

namespace diescope::recording {

template <typename Record>
using RecordPtr = const Record*;

class RecordSink {
 public:
  virtual ~RecordSink() = default;
  // Writes one record of any kind (RecordKinds), or its owning form (an OwnedChipSample).
  template <typename Record>
  void write(const Record& record) {
    if constexpr (is_record_kind<Record>) {
      write_record(AnyRecord(std::in_place_type<RecordPtr<Record>>, &record));
    } else {
      static_assert(is_record_kind<std::remove_cvref_t<decltype(view_of(record))>>,
                    "write() takes a record of one of RecordKinds (record_kinds.hpp) or its owning form");
      write(view_of(record));
    }
  }

 protected:
  using AnyRecord = PerKind<std::variant, RecordPtr, RecordKinds>;  // the record, of whichever kind
  virtual void write_record(AnyRecord record) = 0;
};

// Appends every record to a MemoryRecording (which must outlive the sink): give it a recording with
// its meta_data set and no records yet. Keeps the side records as a file reader would fill them:
// last_ts_ns follows the latest record (meta start_ns while there is none), complete_lines counts
// the records plus the two header lines. Records must arrive in time order per kind, as for a file;
// the sink does not check (write to a RecordingWriter to have them checked).
class MemorySink final : public RecordSink {
 public:
  explicit MemorySink(MemoryRecording& recording);

 private:
  void write_record(AnyRecord record) override;
  template <typename Record>
  void add(const Record& record);
  void saw(TimeNs ts);
  MemoryRecording& recording_;
  bool any_record_ = false;
};

}  // namespace diescope::recording
