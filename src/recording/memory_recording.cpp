#include "diescope/recording/memory_recording.hpp"

namespace diescope {

namespace {

// Streams records that need no conversion straight from a vector.
template <typename Record>
class VectorStream final : public RecordStream<Record> {
 public:
  explicit VectorStream(const std::vector<Record>& records) : records_(records) {}
  bool next(Record& out) override {
    if (pos_ >= records_.size()) return false;
    out = records_[pos_++];
    return true;
  }

 private:
  const std::vector<Record>& records_;
  std::size_t pos_ = 0;
};

class ChipStream final : public RecordStream<ChipSample> {
 public:
  explicit ChipStream(const std::vector<OwnedChipSample>& records) : records_(records) {}
  bool next(ChipSample& out) override {
    if (pos_ >= records_.size()) return false;
    const OwnedChipSample& r = records_[pos_++];
    out.start_ns = r.start_ns;
    out.end_ns = r.end_ns;
    out.units = r.units;
    out.diagnostics = r.diagnostics;
    out.counts = r.counts;
    return true;
  }

 private:
  const std::vector<OwnedChipSample>& records_;
  std::size_t pos_ = 0;
};

class EngineStream final : public RecordStream<EngineReading> {
 public:
  explicit EngineStream(const std::vector<OwnedEngineReading>& records) : records_(records) {}
  bool next(EngineReading& out) override {
    if (pos_ >= records_.size()) return false;
    const OwnedEngineReading& r = records_[pos_++];
    out.ts_ns = r.ts_ns;
    out.values = r.values;
    return true;
  }

 private:
  const std::vector<OwnedEngineReading>& records_;
  std::size_t pos_ = 0;
};

}  // namespace

std::unique_ptr<RecordStream<ChipSample>> MemoryRecording::chip_samples() const {
  return std::make_unique<ChipStream>(chip);
}
std::unique_ptr<RecordStream<UtilSample>> MemoryRecording::util_samples() const {
  return std::make_unique<VectorStream<UtilSample>>(util);
}
std::unique_ptr<RecordStream<ClockReading>> MemoryRecording::clocks() const {
  return std::make_unique<VectorStream<ClockReading>>(clock);
}
std::unique_ptr<RecordStream<ThrottleReading>> MemoryRecording::throttles() const {
  return std::make_unique<VectorStream<ThrottleReading>>(throttle);
}
std::unique_ptr<RecordStream<PowerLimitReading>> MemoryRecording::power_limits() const {
  return std::make_unique<VectorStream<PowerLimitReading>>(power);
}
std::unique_ptr<RecordStream<EngineReading>> MemoryRecording::engines() const {
  return std::make_unique<EngineStream>(engine);
}
std::unique_ptr<RecordStream<ProcessReading>> MemoryRecording::processes() const {
  return std::make_unique<VectorStream<ProcessReading>>(process);
}

}  // namespace diescope
