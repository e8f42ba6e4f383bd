// A recording as the analysis sees it: metadata, the small records loaded whole, and one
// independent cursor per high-rate stream. Cursors never buffer a stream, so the analysis runs in
// memory that does not grow with a recording's length. Implemented by the file reader
// (reader.hpp) and by MemoryRecording (tests, synthetic recordings, the agent's replay feed).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <variant>
#include <vector>

#include "diescope/recording/record_kinds.hpp"
#include "diescope/recording/records.hpp"

namespace diescope::recording {

// A forward-only stream of one record kind, in time order. next() fills `out` and returns false at
// the end. Views inside `out` stay valid until the following call. Throws InputError on a bad record.
template <typename Record>
class RecordStream {
 public:
  virtual ~RecordStream() = default;
  virtual bool next(Record& out) = 0;
};

// The small, low-rate records: loaded whole, sorted by time.
struct SideRecords {
  std::vector<Mark> marks;
  std::vector<CountersEvent> counters;
  std::vector<Note> notes;
  std::vector<ClockJump> clock_jumps;
  std::vector<HostStream> host_streams;  // in the order they were declared
  std::vector<HostTask> host_tasks;
  std::vector<GpuHolder> holders;  // processes on NVIDIA's process lists, as the set changed
  std::optional<RunEnd> end;       // nullopt when the recording was cut off before the run ended
  TimeNs last_ts_ns = 0;           // the latest time of any record; the run's end when `end` is missing
  bool truncated = false;          // the file ended mid-record; everything before it was read
  long complete_lines = 0;

  // The list of side kind R, for code that treats every kind alike (SideKinds, without the end:
  // a run ends once).
  template <typename R>
  std::vector<R>& list() {
    return std::get<std::vector<R>&>(
        std::tie(marks, counters, notes, clock_jumps, host_streams, host_tasks, holders));
  }
};

template <typename Record>
using StreamPtr = std::unique_ptr<RecordStream<Record>>;

class Recording {
 public:
  virtual ~Recording() = default;
  virtual const RecordingMeta& meta() const = 0;
  virtual const SideRecords& side() const = 0;
  // A new cursor over the records of one stream kind (StreamKinds), e.g. stream<ChipSample>().
  template <typename Record>
  StreamPtr<Record> stream() const {
    static_assert(is_stream_kind<Record>, "stream<R>() takes one of StreamKinds (record_kinds.hpp)");
    return std::get<StreamPtr<Record>>(open_stream(StreamTag(std::type_identity<Record>{})));
  }
  // A name for messages: the file's path, or "<memory>".
  virtual std::string name() const = 0;

 protected:
  using StreamTag = PerKind<std::variant, std::type_identity, StreamKinds>;  // which kind
  using AnyStream = PerKind<std::variant, StreamPtr, StreamKinds>;
  // Opens a cursor over the kind `kind` holds, returned as that same kind's alternative.
  virtual AnyStream open_stream(StreamTag kind) const = 0;
  // For implementations: make(std::type_identity<R>{}) for the kind R that `kind` holds.
  template <typename Make>
  static AnyStream open_with(StreamTag kind, Make&& make) {
    return std::visit([&](auto tag) -> AnyStream { return make(tag); }, kind);
  }
};

}  // namespace diescope::recording
