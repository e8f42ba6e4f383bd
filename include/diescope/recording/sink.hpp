// Where records go as they are produced: the file writer (writer.hpp) or a MemoryRecording.
// Collectors and the synthetic generator write to a RecordSink, so the same code fills a file on
// disk or a recording held in memory for tests.
#pragma once

#include "diescope/recording/memory_recording.hpp"
#include "diescope/recording/records.hpp"

namespace diescope {

class RecordSink {
 public:
  virtual ~RecordSink() = default;
  virtual void write(const ChipSample& sample) = 0;
  virtual void write(const UtilSample& sample) = 0;
  virtual void write(const ClockReading& reading) = 0;
  virtual void write(const ThrottleReading& reading) = 0;
  virtual void write(const PowerLimitReading& reading) = 0;
  virtual void write(const EngineReading& reading) = 0;
  virtual void write(const ProcessReading& reading) = 0;
  virtual void write(const Mark& mark) = 0;
  virtual void write(const CountersEvent& event) = 0;
  virtual void write(const Note& note) = 0;
  virtual void write(const ClockJump& jump) = 0;
  virtual void write(const RunEnd& end) = 0;
};

// Appends every record to a MemoryRecording (which must outlive the sink): give it a recording with
// its meta_data set and no records yet. Keeps the side records as a file reader would fill them:
// last_ts_ns follows the latest record (meta start_ns while there is none), complete_lines counts
// the records plus the two header lines. Records must arrive in time order per kind, as for a file;
// the sink does not check (write to a RecordingWriter to have them checked).
class MemorySink final : public RecordSink {
 public:
  explicit MemorySink(MemoryRecording& recording);
  void write(const ChipSample& sample) override;
  void write(const UtilSample& sample) override;
  void write(const ClockReading& reading) override;
  void write(const ThrottleReading& reading) override;
  void write(const PowerLimitReading& reading) override;
  void write(const EngineReading& reading) override;
  void write(const ProcessReading& reading) override;
  void write(const Mark& mark) override;
  void write(const CountersEvent& event) override;
  void write(const Note& note) override;
  void write(const ClockJump& jump) override;
  void write(const RunEnd& end) override;

 private:
  void saw(TimeNs ts);
  MemoryRecording& recording_;
  bool any_record_ = false;
};

}  // namespace diescope
