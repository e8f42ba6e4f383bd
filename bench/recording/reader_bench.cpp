// Throughput of the recording reader: how fast a chip-sample cursor streams a recording file
// (goal: well above 2 million samples/s of 8 units), what opening a file costs (the pass that
// loads side records and checks every line's kind and times), and how fast a sparse stream (GPU-Util,
// one line in 21) skips the lines of other kinds.
//
// The recordings are long_run_spec (synthetic.hpp) cut to 1 million samples (10,000 s): 8 units,
// 2 diagnostics, 1 count per chip line, GPU-Util every 200 ms, clocks and throttle every 100 ms;
// and the same without diagnostics and counts (8 values per chip line). They are written once to
// $TMPDIR (or /tmp) and read from the page cache.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "diescope/recording/reader.hpp"
#include "diescope/recording/synthetic.hpp"

namespace {

using namespace diescope;

constexpr double kSeconds = 10'000;  // 1,000,000 samples of 10 ms

std::filesystem::path temp_dir() {
  const char* t = std::getenv("TMPDIR");
  return t ? std::filesystem::path(t) : std::filesystem::path("/tmp");
}

// Removes the benchmark's files when the program ends.
struct TempFiles {
  std::vector<std::filesystem::path> paths;
  ~TempFiles() {
    for (const auto& p : paths) std::filesystem::remove(p);
  }
};
TempFiles temp_files;

const std::filesystem::path& recording(bool with_diagnostics_and_counts) {
  static std::filesystem::path paths[2];
  std::filesystem::path& path = paths[with_diagnostics_and_counts ? 1 : 0];
  if (path.empty()) {
    recording::SyntheticSpec spec = recording::long_run_spec(kSeconds / 3600);
    if (!with_diagnostics_and_counts) {
      spec.meta.diagnostics.clear();
      spec.meta.counts.clear();
      for (recording::SyntheticPhase& p : spec.phases) {
        p.diagnostics.clear();
        p.count_rates.clear();
      }
    }
    path = temp_dir() / ("diescope-reader-bench-" + std::to_string(::getpid()) +
                         (with_diagnostics_and_counts ? "-full" : "-units") + ".dsrec");
    write_synthetic_recording(path, spec);
    temp_files.paths.push_back(path);
  }
  return path;
}

void chip_stream(benchmark::State& state, bool full) {
  const auto& path = recording(full);
  const auto source = recording::open_recording(path);
  std::int64_t samples = 0;
  double sum = 0;
  for (auto _ : state) {
    auto stream = source->stream<recording::ChipSample>();
    recording::ChipSample c;
    while (stream->next(c)) {
      sum += c.units[7];
      ++samples;
    }
  }
  benchmark::DoNotOptimize(sum);
  state.SetItemsProcessed(samples);
  state.SetBytesProcessed(static_cast<std::int64_t>(std::filesystem::file_size(path)) * state.iterations());
  state.counters["values_per_sample"] = static_cast<double>(
      source->meta().units.size() + source->meta().diagnostics.size() + source->meta().counts.size());
}

void BM_ChipStream_8Units(benchmark::State& state) {
  chip_stream(state, false);
}
void BM_ChipStream_8Units_2Diagnostics_1Count(benchmark::State& state) {
  chip_stream(state, true);
}

void BM_OpenRecording(benchmark::State& state) {
  const auto& path = recording(true);
  long lines = 0;
  for (auto _ : state) {
    const auto source = recording::open_recording(path);
    lines = source->side().complete_lines;
    benchmark::DoNotOptimize(source->side().last_ts_ns);
  }
  state.SetItemsProcessed(lines * state.iterations());
  state.SetBytesProcessed(static_cast<std::int64_t>(std::filesystem::file_size(path)) * state.iterations());
}

void BM_UtilStream(benchmark::State& state) {
  const auto& path = recording(true);
  const auto source = recording::open_recording(path);
  std::int64_t readings = 0;
  for (auto _ : state) {
    auto stream = source->stream<recording::UtilSample>();
    recording::UtilSample u;
    while (stream->next(u)) ++readings;
  }
  state.SetItemsProcessed(readings);
  state.SetBytesProcessed(static_cast<std::int64_t>(std::filesystem::file_size(path)) * state.iterations());
}

BENCHMARK(BM_ChipStream_8Units)->Unit(benchmark::kMillisecond)->MinTime(2);
BENCHMARK(BM_ChipStream_8Units_2Diagnostics_1Count)->Unit(benchmark::kMillisecond)->MinTime(2);
BENCHMARK(BM_OpenRecording)->Unit(benchmark::kMillisecond)->MinTime(2);
BENCHMARK(BM_UtilStream)->Unit(benchmark::kMillisecond)->MinTime(2);

}  // namespace

BENCHMARK_MAIN();
