#include "diescope/recording/sink.hpp"

#include <algorithm>

namespace diescope::recording {

MemorySink::MemorySink(MemoryRecording& recording) : recording_(recording) {
  // As a file holding only its two header lines would read.
  recording_.side_records.complete_lines = 2;
  recording_.side_records.last_ts_ns = recording_.meta_data.start_ns;
}

void MemorySink::saw(TimeNs ts) {
  SideRecords& side = recording_.side_records;
  side.last_ts_ns = any_record_ ? std::max(side.last_ts_ns, ts) : ts;
  any_record_ = true;
  ++side.complete_lines;
}

void MemorySink::write_record(AnyRecord record) {
  std::visit([this](const auto* r) { add(*r); }, record);
}

template <typename Record>
void MemorySink::add(const Record& record) {
  if constexpr (is_stream_kind<Record>) {
    recording_.list<Record>().push_back(owned_copy(record));
  } else if constexpr (std::is_same_v<Record, RunEnd>) {
    recording_.side_records.end = record;  // a run ends once
  } else {
    recording_.side_records.list<Record>().push_back(record);
  }
  saw(last_time(record));  // a chip sample's end, never before its start
}

}  // namespace diescope::recording
