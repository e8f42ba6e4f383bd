// Throughput and peak memory of analyze() on long recordings (24 h at 10 ms, 8 units, at least
// 1 million samples/s, memory that does not grow with the recording's length:
// docs/method.md#memory-does-not-grow-with-the-recording).
//
//   analysis_throughput stream HOURS     analyse a recording synthesised on the fly: no file, no
//                                        buffer, so the figure is the analysis's own cost
//   analysis_throughput write HOURS PATH write the recording helper's long_run_spec(HOURS) to PATH
//   analysis_throughput file PATH        open PATH with the file reader and analyse it
//   analysis_throughput scan PATH        time one plain pass of each of PATH's record streams, to
//                                        show how much of `file` is reading rather than analysing
//
// Each call is meant to run in its own process, so its peak RSS (getrusage) is its own.
#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "diescope/analysis/analyze.hpp"
#include "diescope/core/error.hpp"
#include "diescope/recording/reader.hpp"
#include "diescope/recording/synthetic.hpp"

namespace {

using namespace diescope;

constexpr recording::TimeNs kStart = 1'750'000'000LL * recording::kNsPerSecond;
constexpr recording::TimeNs kInterval = 10 * recording::kNsPerMs;
constexpr recording::TimeNs kSetup = 614 * recording::kNsPerMs;
constexpr int kUnits = 8;
constexpr int kDiags = 2;
constexpr int kEngines = 2;

// Small deterministic noise: the values must vary so nothing folds away.
struct XorShift {
  std::uint64_t s = 0x9E3779B97F4A7C15ULL;
  double uniform() {  // [-1, 1)
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return static_cast<double>(s >> 11) * (2.0 / 9007199254740992.0) - 1.0;
  }
};

// A 60 s cycle: 20 s compute-bound, 10 s input-bound, 10 s idle, 20 s memory-bound.
const double* phase_units(recording::TimeNs t) {
  static const double compute[kUnits] = {85, 20, 30, 25, 10, 5, 40, 2};
  static const double input[kUnits] = {20, 5, 10, 8, 3, 1, 12, 0.5};
  static const double idle[kUnits] = {0, 0, 0.2, 0.1, 0, 0, 0, 0};
  static const double memory[kUnits] = {10, 2, 82, 60, 5, 1, 30, 1};
  const recording::TimeNs into = (t / recording::kNsPerSecond) % 60;
  if (into < 20) return compute;
  if (into < 30) return input;
  if (into < 40) return idle;
  return memory;
}

class ChipGen final : public recording::RecordStream<recording::ChipSample> {
 public:
  explicit ChipGen(std::int64_t n) : n_(n) {}
  bool next(recording::ChipSample& out) override {
    if (i_ >= n_) return false;
    const recording::TimeNs start = i_ == 0 ? kStart : kStart + kSetup + (i_ - 1) * kInterval;
    const recording::TimeNs end = i_ == 0 ? kStart + kSetup : start + kInterval;
    const double* base = phase_units(start - kStart);
    for (int u = 0; u < kUnits; ++u) units_[u] = base[u] * (1.0 + 0.02 * rng_.uniform());
    diags_[0] = std::min(100.0, base[0] + 10);
    diags_[1] = base[0] > 0 ? 60.0 : 0.0;
    counts_[0] = base[2] * 4.8e12 / 100.0 * 0.01 * (1.0 + 0.02 * rng_.uniform());  // DRAM bytes in 10 ms
    out.start_ns = start;
    out.end_ns = end;
    out.units = units_;
    out.diagnostics = diags_;
    out.counts = counts_;
    ++i_;
    return true;
  }

 private:
  std::int64_t n_;
  std::int64_t i_ = 0;
  XorShift rng_;
  double units_[kUnits]{};
  double diags_[kDiags]{};
  double counts_[1]{};
};

// A stream of readings every `period` from the start to `end`.
template <typename Record, typename Fill>
class PeriodicGen final : public recording::RecordStream<Record> {
 public:
  PeriodicGen(recording::TimeNs first, recording::TimeNs period, recording::TimeNs end, Fill fill)
      : t_(first), period_(period), end_(end), fill_(fill) {}
  bool next(Record& out) override {
    if (t_ > end_) return false;
    fill_(t_, out);
    t_ += period_;
    return true;
  }

 private:
  recording::TimeNs t_, period_, end_;
  Fill fill_;
};

template <typename Record, typename Fill>
std::unique_ptr<recording::RecordStream<Record>> periodic(recording::TimeNs first, recording::TimeNs period,
                                                          recording::TimeNs end, Fill fill) {
  return std::make_unique<PeriodicGen<Record, Fill>>(first, period, end, fill);
}

// A Recording that synthesises every stream on demand; nothing is held but the current record.
class StreamingSource final : public recording::Recording {
 public:
  explicit StreamingSource(double hours) {
    samples_ = 1 + static_cast<std::int64_t>(std::llround(hours * 3600.0 * 100.0));
    end_ = kStart + kSetup + (samples_ - 1) * kInterval;
    meta_.start_ns = kStart;
    meta_.interval_ms = 10;
    const char* unit_keys[kUnits] = {"fp32", "fma_heavy", "dram", "l2", "tensor", "fp64", "lsu", "l1"};
    for (const char* key : unit_keys) meta_.units.push_back(column(key));
    meta_.diagnostics = {column("sm_active"), column("occupancy")};
    meta_.counts = {column("dram_bytes")};
    meta_.engines = {column("nvenc"), column("nvdec")};
    for (auto& e : meta_.engines) {
      e.source = recording::UnitSource::nvml_engine;
      e.counted_by_gpu_util = false;
    }
    side_.counters.push_back(recording::CountersEvent{kStart, true, ""});
    side_.marks = {recording::Mark{kStart + 60 * recording::kNsPerSecond, recording::MarkKind::start},
                   recording::Mark{end_ - 60 * recording::kNsPerSecond, recording::MarkKind::stop}};
    side_.end = recording::RunEnd{end_, 0, recording::RunEnding::exit()};
    side_.last_ts_ns = end_;
  }
  std::int64_t samples() const { return samples_; }

  const recording::RecordingMeta& meta() const override { return meta_; }
  const recording::SideRecords& side() const override { return side_; }
  recording::StreamPtr<recording::ChipSample> make(std::type_identity<recording::ChipSample>) const {
    return std::make_unique<ChipGen>(samples_);
  }
  recording::StreamPtr<recording::UtilSample> make(std::type_identity<recording::UtilSample>) const {
    return periodic<recording::UtilSample>(kStart + 200 * recording::kNsPerMs, 200 * recording::kNsPerMs,
                                           end_, [](recording::TimeNs t, recording::UtilSample& u) {
                                             u.ts_ns = t;
                                             u.pct = phase_units(t - kStart)[0] > 1 ? 99 : 0;
                                             u.source = recording::UtilSource::samples;
                                           });
  }
  recording::StreamPtr<recording::ClockReading> make(std::type_identity<recording::ClockReading>) const {
    return periodic<recording::ClockReading>(kStart, 100 * recording::kNsPerMs, end_,
                                             [](recording::TimeNs t, recording::ClockReading& c) {
                                               c.ts_ns = t;
                                               c.sm_mhz = phase_units(t - kStart)[0] > 1 ? 1980 : 345;
                                               c.mem_mhz = 3201;
                                             });
  }
  recording::StreamPtr<recording::ThrottleReading> make(
      std::type_identity<recording::ThrottleReading>) const {
    return periodic<recording::ThrottleReading>(
        kStart, 100 * recording::kNsPerMs, end_, [](recording::TimeNs t, recording::ThrottleReading& r) {
          r.ts_ns = t;
          r.mask = phase_units(t - kStart)[0] > 1 ? 0 : std::uint64_t{recording::throttle_gpu_idle};
        });
  }
  recording::StreamPtr<recording::PowerLimitReading> make(
      std::type_identity<recording::PowerLimitReading>) const {
    return periodic<recording::PowerLimitReading>(kStart, 1000 * recording::kNsPerMs, end_,
                                                  [](recording::TimeNs t, recording::PowerLimitReading& r) {
                                                    r.ts_ns = t;
                                                    r.limit_w = 700;
                                                  });
  }
  recording::StreamPtr<recording::EngineReading> make(std::type_identity<recording::EngineReading>) const {
    return periodic<recording::EngineReading>(
        kStart + 100 * recording::kNsPerMs, 100 * recording::kNsPerMs, end_,
        [](recording::TimeNs t, recording::EngineReading& r) {
          static const double values[kEngines] = {0, std::nan("")};  // nvdec unreadable, as on some boards
          r.ts_ns = t;
          r.values = values;
        });
  }
  recording::StreamPtr<recording::ProcessReading> make(std::type_identity<recording::ProcessReading>) const {
    return periodic<recording::ProcessReading>(kStart, 1000 * recording::kNsPerMs, end_,
                                               [](recording::TimeNs t, recording::ProcessReading& r) {
                                                 r.ts_ns = t;
                                                 r.compute = 1;
                                                 r.graphics = 0;
                                                 r.exited = 0;
                                               });
  }
  // No host probes in this recording: the stream ends before it begins.
  recording::StreamPtr<recording::HostSample> make(std::type_identity<recording::HostSample>) const {
    return periodic<recording::HostSample>(end_ + 1, 1, end_,
                                           [](recording::TimeNs, recording::HostSample&) {});
  }
  std::string name() const override { return "<synthetic stream>"; }
  AnyStream open_stream(StreamTag kind) const override {
    return open_with(kind, [this](auto tag) { return make(tag); });
  }

 private:
  static recording::ColumnDef column(const char* key) {
    recording::ColumnDef c;
    c.key = key;
    c.label = key;
    return c;
  }
  recording::RecordingMeta meta_;
  recording::SideRecords side_;
  std::int64_t samples_ = 0;
  recording::TimeNs end_ = 0;
};

double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

int report(const char* mode, double hours, const recording::Recording& source, std::int64_t samples) {
  const auto t0 = std::chrono::steady_clock::now();
  const analysis::Analysis a = analysis::analyze(source);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::int64_t read = a.run.samples_read;
  if (samples >= 0 && read != samples) {
    std::fprintf(stderr, "analysis read %lld samples, expected %lld\n", static_cast<long long>(read),
                 static_cast<long long>(samples));
    return 1;
  }
  std::printf(
      "%-6s hours=%-5g samples=%-9lld analyse_s=%-8.3f samples_per_s=%-10.0f peak_rss_mib=%-7.1f "
      "die_util=%.2f gpu_util=%.2f limiting=%s window_samples=%lld\n",
      mode, hours, static_cast<long long>(read), secs, static_cast<double>(read) / secs, peak_rss_mib(),
      a.run.die_util_pct, a.run.gpu_util_pct, a.run.limiting_unit.value_or("none").c_str(),
      static_cast<long long>(a.window.results.samples_read));
  return 0;
}

template <typename Record, typename Open>
void time_stream(const char* name, Open open) {
  const auto t0 = std::chrono::steady_clock::now();
  auto stream = open();
  Record record;
  long n = 0;
  while (stream->next(record)) ++n;
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("scan   stream=%-9s records=%-9ld read_s=%-8.3f records_per_s=%.0f\n", name, n, secs,
              secs > 0 ? static_cast<double>(n) / secs : 0.0);
}

int scan(const char* path) {
  auto source = recording::open_recording(path);
  time_stream<recording::ChipSample>("chip", [&] { return source->stream<recording::ChipSample>(); });
  time_stream<recording::UtilSample>("util", [&] { return source->stream<recording::UtilSample>(); });
  time_stream<recording::ClockReading>("clocks", [&] { return source->stream<recording::ClockReading>(); });
  time_stream<recording::ThrottleReading>("throttle",
                                          [&] { return source->stream<recording::ThrottleReading>(); });
  time_stream<recording::PowerLimitReading>("power",
                                            [&] { return source->stream<recording::PowerLimitReading>(); });
  time_stream<recording::EngineReading>("engines",
                                        [&] { return source->stream<recording::EngineReading>(); });
  time_stream<recording::ProcessReading>("processes",
                                         [&] { return source->stream<recording::ProcessReading>(); });
  return 0;
}

int usage() {
  std::fprintf(stderr,
               "usage: analysis_throughput stream HOURS | write HOURS PATH | file PATH | scan PATH\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc < 2) return usage();
    const std::string mode = argv[1];
    if (mode == "stream" && argc == 3) {
      const double hours = std::atof(argv[2]);
      StreamingSource source(hours);
      return report("stream", hours, source, source.samples());
    }
    if (mode == "write" && argc == 4) {
      const double hours = std::atof(argv[2]);
      const auto t0 = std::chrono::steady_clock::now();
      write_synthetic_recording(argv[3], recording::long_run_spec(hours));
      const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::printf("write  hours=%-5g write_s=%.3f peak_rss_mib=%.1f\n", hours, secs, peak_rss_mib());
      return 0;
    }
    if (mode == "file" && argc == 3) {
      const auto t0 = std::chrono::steady_clock::now();
      auto source = recording::open_recording(argv[2]);
      const double open_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::printf("open   path=%s open_s=%.3f\n", argv[2], open_s);
      const double hours = static_cast<double>(source->side().last_ts_ns - source->meta().start_ns) / 3.6e12;
      return report("file", hours, *source, -1);
    }
    if (mode == "scan" && argc == 3) return scan(argv[2]);
    return usage();
  } catch (const core::Error& e) {
    std::fprintf(stderr, "analysis_throughput: error: %s\n  fix: %s\n", e.cause().c_str(), e.fix().c_str());
    return e.exit_code();
  }
}
