#include "diescope/recording/sink.hpp"

#include <algorithm>

namespace diescope {

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

void MemorySink::write(const ChipSample& s) {
  recording_.chip.push_back(OwnedChipSample{s.start_ns, s.end_ns, {s.units.begin(), s.units.end()},
                                            {s.diagnostics.begin(), s.diagnostics.end()},
                                            {s.counts.begin(), s.counts.end()}});
  saw(s.end_ns);  // never before start_ns
}
void MemorySink::write(const UtilSample& s) {
  recording_.util.push_back(s);
  saw(s.ts_ns);
}
void MemorySink::write(const ClockReading& r) {
  recording_.clock.push_back(r);
  saw(r.ts_ns);
}
void MemorySink::write(const ThrottleReading& r) {
  recording_.throttle.push_back(r);
  saw(r.ts_ns);
}
void MemorySink::write(const PowerLimitReading& r) {
  recording_.power.push_back(r);
  saw(r.ts_ns);
}
void MemorySink::write(const EngineReading& r) {
  recording_.engine.push_back(OwnedEngineReading{r.ts_ns, {r.values.begin(), r.values.end()}});
  saw(r.ts_ns);
}
void MemorySink::write(const ProcessReading& r) {
  recording_.process.push_back(r);
  saw(r.ts_ns);
}
void MemorySink::write(const Mark& m) {
  recording_.side_records.marks.push_back(m);
  saw(m.ts_ns);
}
void MemorySink::write(const CountersEvent& e) {
  recording_.side_records.counters.push_back(e);
  saw(e.ts_ns);
}
void MemorySink::write(const Note& n) {
  recording_.side_records.notes.push_back(n);
  saw(n.ts_ns);
}
void MemorySink::write(const ClockJump& j) {
  recording_.side_records.clock_jumps.push_back(j);
  saw(j.ts_ns);
}
void MemorySink::write(const RunEnd& e) {
  recording_.side_records.end = e;
  saw(e.ts_ns);
}

}  // namespace diescope
