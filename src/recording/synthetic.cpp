#include "diescope/recording/synthetic.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "diescope/core/error.hpp"
#include "diescope/core/version.hpp"
#include "diescope/metrics/catalog.hpp"
#include "diescope/recording/writer.hpp"

namespace diescope::recording {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TimeNs seconds_to_ns(double s) {
  return static_cast<TimeNs>(std::llround(s * 1e9));
}

// splitmix64: small, fast and the same on every platform (std distributions are not).
class Noise {
 public:
  explicit Noise(std::uint64_t seed) : state_(seed) {}
  double uniform_pm1() {
    state_ += 0x9E3779B97F4A7C15ULL;
    std::uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return static_cast<double>(z >> 11) * 0x1.0p-52 - 1.0;
  }

 private:
  std::uint64_t state_;
};

// Rounds as printf("%.Ng") would, so values read like the probe's output.
double round_significant(double v, int digits) {
  if (digits <= 0 || !std::isfinite(v) || v == 0) return v;
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, digits);
  double out = v;
  std::from_chars(buf, res.ptr, out);
  return out;
}

// One stretch of the timeline: the setup, or one play of a phase.
struct Segment {
  const std::vector<double>* units;
  const std::vector<double>* diagnostics;
  const std::vector<double>* count_rates;  // nullptr: `counts` hold totals for the segment (setup)
  const std::vector<double>* counts;
  const std::vector<double>* host_values;  // nullptr: none (the setup)
  double gpu_util_pct;
  TimeNs begin;
  TimeNs end;
};

// Walks the timeline forward: the setup once, then the phases cycle by cycle until the run's end.
class Timeline {
 public:
  Timeline(const SyntheticSpec& spec, TimeNs t0, TimeNs run_end) : spec_(spec), run_end_(run_end) {
    if (spec.setup_ns > 0) {
      current_ =
          Segment{&spec.setup_units, &spec.setup_diagnostics, nullptr, &spec.setup_counts, nullptr, 0, t0,
                  t0 + spec.setup_ns};
      next_phase_ = 0;
    } else {
      current_ = phase_segment(0, t0);
      next_phase_ = 1;
    }
  }
  // The segment holding time t (t never decreases between calls).
  const Segment& at(TimeNs t) {
    while (t >= current_.end && current_.end < run_end_) {
      current_ = phase_segment(next_phase_ % spec_.phases.size(), current_.end);
      ++next_phase_;
    }
    return current_;
  }
  // Calls f(segment, overlap_ns) for every segment overlapping [a, b); a never decreases between calls.
  template <typename F>
  void overlaps(TimeNs a, TimeNs b, F&& f) {
    at(a);
    Timeline copy = *this;  // walk ahead without moving this timeline past `a`
    TimeNs t = a;
    while (t < b) {
      const Segment& s = copy.at(t);
      const TimeNs until = std::min(b, s.end);
      if (until <= t) break;  // past the run's end
      f(s, until - t);
      t = until;
    }
  }

 private:
  Segment phase_segment(std::size_t i, TimeNs begin) const {
    const SyntheticPhase& p = spec_.phases[i];
    return Segment{&p.units,
                   &p.diagnostics,
                   &p.count_rates,
                   nullptr,
                   spec_.host_values.empty() ? nullptr : &spec_.host_values[i],
                   p.gpu_util_pct,
                   begin,
                   std::min(run_end_, begin + seconds_to_ns(p.seconds))};
  }
  const SyntheticSpec& spec_;
  TimeNs run_end_;
  Segment current_{};
  std::size_t next_phase_ = 0;
};

void check_sizes(const std::vector<double>& v, std::size_t want, const std::string& what) {
  if (v.size() != want)
    throw core::Error("synthetic recording spec: " + what + " has " + std::to_string(v.size()) +
                          " values where the meta has " + std::to_string(want) + " columns",
                      "make the spec's value lists match the meta's columns", core::kExitInternal);
}

}  // namespace

void generate_synthetic(const SyntheticSpec& spec, RecordSink& sink) {
  const RecordingMeta& meta = spec.meta;
  if (spec.phases.empty())
    throw core::Error("synthetic recording spec has no phases", "give it at least one phase",
                      core::kExitInternal);
  const std::size_t nu = meta.units.size(), nd = meta.diagnostics.size(), nc = meta.counts.size();
  TimeNs cycle_ns = 0;
  for (const SyntheticPhase& p : spec.phases) {
    check_sizes(p.units, nu, "phase " + p.name + " units");
    check_sizes(p.diagnostics, nd, "phase " + p.name + " diagnostics");
    check_sizes(p.count_rates, nc, "phase " + p.name + " count rates");

    if (seconds_to_ns(p.seconds) <= 0)
      throw core::Error("synthetic phase " + p.name + " has no duration", "give every phase seconds > 0",
                        core::kExitInternal);
    cycle_ns += seconds_to_ns(p.seconds);
  }
  if (spec.setup_ns > 0) {
    check_sizes(spec.setup_units, nu, "setup units");
    check_sizes(spec.setup_diagnostics, nd, "setup diagnostics");
    check_sizes(spec.setup_counts, nc, "setup counts");
  }
  check_sizes(spec.engine_values, meta.engines.size(), "engine values");
  if (!spec.host_streams.empty()) {
    if (spec.host_values.size() != spec.phases.size())
      throw core::Error("synthetic recording spec: host values for " +
                            std::to_string(spec.host_values.size()) + " phases where there are " +
                            std::to_string(spec.phases.size()),
                        "give one list of host values per phase", core::kExitInternal);
    for (std::size_t i = 0; i < spec.phases.size(); ++i)
      check_sizes(spec.host_values[i], spec.host_streams.size(),
                  "phase " + spec.phases[i].name + " host values");
  }

  const TimeNs t0 = meta.start_ns;
  const TimeNs body_ns = spec.run_seconds > 0 ? seconds_to_ns(spec.run_seconds) : cycle_ns * spec.cycles;
  const TimeNs run_end = t0 + spec.setup_ns + body_ns;
  const auto interval_ns = static_cast<TimeNs>(std::llround(meta.interval_ms * 1e6));

  Noise noise(spec.seed);
  Timeline chip_time(spec, t0, run_end), util_time(spec, t0, run_end), clock_time(spec, t0, run_end),
      host_time(spec, t0, run_end);
  TimeNs next_host = t0 + spec.host_period_ns;
  std::vector<HostValue> host_values;
  std::vector<double> host_sum(spec.host_streams.size()), host_weight(spec.host_streams.size());
  std::vector<double> units(nu), diagnostics(nd), counts(nc);
  std::size_t next_mark = 0;
  TimeNs next_util = t0 + spec.util_period_ns;
  TimeNs next_clock = t0;

  sink.write(CountersEvent{t0, true, ""});
  for (const Note& n : spec.notes) sink.write(n);
  // Without a draw, one power reading at the start; with one, a reading with every clock reading below.
  if (!std::isfinite(spec.power_draw_w)) sink.write(PowerLimitReading{t0, spec.power_limit_w});
  sink.write(ProcessReading{t0, 0, 0, 0});
  for (HostStream h : spec.host_streams) {
    h.ts_ns = t0;
    sink.write(h);
  }
  for (HostTask task : spec.host_tasks) {
    task.ts_ns = t0;
    sink.write(task);
  }

  // The low-rate readings up to time t, in time order per kind.
  auto readings_until = [&](TimeNs t) {
    while (next_mark < spec.marks.size() && spec.marks[next_mark].ts_ns <= t)
      sink.write(spec.marks[next_mark++]);
    while (spec.clock_period_ns > 0 && next_clock <= t && next_clock < run_end) {
      const Segment& s = clock_time.at(next_clock);
      sink.write(ClockReading{next_clock, spec.sm_mhz, spec.mem_mhz});
      sink.write(ThrottleReading{next_clock, s.gpu_util_pct == 0 ? throttle_gpu_idle : std::uint64_t{0}});
      if (!spec.engine_values.empty()) sink.write(EngineReading{next_clock, spec.engine_values});
      if (std::isfinite(spec.power_draw_w)) {
        // The counter as the draw integrates it: W x ns / 1e6 = mJ.
        const double mj =
            spec.energy_start_mj + spec.power_draw_w * static_cast<double>(next_clock - t0) / 1e6;
        sink.write(PowerLimitReading{next_clock, spec.power_limit_w, spec.power_draw_w, mj});
      }
      next_clock += spec.clock_period_ns;
    }
    while (spec.util_period_ns > 0 && next_util <= t && next_util <= run_end) {
      double busy = 0;
      util_time.overlaps(next_util - spec.util_period_ns, next_util, [&](const Segment& s, TimeNs ns) {
        busy += s.gpu_util_pct * static_cast<double>(ns);
      });
      const double pct = std::clamp(std::round(busy / static_cast<double>(spec.util_period_ns)), 0.0, 100.0);
      sink.write(UtilSample{next_util, pct, UtilSource::samples});
      next_util += spec.util_period_ns;
    }
    while (!spec.host_streams.empty() && spec.host_period_ns > 0 && next_host <= t && next_host <= run_end) {
      std::fill(host_sum.begin(), host_sum.end(), 0.0);
      std::fill(host_weight.begin(), host_weight.end(), 0.0);
      host_time.overlaps(next_host - spec.host_period_ns, next_host, [&](const Segment& s, TimeNs ns) {
        if (s.host_values == nullptr) return;
        for (std::size_t i = 0; i < host_sum.size(); ++i) {
          const double v = (*s.host_values)[i];
          if (std::isnan(v)) continue;
          host_sum[i] += v * static_cast<double>(ns);
          host_weight[i] += static_cast<double>(ns);
        }
      });
      host_values.clear();
      for (std::size_t i = 0; i < host_sum.size(); ++i)
        if (host_weight[i] > 0)
          host_values.push_back(
              HostValue{spec.host_streams[i].id,
                        round_significant(host_sum[i] / host_weight[i], spec.significant_digits)});
      if (!host_values.empty()) sink.write(HostSample{next_host, host_values});
      next_host += spec.host_period_ns;
    }
  };

  auto jittered = [&](double v, bool percent) {
    if (spec.jitter > 0 && std::isfinite(v)) v *= 1 + spec.jitter * noise.uniform_pm1();
    if (percent && std::isfinite(v)) v = std::clamp(v, 0.0, 100.0);
    return round_significant(v, spec.significant_digits);
  };

  auto emit_sample = [&](TimeNs a, TimeNs b) {
    std::fill(units.begin(), units.end(), 0.0);
    std::fill(diagnostics.begin(), diagnostics.end(), 0.0);
    std::fill(counts.begin(), counts.end(), 0.0);
    const double span = static_cast<double>(b - a);
    chip_time.overlaps(a, b, [&](const Segment& s, TimeNs ns) {
      const double w = static_cast<double>(ns) / span;
      for (std::size_t i = 0; i < nu; ++i) units[i] += (*s.units)[i] * w;
      for (std::size_t i = 0; i < nd; ++i) diagnostics[i] += (*s.diagnostics)[i] * w;
      for (std::size_t i = 0; i < nc; ++i)
        counts[i] += s.count_rates
                         ? (*s.count_rates)[i] * static_cast<double>(ns) * 1e-9
                         : (*s.counts)[i] * static_cast<double>(ns) / static_cast<double>(s.end - s.begin);
    });
    for (double& v : units) v = jittered(v, true);
    for (double& v : diagnostics) v = jittered(v, true);
    for (double& v : counts) v = jittered(v, false);
    readings_until(b);
    sink.write(ChipSample{a, b, units, diagnostics, counts});
  };

  TimeNs a = t0;
  if (spec.setup_ns > 0) {
    emit_sample(t0, t0 + spec.setup_ns);
    a = t0 + spec.setup_ns;
  }
  for (; interval_ns > 0 && a + interval_ns <= run_end; a += interval_ns) emit_sample(a, a + interval_ns);
  readings_until(run_end);
  while (next_mark < spec.marks.size()) sink.write(spec.marks[next_mark++]);
  sink.write(CountersEvent{run_end, false, ""});
  sink.write(RunEnd{run_end, 0, RunEnding::exit()});
}

void write_synthetic_recording(const std::filesystem::path& path, const SyntheticSpec& spec) {
  RecordingWriter writer(path, spec.meta);
  generate_synthetic(spec, writer);
  writer.close();
}

std::unique_ptr<MemoryRecording> make_synthetic_recording(const SyntheticSpec& spec) {
  auto recording = std::make_unique<MemoryRecording>();
  recording->meta_data = spec.meta;
  MemorySink sink(*recording);
  generate_synthetic(spec, sink);
  return recording;
}

namespace {

ColumnDef column(std::string key, std::string label, std::string counter, std::string note,
                 std::string unit = "pct") {
  ColumnDef c;
  c.key = std::move(key);
  c.label = std::move(label);
  c.metric = counter;
  c.recipe.combine = UnitRecipe::Combine::counter;
  c.recipe.counters = {std::move(counter)};
  c.source = UnitSource::chip;
  c.note = std::move(note);
  c.counted_by_gpu_util = true;
  c.unit = std::move(unit);
  return c;
}

const char* const kPct = ".avg.pct_of_peak_sustained_elapsed";

GpuIdentity synthetic_h200() {
  GpuIdentity g;
  g.index = 0;
  g.uuid = "GPU-synthetic";
  g.model = "NVIDIA H200";
  g.chip = "GH100";
  g.driver = "580.159";
  g.compute_capability = 90;
  g.l2_bytes = 50 * 1024 * 1024;
  g.sm_count = 132;
  return g;
}

}  // namespace

RecordingMeta synthetic_hopper_meta() {
  RecordingMeta m;
  m.format_version = core::kRecordingFormatVersion;
  m.tool_version = core::kToolVersion;
  m.method = core::kMethodVersion;
  m.gpu = synthetic_h200();
  m.unit_table = "synthetic-hopper";
  m.units = {
      column("fp32", "FP32", std::string("sm__inst_executed_pipe_fma") + kPct, "FMA pipe as a whole"),
      column("tensor", "Tensor", std::string("sm__pipe_tensor_cycles_active_realtime") + kPct,
             "tensor pipe, realtime"),
      column("dram", "DRAM", "dram__bytes.sum.pct_of_peak_sustained_elapsed", "bytes moved to and from DRAM"),
      column("l2", "L2", "lts__t_bytes.sum.pct_of_peak_sustained_elapsed", "bytes through the L2 slices"),
  };
  m.diagnostics = {
      column("sm_active", "SM active", std::string("sm__cycles_active") + kPct, "SMs with work resident"),
      column("gr_active", "GR active", std::string("gr__cycles_active") + kPct,
             "graphics/compute engine busy"),
  };
  m.counts = {column("dram_bytes", "DRAM bytes", "dram__bytes.sum", "bytes moved per sample", "bytes")};
  m.interval_ms = kDefaultIntervalMs;
  m.drain_ms = kDefaultDrainMs;
  m.gpu_util_resolution_pct = 1;
  m.start_ns = 1'795'959'362'400'000'000;  // 2026-11-29, when the probe ran
  m.run_type = "single";
  m.host = "synthetic";
  return m;
}

SyntheticSpec h200_probe_shape_spec() {
  SyntheticSpec s;
  s.meta = synthetic_hopper_meta();
  s.meta.command = {"synthetic-h200-probe-shape"};
  // The probe's first sample spanned its 614 ms of setup (docs/method.md#the-first-h200-probe).
  s.setup_ns = 614 * kNsPerMs + 150'000;
  s.setup_units = {0.04217, 0, 0.5437, 0.254};
  s.setup_diagnostics = {0.6, 0.6902};
  s.setup_counts = {2.132e9};
  // Units: fp32, tensor, dram, l2; diagnostics: sm_active, gr_active; count rate: DRAM bytes per second.
  const SyntheticPhase idle{"idle", 0, {0, 0, 0.0004, 0.0006}, {0.003, 0.0036}, {2e7}, 0};
  SyntheticPhase idle0 = idle, idle1 = idle, idle2 = idle;
  idle0.seconds = 0.295;
  idle1.seconds = 0.300;
  idle2.seconds = 0.297;
  // FFMA: 84.97% of the FMA pipe, GR busy throughout, GPU-Util 99 (probe samples 35..130).
  const SyntheticPhase ffma{"ffma", 1.038, {84.97, 5.311, 0.0006, 0.0012}, {100, 100}, {3e7}, 99};
  // Copy: DRAM at 81.8% of peak, 3.95e10 bytes per 10 ms, GPU-Util 98 (probe samples 165..260).
  const SyntheticPhase copy{"copy", 1.000, {0.374, 0, 81.8, 39.1}, {98.7, 98.6}, {3.95e12}, 98};
  s.phases = {idle0, ffma, idle1, copy, idle2};
  s.sm_mhz = 1980;
  s.mem_mhz = kNaN;  // the probe did not read the memory clock
  s.power_limit_w = 700;
  s.jitter = 0.004;
  s.seed = 20261129;
  s.significant_digits = 4;
  const TimeNs t0 = s.meta.start_ns;
  s.notes = {
      Note{t0, "synthetic",
           "generated by diescope (src/recording/synthetic.cpp, h200_probe_shape_spec) with the shape of one "
           "PM-sampling probe run on an H200; not a "
           "measurement"},
      Note{t0, "clock", "memory clock not read: the probe did not record it"},
  };
  return s;
}

SyntheticSpec long_run_spec(double hours) {
  SyntheticSpec s;
  RecordingMeta& m = s.meta;
  m = synthetic_hopper_meta();
  m.command = {"synthetic-long-run"};
  m.units = {
      column("fp32", "FP32", std::string("sm__inst_executed_pipe_fma") + kPct, "FMA pipe as a whole"),
      column("fma_heavy", "FMA heavy", std::string("sm__inst_executed_pipe_fmaheavy") + kPct,
             "heavy half of the FMA pipe"),
      column("fma_lite", "FMA lite", std::string("sm__inst_executed_pipe_fmalite") + kPct,
             "lite half of the FMA pipe"),
      column("tensor", "Tensor", std::string("sm__pipe_tensor_cycles_active_realtime") + kPct,
             "tensor pipe, realtime"),
      column("fp64", "FP64", std::string("sm__inst_executed_pipe_fp64") + kPct, "FP64 pipe"),
      column("alu", "ALU", std::string("sm__inst_executed_pipe_alu") + kPct, "integer and logic pipe"),
      column("dram", "DRAM", "dram__bytes.sum.pct_of_peak_sustained_elapsed", "bytes moved to and from DRAM"),
      column("l2", "L2", "lts__t_bytes.sum.pct_of_peak_sustained_elapsed", "bytes through the L2 slices"),
  };
  m.diagnostics = {
      column("gr_active", "GR active", std::string("gr__cycles_active") + kPct,
             "graphics/compute engine busy"),
      column("warps_active", "Warps active", std::string("sm__warps_active") + kPct, "achieved occupancy"),
  };
  // Units: fp32 fma_heavy fma_lite tensor fp64 alu dram l2; diagnostics: gr_active warps_active.
  s.phases = {
      {"compute", 30, {25, 20, 15, 62, 0, 18, 35, 40}, {99, 45}, {1.68e12}, 100},
      {"input", 8, {5, 4, 3, 8, 0, 6, 10, 12}, {60, 20}, {4.8e11}, 70},
      {"idle", 4, {0, 0, 0, 0, 0, 0, 0.0004, 0.0006}, {0.0036, 0}, {2e7}, 0},
      {"memory", 18, {4, 3, 2, 0, 0, 5, 82, 55}, {98, 30}, {3.94e12}, 98},
  };
  s.run_seconds = hours * 3600;
  s.cycles = static_cast<long>(std::ceil(s.run_seconds / 60)) + 1;
  s.sm_mhz = 1980;
  s.mem_mhz = kNaN;
  s.jitter = 0.02;
  s.seed = 86400;
  s.notes = {Note{m.start_ns, "synthetic", "generated by diescope (long_run_spec); not a measurement"}};
  return s;
}

namespace {

// The descriptor of a catalog metric; a name or scope the catalog refuses is a bug here.
metrics::MetricDescriptor host_descriptor(std::string_view name, const metrics::Scope& scope,
                                          const metrics::PeakInputs& inputs) {
  auto d = metrics::describe_metric(name, scope, inputs);
  if (!d)
    throw core::Error("synthetic host stream: " + d.reason(), "correct the synthetic spec",
                      core::kExitInternal);
  return *d;
}

}  // namespace

SyntheticSpec input_bound_spec(double workers_busy_pct_while_idle) {
  SyntheticSpec s;
  s.meta = synthetic_hopper_meta();
  s.meta.command = {"python3", "train.py", "--workers", "4"};
  s.meta.host_interval_ms = 100;
  s.meta.start_ns = 1'796'130'000'000'000'000;  // 2026-12-01
  constexpr int kCpus = 8;
  constexpr double kGiB = 1024.0 * 1024 * 1024;
  metrics::PeakInputs inputs;
  inputs.logical_cpus = kCpus;
  inputs.readings["mem__capacity_bytes"] = 64 * kGiB;
  struct Values {
    std::vector<double> step, wait;  // the stream's value in each phase
  };
  std::vector<Values> values;
  auto add = [&](std::string_view name, const metrics::Scope& scope, double step, double wait) {
    s.host_streams.push_back(HostStream{0, static_cast<std::int64_t>(s.host_streams.size()),
                                        host_descriptor(name, scope, inputs)});
    values.push_back(Values{{step}, {wait}});
  };
  const char* const kBusy = "cpu__cycles_busy.avg.pct_of_peak_sustained_elapsed";
  // Host CPU: the main process's core and the workers' four cores busy while the GPU waits.
  const double w = workers_busy_pct_while_idle;
  add(kBusy, metrics::Scope::system(), (100 + 4 * 70) / 8.0, (5 + 4 * w) / 8.0);
  add("cpu__cycles_iowait.avg.pct_of_peak_sustained_elapsed", metrics::Scope::system(), 0.2, 0.3);
  for (int c = 0; c < kCpus; ++c) {
    const double step = c == 0 ? 100 : c <= 4 ? 70 : 1;
    const double wait = c == 0 ? 5 : c <= 4 ? w : 1;
    add(kBusy, metrics::Scope::cpu(c), step, wait);
  }
  add("mem__capacity_bytes", metrics::Scope::system(), 64 * kGiB, 64 * kGiB);
  add("mem__available_bytes", metrics::Scope::system(), 40 * kGiB, 40 * kGiB);
  add("mem__used_bytes", metrics::Scope::system(), 24 * kGiB, 24 * kGiB);
  add("disk__read_bytes.sum.per_second", metrics::Scope::block_device("nvme0n1"), 2e6, 2e6);
  add("disk__write_bytes.sum.per_second", metrics::Scope::block_device("nvme0n1"), 0, 0);
  add("disk__inflight", metrics::Scope::block_device("nvme0n1"), 0, 0);
  add("disk__busy.pct", metrics::Scope::block_device("nvme0n1"), 1, 1);
  s.host_tasks.push_back(HostTask{0, 1000, 999, "python3"});
  // The main process: its Python thread drives the GPU during the step and waits for batches after.
  const metrics::Scope main = metrics::Scope::process(1000);
  add("proc__cycles_active.sum.per_second", main, 100, 5);
  add("proc__thread_cycles_active.max.per_second", main, 95, 4);
  add("proc__threads", main, 40, 40);
  add("proc__rss_bytes", main, 6 * kGiB, 6 * kGiB);
  for (int i = 1; i <= 4; ++i) {
    const metrics::Scope worker = metrics::Scope::process(1000 + i);
    s.host_tasks.push_back(HostTask{0, 1000 + i, 1000, "pt_data_worker"});
    add("proc__cycles_active.sum.per_second", worker, 70, w);
    add("proc__thread_cycles_active.max.per_second", worker, 70, w);
    add("proc__threads", worker, 3, 3);
    add("proc__rss_bytes", worker, 1.5 * kGiB, 1.5 * kGiB);
    add("proc__io_rchar.sum.per_second", worker, 5e5, 5e5);
  }
  const SyntheticPhase step{"step", 0.6, {0.5, 60, 30, 35}, {95, 99}, {2.3e12}, 100};
  const SyntheticPhase wait{"wait", 0.4, {0, 0, 0.0004, 0.0006}, {0.003, 0.0036}, {2e7}, 0};
  s.phases = {step, wait};
  s.host_values.resize(2);
  for (const Values& v : values) {
    s.host_values[0].push_back(v.step[0]);
    s.host_values[1].push_back(v.wait[0]);
  }
  s.cycles = 20;
  s.mem_mhz = kNaN;
  s.jitter = 0.01;
  s.seed = 20261201;
  s.notes = {Note{s.meta.start_ns, "synthetic",
                  "generated by diescope (src/recording/synthetic.cpp, input_bound_spec): an input-bound "
                  "training run's shape with host streams; not a measurement"}};
  return s;
}

}  // namespace diescope::recording
