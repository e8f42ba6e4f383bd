// A recording held in memory: for tests, synthetic recordings and generators. Implements
// RecordSource over plain vectors; its streams yield the records in the order they were added
// (a RecordSource promises time order per kind, so add them in time order).
#pragma once

#include <vector>

#include "diescope/recording/source.hpp"

namespace diescope {

// Owning forms of the records that hold views.
struct OwnedChipSample {
  TimeNs start_ns = 0;
  TimeNs end_ns = 0;
  std::vector<double> units, diagnostics, counts;
};
struct OwnedEngineReading {
  TimeNs ts_ns = 0;
  std::vector<double> values;
};

class MemoryRecording final : public RecordSource {
 public:
  RecordingMeta meta_data;
  SideRecords side_records;
  std::vector<OwnedChipSample> chip;
  std::vector<UtilSample> util;
  std::vector<ClockReading> clock;
  std::vector<ThrottleReading> throttle;
  std::vector<PowerLimitReading> power;
  std::vector<OwnedEngineReading> engine;
  std::vector<ProcessReading> process;

  const RecordingMeta& meta() const override { return meta_data; }
  const SideRecords& side() const override { return side_records; }
  std::unique_ptr<RecordStream<ChipSample>> chip_samples() const override;
  std::unique_ptr<RecordStream<UtilSample>> util_samples() const override;
  std::unique_ptr<RecordStream<ClockReading>> clocks() const override;
  std::unique_ptr<RecordStream<ThrottleReading>> throttles() const override;
  std::unique_ptr<RecordStream<PowerLimitReading>> power_limits() const override;
  std::unique_ptr<RecordStream<EngineReading>> engines() const override;
  std::unique_ptr<RecordStream<ProcessReading>> processes() const override;
  std::string name() const override { return "<memory>"; }
};

}  // namespace diescope
