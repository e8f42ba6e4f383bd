// A recording held in memory: for tests, synthetic recordings and generators. Implements
// Recording over plain vectors; its streams yield the records in the order they were added
// (a Recording promises time order per kind, so add them in time order).
#pragma once

#include <tuple>
#include <vector>

#include "diescope/recording/record_kinds.hpp"
#include "diescope/recording/recording.hpp"

namespace diescope::recording {

template <typename Record>
using OwnedVector = std::vector<Owned<Record>>;

// One vector per stream kind (StreamKinds), each record in its owning form: list<ChipSample>()
// holds OwnedChipSamples. The memory recording and the agent's batches keep their streams here.
class StreamRecords {
 public:
  template <typename Record>
  OwnedVector<Record>& list() {
    static_assert(is_stream_kind<Record>, "list<R>() takes one of StreamKinds (record_kinds.hpp)");
    return std::get<OwnedVector<Record>>(lists_);
  }
  template <typename Record>
  const OwnedVector<Record>& list() const {
    static_assert(is_stream_kind<Record>, "list<R>() takes one of StreamKinds (record_kinds.hpp)");
    return std::get<OwnedVector<Record>>(lists_);
  }

 private:
  PerKind<std::tuple, OwnedVector, StreamKinds> lists_;
};

class MemoryRecording final : public Recording, public StreamRecords {
 public:
  RecordingMeta meta_data;
  SideRecords side_records;

  const RecordingMeta& meta() const override { return meta_data; }
  const SideRecords& side() const override { return side_records; }
  std::string name() const override { return "<memory>"; }

 private:
  AnyStream open_stream(StreamTag kind) const override;
};

}  // namespace diescope::recording
