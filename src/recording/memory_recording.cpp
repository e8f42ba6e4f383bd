#include "diescope/recording/memory_recording.hpp"

namespace diescope::recording {

namespace {

// Streams one kind's records from its vector, as views into the owning forms.
template <typename Record>
class VectorStream final : public RecordStream<Record> {
 public:
  explicit VectorStream(const OwnedVector<Record>& records) : records_(records) {}
  bool next(Record& out) override {
    if (pos_ >= records_.size()) return false;
    out = view_of(records_[pos_++]);
    return true;
  }

 private:
  const OwnedVector<Record>& records_;
  std::size_t pos_ = 0;
};

}  // namespace

Recording::AnyStream MemoryRecording::open_stream(StreamTag kind) const {
  return open_with(kind, [this]<typename Record>(std::type_identity<Record>) -> StreamPtr<Record> {
    return std::make_unique<VectorStream<Record>>(list<Record>());
  });
}

}  // namespace diescope::recording
