#include "diescope/report/wording.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "diescope/analysis/energy.hpp"
#include "diescope/core/signals.hpp"

namespace diescope::report {

namespace {

const char* span_name(const analysis::SpanResults& span) {
  return span.is_window ? "window" : "run";
}

}  // namespace

std::string window_words(analysis::WindowFinding finding) {
  switch (finding) {
    case analysis::WindowFinding::not_asked:
      return "not asked for";
    case analysis::WindowFinding::markers:
      return "markers";
    case analysis::WindowFinding::no_markers:
      return "no markers";
    case analysis::WindowFinding::stop_without_start:
      return "stop before start: a stop marker with no start marker";
    case analysis::WindowFinding::stop_before_start:
      return "stop before start: no stop marker after the start marker";
    case analysis::WindowFinding::start_without_stop:
      return "start without stop: no stop marker after the start marker";
    case analysis::WindowFinding::outside_run:
      return "the markers lie outside the run";
  }
  return {};
}

std::string die_util_missing_words(const analysis::SpanResults& span) {
  switch (span.die_util_missing) {
    case analysis::DieUtilMissing::none:
      return {};
    case analysis::DieUtilMissing::empty_span:
      return span.is_window ? "the window is empty" : "the run is empty (it ends at or before its start)";
    case analysis::DieUtilMissing::no_usable_samples:
      return fmt::format("no usable chip samples in the {}", span_name(span));
    case analysis::DieUtilMissing::no_unit_value:
      return "no unit had a value in any usable chip sample";
  }
  return {};
}

std::string limiting_unit_missing_words(const analysis::SpanResults& span) {
  switch (span.limiting_unit_missing) {
    case analysis::LimitingUnitMissing::none:
      return {};
    case analysis::LimitingUnitMissing::no_usable_samples:
      return "no usable chip samples";
    case analysis::LimitingUnitMissing::no_busy_unit:
      return fmt::format("no unit reached {:.0f}% of its peak", analysis::kMinBusyPct);
    case analysis::LimitingUnitMissing::busy_units_sparse:
      return fmt::format(
          "the units that reached {:.0f}% of their peak had values for under {:.0f}% of the "
          "chip-sampled time",
          analysis::kMinBusyPct, analysis::kMinLimitingAvailabilityPct);
  }
  return {};
}

std::string gpu_util_missing_words(const analysis::SpanResults& span) {
  switch (span.gpu_util_missing) {
    case analysis::GpuUtilMissing::none:
      return {};
    case analysis::GpuUtilMissing::no_usable_samples:
      // Without chip time GPU-Util stands alone over the whole span when NVML covered enough of it
      // (docs/method.md#gpu-util-without-chip-samples).
      if (std::isfinite(span.gpu_util_whole_span_coverage_pct))
        return fmt::format(
            "no usable chip samples, and NVML's GPU-Util covered {:.1f}% of the {}, under the {:.0f}% "
            "needed to give it over the whole {}",
            span.gpu_util_whole_span_coverage_pct, span_name(span), analysis::kMinWholeSpanGpuUtilCoveragePct,
            span_name(span));
      return "no usable chip samples to compare GPU-Util with";
    case analysis::GpuUtilMissing::not_covered:
      return "no GPU-Util sample covers the chip-sampled time";
  }
  return {};
}

std::string gap_missing_words(const analysis::SpanResults& span) {
  switch (span.headline.gap_missing) {
    case analysis::GapMissing::none:
      return {};
    case analysis::GapMissing::no_die_util:
      return "DIE-Util is not available: " + die_util_missing_words(span);
    case analysis::GapMissing::no_gpu_util:
      return "GPU-Util is not available: " + gpu_util_missing_words(span);
    case analysis::GapMissing::gpu_util_coverage_low:
      return fmt::format(
          "GPU-Util covered {:.1f}% of the chip-sampled time, under the {:.0f}% needed to compare it "
          "with DIE-Util",
          span.gpu_util_coverage_pct, analysis::kMinGpuUtilCoveragePct);
  }
  return {};
}

std::string split_missing_words(const analysis::SpanResults& span) {
  const analysis::Headline& h = span.headline;
  switch (h.split_missing) {
    case analysis::SplitMissing::none:
      return {};
    case analysis::SplitMissing::no_gap:
      return gap_missing_words(span);
    case analysis::SplitMissing::negative_gap: {
      std::string words = "GPU-Util reads below DIE-Util by more than its noise floor";
      if (!h.uncounted_limiting_unit.empty())
        words +=
            " because the busiest unit, " + h.uncounted_limiting_unit + ", is one GPU-Util does not count";
      else
        words += " (the busiest unit may be one GPU-Util does not count, such as a video engine)";
      return words + "; idle and active can't be separated";
    }
  }
  return {};
}

std::string partial_words(const analysis::SpanResults& span) {
  if (!span.partial) return {};
  if (span.partial_cause == analysis::PartialCause::not_scheduled)
    return fmt::format("partial (the counters were not scheduled to run during the {})", span_name(span));
  // Rounded to a whole percent, but never shown as the gate's own figure when under it.
  const long shown =
      std::min(std::lround(span.chip_coverage_pct), static_cast<long>(analysis::kMinChipCoveragePct) - 1);
  // Under duty cycling the coverage is of the time the counters were scheduled to run.
  const std::string of_what = std::isnan(span.chip_scheduled_s) ? fmt::format("of the {}", span_name(span))
                                                                : "of their scheduled time";
  return fmt::format("partial (counters covered {}% {})", shown, of_what);
}

std::string gpu_util_from_words(analysis::GpuUtilFrom from) {
  switch (from) {
    case analysis::GpuUtilFrom::none:
      return {};
    case analysis::GpuUtilFrom::samples:
      return "samples";
    case analysis::GpuUtilFrom::polled:
      return "polled";
    case analysis::GpuUtilFrom::samples_and_polled:
      return "samples+polled";
  }
  return {};
}

std::string gpu_util_covers_words(const analysis::SpanResults& span) {
  if (!std::isfinite(span.gpu_util_pct)) return {};
  if (span.chip_covered_s > 0) return "the time the counters cover";
  return fmt::format("the whole {} (no usable chip samples)", span_name(span));
}

std::string shared_gpu_words(const analysis::Hygiene& hygiene) {
  // With holder records the other processes are known by pid and name: they, and only they, make
  // the GPU shared (docs/method.md#shared-gpus-in-the-headline).
  if (hygiene.holders_recorded) {
    const auto& others = hygiene.other_processes;
    if (others.empty()) return {};
    constexpr std::size_t kNamed = 5;  // a headline line, not a process table
    std::string list;
    for (std::size_t i = 0; i < others.size() && i < kNamed; ++i)
      list += fmt::format("{}{} (pid {})", i == 0 ? "" : ", ",
                          others[i].name.empty() ? "name not readable" : others[i].name, others[i].pid);
    if (others.size() > kNamed) list += fmt::format(" and {} more", others.size() - kNamed);
    return fmt::format(
        "{} other process{} used the GPU during the run, at most {} at once: {}; chip figures are "
        "device-wide: the counters see every process on the GPU",
        others.size(), others.size() == 1 ? "" : "es", hygiene.other_processes_max, list);
  }
  // Without them (older recordings, the agent's) the lists count every holder, the measured
  // command's processes included: two or more at once is what says another may have shared the
  // counters.
  const int compute = hygiene.compute_holders_max.value_or(0);
  const int graphics = hygiene.graphics_holders_max.value_or(0);
  if (compute + graphics < 2) return {};
  return fmt::format(
      "up to {} compute and {} graphics processes held the GPU at once (the measured command's "
      "included); chip figures are device-wide: the counters see every process on the GPU",
      compute, graphics);
}

std::string finding_words(const analysis::AnalysisFinding& finding) {
  switch (finding.kind) {
    case analysis::AnalysisFinding::Kind::no_end_record:
      return fmt::format(
          "the recording has no end record (cut off); the run is taken to end at its last record, "
          "{:.3f} s after the start",
          finding.run_s);
    case analysis::AnalysisFinding::Kind::truncated:
      return "the recording ends mid-record; everything before it was read";
    case analysis::AnalysisFinding::Kind::samples_outside_run:
      return fmt::format("{} chip sample(s) lie wholly outside the run and were left out", finding.samples);
    case analysis::AnalysisFinding::Kind::impossible_values:
      return fmt::format(
          "{} chip sample(s) hold a value no counter can produce (below 0% or above {:g}% of peak) and "
          "were left out as broken",
          finding.samples, analysis::kMaxPctOfPeak);
  }
  return {};
}

std::string clock_jump_words(const recording::ClockJump& jump, recording::TimeNs run_start_ns) {
  return fmt::format(
      "the wall clock stepped by {:+.3f} s at {:.3f} s into the run; figures over spans that cross "
      "it may be wrong",
      static_cast<double>(jump.step_ns) * 1e-9, static_cast<double>(jump.ts_ns - run_start_ns) * 1e-9);
}

namespace {

std::string value_words(const analysis::SampleBreak& broken) {
  switch (broken.value) {
    case analysis::SampleBreak::Value::not_finite:
      return " is not a number";
    case analysis::SampleBreak::Value::negative:
      return fmt::format(" reads {:g}%, below 0", broken.read);
    case analysis::SampleBreak::Value::above_peak:
      return fmt::format(" reads {:g}%, above the {:g}% of peak no counter can exceed", broken.read,
                         analysis::kMaxPctOfPeak);
  }
  return {};
}

}  // namespace

std::string drop_words(analysis::SampleDrop drop, const analysis::SampleBreak& broken,
                       const recording::RecordingMeta& meta) {
  if (drop == analysis::SampleDrop::first)
    return "first sample after the counters started: it spans their setup";
  if (drop != analysis::SampleDrop::broken) return {};
  switch (broken.part) {
    case analysis::SampleBreak::Part::empty_span:
      return "empty span: end is not after start";
    case analysis::SampleBreak::Part::unit:
      return "unit " + meta.units[broken.column].key + value_words(broken);
    case analysis::SampleBreak::Part::diagnostic:
      return "diagnostic " + meta.diagnostics[broken.column].key + value_words(broken);
    case analysis::SampleBreak::Part::none:
      break;
  }
  return {};
}

std::string run_ending_words(const recording::RunEnding& ending, int exit_code) {
  switch (ending.way) {
    case recording::RunEnding::Way::exited:
      return fmt::format("exited with code {}", exit_code);
    case recording::RunEnding::Way::signal:
      return "ended by " + core::signal_name(ending.signal);
    case recording::RunEnding::Way::period_end:
      return "ended with the agent's period";
    case recording::RunEnding::Way::other:
      return "ended by " + ending.text;
    case recording::RunEnding::Way::unstated:
      break;
  }
  return fmt::format("ended with code {}", exit_code);
}

std::string run_ending_cell(const recording::RunEnding& ending, int exit_code) {
  switch (ending.way) {
    case recording::RunEnding::Way::signal:
      return core::signal_name(ending.signal);
    case recording::RunEnding::Way::other:
      return ending.text;
    case recording::RunEnding::Way::exited:
    case recording::RunEnding::Way::period_end:
    case recording::RunEnding::Way::unstated:
      break;
  }
  return std::to_string(exit_code);
}

namespace {

std::string gpu_words(int gpu_index) {
  return gpu_index >= 0 ? fmt::format("GPU {}", gpu_index) : std::string("the GPU");
}

std::string cores_words(double cores) {
  return fmt::format("{:.1f}", cores);
}

// A capacity in cores, whole when it is: "4", "7.5".
std::string capacity_words(double cores) {
  return fmt::format("{:g}", std::round(cores * 10) / 10);
}

std::string names_words(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < 3; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > 3) out += ", ...";
  return out;
}

std::string process_words(const analysis::IdleProcess& p) {
  return fmt::format("{} (pid {})", p.name.empty() ? std::string("a process") : p.name, p.pid);
}

std::string bytes_rate_words(double v) {
  if (v >= 1e9) return fmt::format("{:.1f} GB/s", v / 1e9);
  if (v >= 1e6) return fmt::format("{:.1f} MB/s", v / 1e6);
  if (v >= 1e3) return fmt::format("{:.1f} kB/s", v / 1e3);
  return fmt::format("{:.0f} B/s", v);
}

}  // namespace

std::string_view coverage_gate_code(analysis::CoverageGate gate) {
  return gate == analysis::CoverageGate::partial ? "partial" : "pass";
}

std::optional<analysis::CoverageGate> coverage_gate_from_code(std::string_view code) {
  for (analysis::CoverageGate gate : {analysis::CoverageGate::pass, analysis::CoverageGate::partial})
    if (coverage_gate_code(gate) == code) return gate;
  return std::nullopt;
}

std::string idle_verdict_code(analysis::IdleVerdict verdict) {
  using V = analysis::IdleVerdict;
  switch (verdict) {
    case V::not_explained:
      return "";
    case V::own_io_bound:
      return "own_io_bound";
    case V::input_bound:
      return "input_bound";
    case V::one_thread_bound:
      return "one_thread_bound";
    case V::host_cpu_saturated:
      return "host_cpu_saturated";
    case V::io_bound:
      return "io_bound";
    case V::memory_pressure:
      return "memory_pressure";
    case V::no_clear_cause:
      return "no_clear_cause";
  }
  return "";
}

std::string idle_not_explained_words(analysis::IdleNotExplained why) {
  using W = analysis::IdleNotExplained;
  switch (why) {
    case W::none:
      return "";
    case W::no_host_streams:
      return "the recording has no host probes";
    case W::no_gpu_util:
      return "no GPU-Util over the span, so the GPU's idle time is not known";
    case W::idle_too_small:
      return fmt::format("the GPU idled less than {:g} points of the span: nothing to explain",
                         analysis::kMinIdlePointsToExplain);
    case W::too_little_idle_observed:
      return fmt::format("the host probes saw less than {:g} s of GPU-idle time",
                         analysis::kMinIdleSecondsObserved);
  }
  return "";
}

std::string idle_verdict_words(const analysis::IdleExplanation& x, int gpu_index) {
  using V = analysis::IdleVerdict;
  const std::string while_idle = "while " + gpu_words(gpu_index) + " idled";
  switch (x.verdict) {
    case V::not_explained:
      return idle_not_explained_words(x.why_not);
    case V::own_io_bound:
      return fmt::format(
          "waiting on its own reads: {}, the command read {} from storage and was reading or waiting on I/O "
          "{:.0f}% of the time; then its process{}{} spent {} of {} cores in the kernel or blocked on I/O",
          while_idle, bytes_rate_words(x.own_read_bytes_per_s), x.own_read_share * 100,
          x.reader_names.size() == 1 ? "" : "es",
          x.reader_names.empty() ? "" : " (" + names_words(x.reader_names) + ")", cores_words(x.own_io_cores),
          cores_words(x.own_reader_cores));
    case V::input_bound: {
      const long workers = std::lround(x.workers);
      return fmt::format("input-bound: {}, the {} worker process{}{} used {} of {} cores", while_idle,
                         workers, workers == 1 ? "" : "es",
                         x.worker_names.empty() ? "" : " (" + names_words(x.worker_names) + ")",
                         cores_words(x.worker_cores), capacity_words(x.worker_capacity_cores));
    }
    case V::one_thread_bound: {
      const analysis::IdleProcess& p = *x.busiest_thread_owner;
      return fmt::format(
          "one CPU thread: {}, one thread of {} ran at {:.0f}% of a core; the GPU waited on "
          "it (the Python loop, kernel launches, or loading in the main process)",
          while_idle, process_words(p), p.busiest_thread_pct);
    }
    case V::host_cpu_saturated:
      return fmt::format(
          "host CPU saturated: {}, the host's {} logical CPUs were {:.0f}% busy (the command "
          "used {} cores)",
          while_idle, x.logical_cpus, x.host_cpu_busy_pct,
          std::isfinite(x.command_cores) ? cores_words(x.command_cores) : std::string("n/a"));
    case V::io_bound:
      if (x.disk_busy_max_pct >= analysis::kDiskBusyBoundPct)
        return fmt::format("I/O-bound: {}, {} was busy {:.0f}% of the time ({} read, {} written)", while_idle,
                           x.busiest_disk, x.disk_busy_max_pct, bytes_rate_words(x.disk_read_bytes_per_s),
                           bytes_rate_words(x.disk_write_bytes_per_s));
      return fmt::format("I/O-bound: {}, the CPUs waited on I/O {:.0f}% of the time", while_idle,
                         x.iowait_pct);
    case V::memory_pressure:
      return fmt::format("memory pressure: {}, only {:.1f}% of memory was available", while_idle,
                         x.memory_available_pct);
    case V::no_clear_cause:
      return fmt::format(
          "no clear host cause: {}, no worker, thread, CPU, disk or memory limit was reached; "
          "the GPU probably waited on synchronisation or work the host probes do not see",
          while_idle);
  }
  return "";
}

std::string idle_host_words(const analysis::IdleExplanation& x) {
  std::vector<std::string> parts;
  if (std::isfinite(x.command_cores)) {
    std::string p = "the command used " + cores_words(x.command_cores) + " cores";
    if (std::isfinite(x.command_cores_busy))
      p += " (" + cores_words(x.command_cores_busy) + " while the GPU was busy)";
    if (std::isfinite(x.worker_cores))
      p += fmt::format(", its workers {} of {}", cores_words(x.worker_cores),
                       capacity_words(x.worker_capacity_cores));
    parts.push_back(p);
  }
  if (x.busiest) {
    std::string p = "busiest " + process_words(*x.busiest) + " " + cores_words(x.busiest->cores) + " cores";
    if (std::isfinite(x.busiest->threads))
      p += fmt::format(", {:.0f} threads, its busiest at {:.0f}% of a core", x.busiest->threads,
                       x.busiest->busiest_thread_pct);
    parts.push_back(p);
  }
  if (std::isfinite(x.host_cpu_busy_pct)) {
    std::string p = fmt::format("host CPU {:.0f}% busy", x.host_cpu_busy_pct);
    if (x.logical_cpus > 0) p += fmt::format(" of {} CPUs", x.logical_cpus);
    if (std::isfinite(x.iowait_pct)) p += fmt::format(", iowait {:.1f}%", x.iowait_pct);
    parts.push_back(p);
  }
  if (std::isfinite(x.disk_read_bytes_per_s))
    parts.push_back("disks " + bytes_rate_words(x.disk_read_bytes_per_s) + " read, " +
                    bytes_rate_words(x.disk_write_bytes_per_s) + " written");
  if (std::isfinite(x.memory_available_pct))
    parts.push_back(fmt::format("memory {:.0f}% available", x.memory_available_pct));
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? "; " : "") + parts[i];
  if (!out.empty()) out += fmt::format(" (means over {:.1f} s of GPU-idle time)", x.idle_observed_s);
  return out;
}

std::string_view energy_source_code(analysis::EnergySource source) {
  switch (source) {
    case analysis::EnergySource::counter:
      return "counter";
    case analysis::EnergySource::power_draw:
      return "power_draw";
    case analysis::EnergySource::none:
      break;
  }
  return "none";
}

std::string_view counter_unused_code(analysis::CounterUnused why) {
  switch (why) {
    case analysis::CounterUnused::absent:
      return "absent";
    case analysis::CounterUnused::went_back:
      return "went_back";
    case analysis::CounterUnused::none:
      break;
  }
  return "";
}

std::string energy_missing_words(const analysis::EnergyFigures& e) {
  switch (e.missing) {
    case analysis::EnergyMissing::not_recorded:
      return "the recording predates format 4: it holds the power limit but neither the draw nor NVML's "
             "energy "
             "counter";
    case analysis::EnergyMissing::no_readings:
      return "fewer than two power readings around this span";
    case analysis::EnergyMissing::unreadable:
      return "NVML could read neither the energy counter nor the power draw over this span";
    case analysis::EnergyMissing::not_computed:
      return "not computed";
    case analysis::EnergyMissing::none:
      break;
  }
  return "";
}

std::string energy_words(const analysis::EnergyFigures& e) {
  if (!std::isfinite(e.energy_j)) return "n/a: " + energy_missing_words(e);
  const auto joules = [](double j) {
    return std::abs(j) >= 1e4 ? fmt::format("{:.1f} kJ", j / 1e3) : fmt::format("{:.1f} J", j);
  };
  std::string out = joules(e.energy_j);
  if (e.source == analysis::EnergySource::counter) {
    out += " (NVML's energy counter)";
  } else {
    out += e.counter_unused == analysis::CounterUnused::went_back
               ? " (power draw integrated: the energy counter went back)"
               : " (power draw integrated: no energy counter)";
  }
  if (std::isfinite(e.mean_power_w)) out += fmt::format(", {:.0f} W mean", e.mean_power_w);
  if (std::isfinite(e.coverage_pct) && e.coverage_pct < 99.95)
    out += fmt::format(" over {:.1f}% of the span", e.coverage_pct);
  if (std::isfinite(e.stranded_j) && std::isfinite(e.stranded_pct))
    out += fmt::format("; {} stranded ({:.1f}% of the chip-sampled energy, DIE-Util under {:g}%)",
                       joules(e.stranded_j), e.stranded_pct, analysis::kStrandedEnergyDieUtilPct);
  return out;
}

std::string flops_missing_words(const analysis::EnergyFigures& e) {
  switch (e.flops_missing) {
    case analysis::FlopsMissing::window_only:
      return "the program gave the steady window's FLOPs, not the whole run's";
    case analysis::FlopsMissing::run_only:
      return "the program gave the whole run's FLOPs, not the steady window's";
    case analysis::FlopsMissing::none:
      break;
  }
  return e.flops_told ? "" : "the recording holds no FLOPs";
}

std::string joules_per_tflop_missing_words(const analysis::EnergyFigures& e) {
  if (!std::isfinite(e.flops)) return flops_missing_words(e);
  if (!std::isfinite(e.energy_j)) return energy_missing_words(e);
  return "";
}

std::string joules_per_tflop_words(const analysis::EnergyFigures& e) {
  if (!std::isfinite(e.joules_per_tflop)) return "n/a: " + joules_per_tflop_missing_words(e);
  const double tflop = e.flops / 1e12;
  return fmt::format(
      "{:.3g} J per TFLOP: {:.1f} J over {} TFLOP ({}; FLOPs printed by the program)", e.joules_per_tflop,
      e.energy_j, tflop >= 1000 ? fmt::format("{:.0f}", tflop) : fmt::format("{:.4g}", tflop),
      e.source == analysis::EnergySource::counter ? "NVML's energy counter" : "power draw integrated");
}

}  // namespace diescope::report
