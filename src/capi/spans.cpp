// Figures over spans of a recording that the caller names (steps, NVTX regions): each span is
// analysed as the steady window is, by the same analyze() (docs/python.md#steps-and-regions).
#include <algorithm>
#include <cmath>
#include <type_traits>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "capi_internal.hpp"
#include "diescope/analysis/analyze.hpp"
#include "diescope/capi/diescope_c.h"
#include "diescope/recording/memory_recording.hpp"
#include "diescope/report/wording.hpp"

namespace diescope::capi {
namespace {

using analysis::kNaN;

// How far outside a span the records its figures can depend on reach: GPU-Util's booking (at most
// 1 s back from an NVML sample, docs/method.md#gpu-util) and the readings run takes once a second
// (power limit, engines, GPU-Util from the driver's buffer). A span is analysed on the records within
// this margin of it (docs/python.md#steps-and-regions); the tests hold the result to the analysis of
// the whole recording.
constexpr recording::TimeNs kSliceMarginNs = 2 * recording::kNsPerSecond;

// The whole recording in memory, so that each span's analysis does not read the file again.
recording::MemoryRecording in_memory(const recording::Recording& source) {
  recording::MemoryRecording memory;
  memory.meta_data = source.meta();
  memory.side_records = source.side();
  recording::for_each_kind<recording::StreamKinds>([&](auto tag) {
    using R = typename decltype(tag)::type;
    auto stream = source.template stream<R>();
    R record{};
    while (stream->next(record)) memory.template list<R>().push_back(recording::owned_copy(record));
  });
  return memory;
}

recording::TimeNs time_of(const recording::OwnedChipSample& r) {
  return r.start_ns;
}
template <typename R>
recording::TimeNs time_of(const R& r) {
  return r.ts_ns;
}

// Copies into `slice` each stream's records with times in [lo, hi]. A chip sample before the first
// one copied goes first: it takes the "first after the counters came on" drop that the analysis gives
// the first sample it reads, so the samples inside keep the verdicts the whole recording gives them.
void slice_streams(const recording::MemoryRecording& whole, recording::TimeNs lo, recording::TimeNs hi,
                   recording::MemoryRecording& slice) {
  recording::for_each_kind<recording::StreamKinds>([&](auto tag) {
    using R = typename decltype(tag)::type;
    const auto& from = whole.template list<R>();
    auto& to = slice.template list<R>();
    auto first = std::lower_bound(from.begin(), from.end(), lo,
                                  [](const auto& r, recording::TimeNs t) { return time_of(r) < t; });
    const auto last = std::upper_bound(from.begin(), from.end(), hi,
                                       [](recording::TimeNs t, const auto& r) { return t < time_of(r); });
    if constexpr (std::is_same_v<R, recording::ChipSample>) {
      if (first != from.begin()) --first;  // the sample that takes the first-sample drop
    }
    to.assign(first, std::max(first, last));
  });
}

}  // namespace

Table spans_table(const recording::Recording& source, const std::vector<std::int64_t>& starts,
                  const std::vector<std::int64_t>& ends, bool whole_recording) {
  recording::MemoryRecording memory = in_memory(source);
  recording::MemoryRecording slice;
  slice.meta_data = memory.meta_data;
  slice.side_records = memory.side_records;
  Table t;
  t.add("start_ns", ColumnType::i8, "ns");
  t.add("end_ns", ColumnType::i8, "ns");
  t.add("die_util_pct", ColumnType::f8, "pct");
  t.add("gpu_util_pct", ColumnType::f8, "pct");
  t.add("gap_points", ColumnType::f8, "points");
  t.add("chip_coverage_pct", ColumnType::f8, "pct");
  t.add("samples_used", ColumnType::i8, "count");
  t.add("partial", ColumnType::i8, "bool");
  t.add("limiting_unit", ColumnType::text, "");
  // docs/energy.md: the span's energy, from NVML's counter or the power draw (energy_source).
  t.add("energy_j", ColumnType::f8, "J");
  t.add("energy_source", ColumnType::text, "");
  t.add("stranded_energy_j", ColumnType::f8, "J");
  for (std::size_t i = 0; i < starts.size(); ++i) {
    // The span as the steady window: a start and a stop mark at its ends, the recording's own marks
    // set aside (docs/python.md#steps-and-regions).
    recording::MemoryRecording& analysed = whole_recording ? memory : slice;
    if (!whole_recording) slice_streams(memory, starts[i] - kSliceMarginNs, ends[i] + kSliceMarginNs, slice);
    analysed.side_records.marks = {recording::Mark{starts[i], recording::MarkKind::start},
                                   recording::Mark{ends[i], recording::MarkKind::stop}};
    const analysis::Analysis a = analyse(analysed, true);
    const bool found = a.window.found;
    const analysis::SpanResults& r = a.window.results;
    t.columns[0].i.push_back(starts[i]);
    t.columns[1].i.push_back(ends[i]);
    t.columns[2].f.push_back(found ? r.die_util_pct : kNaN);
    t.columns[3].f.push_back(found ? r.gpu_util_pct : kNaN);
    // The report's gap_points: the full-precision difference, where the headline has a gap.
    t.columns[4].f.push_back(found && r.headline.gap_tenths ? r.gpu_util_pct - r.die_util_pct : kNaN);
    t.columns[5].f.push_back(found ? r.chip_coverage_pct : kNaN);
    t.columns[6].i.push_back(found ? r.samples_used : 0);
    t.columns[7].i.push_back(found && r.partial ? 1 : 0);
    t.columns[8].s.push_back(found && r.limiting_unit ? *r.limiting_unit : "");
    t.columns[9].f.push_back(found ? r.energy.energy_j : kNaN);
    t.columns[10].s.push_back(found ? std::string(report::energy_source_code(r.energy.source)) : "none");
    t.columns[11].f.push_back(found ? r.energy.stranded_j : kNaN);
    ++t.rows;
  }
  return t;
}

}  // namespace diescope::capi

extern "C" {

ds_table* ds_spans_of_recording(const char* path, const int64_t* starts, const int64_t* ends, int64_t count,
                                int whole_recording) {
  return diescope::capi::guarded([&]() -> ds_table* {
    const std::string file = diescope::capi::path_arg(path);
    if (count < 0 || (count > 0 && (!starts || !ends)))
      throw diescope::core::UsageError("no spans were given", "pass the start and end of each span in ns");
    std::vector<std::int64_t> s(starts, starts + count), e(ends, ends + count);
    for (std::int64_t i = 0; i < count; ++i)
      if (e[static_cast<std::size_t>(i)] <= s[static_cast<std::size_t>(i)])
        throw diescope::core::UsageError(
            "span " + std::to_string(i) + " ends at or before its start",
            "give each span's end after its start (ns since the Unix epoch, CLOCK_REALTIME)");
    const auto source = diescope::capi::open_recording_checked(file);
    return reinterpret_cast<ds_table*>(
        new diescope::capi::Table(diescope::capi::spans_table(*source, s, e, whole_recording != 0)));
  });
}

}  // extern "C"
