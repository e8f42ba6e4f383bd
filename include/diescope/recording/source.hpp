// A recording as the analysis sees it: metadata, the small records loaded whole, and one
// independent cursor per high-rate stream. Cursors never buffer a stream, so the analysis runs in
// memory that does not grow with a recording's length. Implemented by the file reader
// (reader.hpp) and by MemoryRecording (tests, synthetic recordings, the agent's replay source).
#pragma once

#include <memory>
#include <vector>

#include "diescope/recording/records.hpp"

namespace diescope {

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
  std::optional<RunEnd> end;  // nullopt when the recording was cut off before the run ended
  TimeNs last_ts_ns = 0;      // the latest time of any record; the run's end when `end` is missing
  bool truncated = false;     // the file ended mid-record; everything before it was read
  long complete_lines = 0;
};

class RecordSource {
 public:
  virtual ~RecordSource() = default;
  virtual const RecordingMeta& meta() const = 0;
  virtual const SideRecords& side() const = 0;
  virtual std::unique_ptr<RecordStream<ChipSample>> chip_samples() const = 0;
  virtual std::unique_ptr<RecordStream<UtilSample>> util_samples() const = 0;
  virtual std::unique_ptr<RecordStream<ClockReading>> clocks() const = 0;
  virtual std::unique_ptr<RecordStream<ThrottleReading>> throttles() const = 0;
  virtual std::unique_ptr<RecordStream<PowerLimitReading>> power_limits() const = 0;
  virtual std::unique_ptr<RecordStream<EngineReading>> engines() const = 0;
  virtual std::unique_ptr<RecordStream<ProcessReading>> processes() const = 0;
  // A name for messages: the file's path, or "<memory>".
  virtual std::string name() const = 0;
};

}  // namespace diescope
