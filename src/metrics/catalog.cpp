#include "diescope/metrics/catalog.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "diescope/core/edit_distance.hpp"

namespace diescope::metrics {
namespace {

using K = Scope::Kind;
using T = MetricType;

constexpr PeakRule kPct = PeakRule::fixed_at(100);  // a percent of peak peaks at 100

// Chip counters are read as percent of the sustained peak CUPTI defines for each counter on the chip
// (docs/method.md#units-and-recipes); diescope does not compute those peaks. Names with a "GROUP.Pass."
// prefix are the group-qualified realtime forms that fit one pass together on GH100 (docs/metrics.md#names).
constexpr CatalogEntry kCatalog[] = {
    // FP32 and the FMA pipe's halves.
    {"sm__inst_executed_pipe_fma_realtime.avg.pct_of_peak_sustained_elapsed", T::counter, Unit::pct, K::gpu,
     Source::cupti, kPct, "FP32 (FMA pipe)",
     "Warp instructions on the whole FMA pipe (FP32, fp16 and integer multiply-add), realtime form."},
    {"TPC.TriageCompute.sm__inst_executed_pipe_fma_realtime.avg.pct_of_peak_sustained_elapsed", T::counter,
     Unit::pct, K::gpu, Source::cupti, kPct, "FP32 (FMA pipe)",
     "The whole-pipe counter in the group-qualified form that fits Hopper's one-pass set."},
    {"sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_elapsed", T::counter, Unit::pct, K::gpu,
     Source::cupti, kPct, "FP32 (FMA pipe)",
     "The whole-pipe counter's plain form; beside a unit table it can cost a second pass."},
    {"sm__inst_executed_pipe_fmaheavy_realtime.avg.pct_of_peak_sustained_elapsed", T::counter, Unit::pct,
     K::gpu, Source::cupti, kPct, "FMA heavy",
     "The FMA pipe's heavy half (FP32, fp16, integer multiply-add; integer and logic can land here too). "
     "Diagnostic."},
    {"TPC.TriageCompute.sm__inst_executed_pipe_fmaheavy_realtime.avg.pct_of_peak_sustained_elapsed",
     T::counter, Unit::pct, K::gpu, Source::cupti, kPct, "FMA heavy",
     "Heavy half, group-qualified form. Diagnostic."},
    {"sm__inst_executed_pipe_fmalite_realtime.avg.pct_of_peak_sustained_elapsed", T::counter, Unit::pct,
     K::gpu, Source::cupti, kPct, "FMA lite", "The FMA pipe's lite half (FP32 and fp16 only). Diagnostic."},
    {"TPC.TriageCompute.sm__inst_executed_pipe_fmalite_realtime.avg.pct_of_peak_sustained_elapsed",
     T::counter, Unit::pct, K::gpu, Source::cupti, kPct, "FMA lite",
     "Lite half, group-qualified form. Diagnostic."},
    {"sm__inst_executed_pipe_fmaheavy.avg.pct_of_peak_sustained_elapsed", T::counter, Unit::pct, K::gpu,
     Source::cupti, kPct, "FMA heavy", "Heavy half, plain (non-realtime) form. Diagnostic."},
    {"sm__inst_executed_pipe_fmalite.avg.pct_of_peak_sustained_elapsed", T::counter, Unit::pct, K::gpu,
     Source::cupti, kPct, "FMA lite", "Lite half, plain (non-realtime) form. Diagnostic."},
    {"sm__pipe_fma_halves_mean.avg.pct_of_peak_sustained_elapsed", T::counter, Unit::pct, K::gpu,
     Source::derived, kPct, "FP32 (FMA halves' mean)",
     "Not a CUPTI metric: diescope's mean of the heavy and lite halves, used where the whole-pipe counter "
     "does "
     "not fit one pass. Integer and logic work on the heavy half counts at half weight."},
    // Other SM pipes.
    {"sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed", T::counter, Unit::pct,
     K::gpu, Source::cupti, kPct, "Tensor", "Cycles the tensor pipe was busy."},
    {"TPC.TriageCompute.sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed", T::counter,
     Unit::pct, K::gpu, Source::cupti, kPct, "Tensor", "Tensor pipe, group-qualified form."},
    {"sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed", T::counter, Unit::pct, K::gpu,
     Source::cupti, kPct, "Tensor", "Tensor pipe, plain (non-realtime) form."},
    {"sm__pipe_tensor_cycles_active_realtime_v2.avg.pct_of_peak_sustained_elapsed", T::counter, Unit::pct,
     K::gpu, Source::cupti, kPct, "Tensor",
     "Tensor pipe, the realtime form that replaces the first one on Ada."},
    {"sm__inst_executed_pipe_fp64.avg.pct_of_peak_sustained_elapsed", T::counter, Unit::pct, K::gpu,
     Source::cupti, kPct, "FP64", "Warp instructions on the FP64 pipe."},
    {"sm__pipe_shared_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed", T::counter, Unit::pct,
     K::gpu, Source::cupti, kPct, "Tensor+FP16",
     "Turing's tensor stand-in: the pipe tensor cores share with fp16 math, so it reads above tensor work "
     "whenever fp16 runs. A different measure."},
    {"sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_elapsed", T::counter, Unit::pct, K::gpu,
     Source::cupti, kPct, "FP64",
     "Cycles the FP64 pipe was busy; plain form (two passes on its own on GH100)."},
    {"TPC.TriageCompute.sm__pipe_fp64_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed", T::counter,
     Unit::pct, K::gpu, Source::cupti, kPct, "FP64", "FP64 pipe, group-qualified realtime form."},
    {"sm__inst_executed_pipe_alu_realtime.avg.pct_of_peak_sustained_elapsed", T::counter, Unit::pct, K::gpu,
     Source::cupti, kPct, "ALU", "Warp instructions on the integer and logic pipe."},
    {"TPC.TriageCompute.sm__inst_executed_pipe_alu_realtime.avg.pct_of_peak_sustained_elapsed", T::counter,
     Unit::pct, K::gpu, Source::cupti, kPct, "ALU", "ALU pipe, group-qualified form."},
    // Load/store and L1.
    {"sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_elapsed", T::counter, Unit::pct, K::gpu,
     Source::cupti, kPct, "Load/store",
     "Warp instructions on the load/store pipe. Each counter-buffer drain costs most of the sample spanning "
     "it, "
     "so it reads low at short drain periods."},
    {"l1tex__data_pipe_lsu_wavefronts.avg.pct_of_peak_sustained_elapsed", T::counter, Unit::pct, K::gpu,
     Source::cupti, kPct, "Load/store",
     "Wavefronts in L1's data stage from load/store instructions: a stand-in for the load/store pipe."},
    {"l1tex__data_pipe_lsu_wavefronts_mem_lgds.avg.pct_of_peak_sustained_elapsed", T::counter, Unit::pct,
     K::gpu, Source::cupti, kPct, "Load/store",
     "Wavefronts in L1's data stage for local, global and distributed-shared accesses only: without "
     "shared memory, so on Hopper without the tensor core's wgmma operand reads."},
    {"l1tex__m_xbar2l1tex_read_sectors_realtime.avg.pct_of_peak_sustained_elapsed", T::counter, Unit::pct,
     K::gpu, Source::cupti, kPct, "L1 read sectors",
     "Sectors the crossbar returned to L1; a stand-in for load/store."},
    {"SM_A.TriageCompute.l1tex__m_xbar2l1tex_read_sectors_realtime.avg.pct_of_peak_sustained_elapsed",
     T::counter, Unit::pct, K::gpu, Source::cupti, kPct, "L1 read sectors",
     "L1 read sectors, group-qualified form."},
    // Memory.
    {"dram__bytes.sum.pct_of_peak_sustained_elapsed", T::counter, Unit::pct, K::gpu, Source::cupti, kPct,
     "DRAM",
     "Bytes moved as a share of DRAM bandwidth. DRAM-bound work still reads below 100%: DRAM has overhead it "
     "cannot avoid."},
    {"dram__bytes.sum", T::counter, Unit::bytes, K::gpu, Source::cupti,
     PeakRule::unknown("a per-sample total grows with the sample's span; its share of peak is "
                       "dram__bytes.sum.pct_of_peak_sustained_elapsed"),
     "DRAM bytes", "Raw bytes moved in each sample, as read; rates are counted from it."},
    {"dram__bytes.sum.per_second", T::counter, Unit::bytes_per_second, K::gpu, Source::cupti,
     PeakRule::unknown(
         "whether DRAM's peak follows the live memory clock is open until calibrate settles it"),
     "DRAM rate",
     "Counted rate: bytes summed over the samples (a sample the window cuts counts for its share) over the "
     "time "
     "they cover. Never a percent times a peak."},
    {"dram__throughput.avg.pct_of_peak_sustained_elapsed", T::throughput, Unit::pct, K::gpu, Source::cupti,
     kPct, "DRAM throughput",
     "The higher of DRAM active cycles and bytes moved: a busy-ness measure. Diagnostic."},
    {"fbpa__throughput.avg.pct_of_peak_sustained_elapsed", T::throughput, Unit::pct, K::gpu, Source::cupti,
     kPct, "DRAM (FBPA)", "Turing's DRAM stand-in: framebuffer partition throughput. A different measure."},
    {"lts__t_bytes.avg.pct_of_peak_sustained_elapsed", T::counter, Unit::pct, K::gpu, Source::cupti, kPct,
     "L2", "Bytes through the L2 slices, mean of the slices' percent of peak."},
    {"lts__t_bytes.sum.pct_of_peak_sustained_elapsed", T::counter, Unit::pct, K::gpu, Source::cupti, kPct,
     "L2", "Bytes through the L2 slices, summed before taking the percent."},
    // Activity diagnostics.
    {"sm__cycles_active.avg.pct_of_peak_sustained_elapsed", T::counter, Unit::pct, K::gpu, Source::cupti,
     kPct, "SM active", "Cycles an SM had at least one warp resident. Diagnostic."},
    {"TPC.TriageCompute.sm__cycles_active.avg.pct_of_peak_sustained_elapsed", T::counter, Unit::pct, K::gpu,
     Source::cupti, kPct, "SM active", "SM active, group-qualified form. Diagnostic."},
    {"sm__warps_active_realtime.avg.pct_of_peak_sustained_elapsed", T::counter, Unit::pct, K::gpu,
     Source::cupti, kPct, "Occupancy", "Resident warps as a share of the most the SMs hold. Diagnostic."},
    {"tpc__warps_active_realtime.avg.pct_of_peak_sustained_elapsed", T::counter, Unit::pct, K::gpu,
     Source::cupti, kPct, "Occupancy", "Resident warps counted per TPC. Diagnostic."},
    {"TPC.TriageCompute.tpc__warps_active_realtime.avg.pct_of_peak_sustained_elapsed", T::counter, Unit::pct,
     K::gpu, Source::cupti, kPct, "Occupancy",
     "Resident warps counted per TPC, group-qualified form. Diagnostic."},
    {"gr__cycles_active.avg.pct_of_peak_sustained_elapsed", T::counter, Unit::pct, K::gpu, Source::cupti,
     kPct, "GR active",
     "Cycles the graphics/compute engine had work: the chip's view of what GPU-Util measures."},

    // NVML.
    {"gpu__nvml_utilization.pct", T::ratio, Unit::pct, K::gpu, Source::nvml, kPct, "GPU-Util",
     "NVIDIA's GPU-Util, as nvidia-smi shows it: the share of time any kernel ran. Whole percents."},
    {"nvenc__utilization.pct", T::ratio, Unit::pct, K::gpu, Source::nvml, kPct, "Video encoder",
     "NVML's encoder utilisation over its own recent window. GPU-Util does not count it."},
    {"nvdec__utilization.pct", T::ratio, Unit::pct, K::gpu, Source::nvml, kPct, "Video decoder",
     "NVML's decoder utilisation over its own recent window. GPU-Util does not count it."},
    {"nvjpg__utilization.pct", T::ratio, Unit::pct, K::gpu, Source::nvml, kPct, "JPEG decoder",
     "NVML's JPEG engine utilisation over its own recent window. GPU-Util does not count it."},
    {"gpu__nvml_sm_clock_mhz", T::counter, Unit::mhz, K::gpu, Source::nvml,
     PeakRule::unknown("the card's highest clock is a property of the card, not of the metric"), "SM clock",
     "SM clock as NVML reads it."},
    {"gpu__nvml_memory_clock_mhz", T::counter, Unit::mhz, K::gpu, Source::nvml,
     PeakRule::unknown("the card's highest clock is a property of the card, not of the metric"),
     "Memory clock", "Memory clock as NVML reads it."},
    {"gpu__nvml_power_limit_watts", T::counter, Unit::watts, K::gpu, Source::nvml,
     PeakRule::unknown("a limit is itself a ceiling"), "Power limit",
     "The enforced power limit. It can change within a run, and with it the clocks."},

    // Host: the host probes' names (docs/metrics.md#naming-choices-for-metrics-outside-cupti).
    {"cpu__cycles_busy.avg.pct_of_peak_sustained_elapsed", T::throughput, Unit::pct, K::system,
     Source::procfs, kPct, "CPU busy", "All CPUs' non-idle time, from /proc/stat."},
    {"cpu__cycles_user.avg.pct_of_peak_sustained_elapsed", T::throughput, Unit::pct, K::system,
     Source::procfs, kPct, "CPU user", "User-mode time, from /proc/stat."},
    {"cpu__cycles_kernel.avg.pct_of_peak_sustained_elapsed", T::throughput, Unit::pct, K::system,
     Source::procfs, kPct, "CPU kernel", "Kernel-mode time, from /proc/stat."},
    {"cpu__cycles_iowait.avg.pct_of_peak_sustained_elapsed", T::throughput, Unit::pct, K::system,
     Source::procfs, kPct, "CPU iowait", "Idle time with I/O outstanding, from /proc/stat."},
    {"mem__capacity_bytes", T::counter, Unit::bytes, K::system, Source::procfs,
     PeakRule::unknown("it is the peak of the other mem__ metrics"), "Memory total", "MemTotal."},
    {"mem__used_bytes", T::counter, Unit::bytes, K::system, Source::procfs,
     PeakRule::from_metric("mem__capacity_bytes"), "Memory used", "Total less available."},
    {"mem__available_bytes", T::counter, Unit::bytes, K::system, Source::procfs,
     PeakRule::from_metric("mem__capacity_bytes"), "Memory available", "MemAvailable."},
    {"mem__buffers_bytes", T::counter, Unit::bytes, K::system, Source::procfs,
     PeakRule::from_metric("mem__capacity_bytes"), "Memory buffers", "Buffers."},
    {"mem__cached_bytes", T::counter, Unit::bytes, K::system, Source::procfs,
     PeakRule::from_metric("mem__capacity_bytes"), "Memory cached", "Cached."},
    {"proc__cycles_active.sum.per_second", T::counter, Unit::pct, K::process, Source::procfs,
     PeakRule::per_logical_cpu(100), "Process CPU",
     "On-CPU time of all the process's threads (schedstat, ns) per second of wall time, as a percent of one "
     "core: four busy threads read 400."},
    {"proc__thread_cycles_active.max.per_second", T::counter, Unit::pct, K::process, Source::procfs, kPct,
     "Busiest thread",
     "On-CPU time of the process's busiest thread (its own schedstat) per second of wall time, as a "
     "percent of one core: a thread cannot pass 100."},
    {"proc__threads", T::counter, Unit::count, K::process, Source::procfs,
     PeakRule::unknown("a thread count has no useful bound"), "Threads",
     "Threads the process has (/proc/PID/stat num_threads)."},
    {"proc__rss_bytes", T::counter, Unit::bytes, K::process, Source::procfs,
     PeakRule::from_metric("mem__capacity_bytes"), "Process RSS", "Resident set size."},
    {"proc__vms_bytes", T::counter, Unit::bytes, K::process, Source::procfs,
     PeakRule::unknown("virtual size is not bounded by physical memory"), "Process virtual size",
     "Virtual memory size."},
    {"proc__shared_bytes", T::counter, Unit::bytes, K::process, Source::procfs,
     PeakRule::from_metric("mem__capacity_bytes"), "Process shared", "Resident pages shared with others."},
    {"proc__io_rchar.sum.per_second", T::counter, Unit::bytes_per_second, K::process, Source::procfs,
     PeakRule::unknown("syscall-level bytes, page-cache hits included, have no device bound"),
     "Process reads",
     "Bytes read through syscalls (rchar), not block-device reads: not comparable with disk__read_bytes."},
    {"proc__io_read_bytes.sum.per_second", T::counter, Unit::bytes_per_second, K::process, Source::procfs,
     PeakRule::unknown("no /proc source gives the device's rated bandwidth"), "Process storage reads",
     "Bytes the process caused to be fetched from storage (read_bytes in /proc/PID/io): page-cache hits are "
     "not counted."},
    {"proc__cycles_kernel.sum.per_second", T::counter, Unit::pct, K::process, Source::procfs,
     PeakRule::per_logical_cpu(100), "Process kernel CPU",
     "Kernel-mode time of all the process's threads (stime, clock ticks) per second of wall time, as a "
     "percent of one core."},
    {"proc__io_blocked.sum.per_second", T::counter, Unit::pct, K::process, Source::procfs,
     PeakRule::unknown("every thread can wait at once: the bound is the thread count"),
     "Process blocked on I/O",
     "Time the process's threads waited for block I/O (delayacct_blkio_ticks of each thread) per second of "
     "wall time, as a percent of one thread; NaN where the kernel's delay accounting is off."},
    {"proc__threads_blocked", T::counter, Unit::count, K::process, Source::procfs,
     PeakRule::unknown("a thread count has no useful bound"), "Threads in D",
     "Threads of the process in uninterruptible sleep (state D, mostly waiting on I/O) at the read."},
    {"proc__io_wchar.sum.per_second", T::counter, Unit::bytes_per_second, K::process, Source::procfs,
     PeakRule::unknown("syscall-level bytes have no device bound"), "Process writes",
     "Bytes written through syscalls (wchar), not block-device writes."},
    {"disk__read_bytes.sum.per_second", T::counter, Unit::bytes_per_second, K::device, Source::procfs,
     PeakRule::unknown("no /sys/block source gives a device's rated bandwidth"), "Disk read",
     "Bytes read from the block device per second."},
    {"disk__write_bytes.sum.per_second", T::counter, Unit::bytes_per_second, K::device, Source::procfs,
     PeakRule::unknown("no /sys/block source gives a device's rated bandwidth"), "Disk write",
     "Bytes written to the block device per second."},
    {"disk__inflight", T::counter, Unit::requests, K::device, Source::procfs,
     PeakRule::unknown("a queue depth has no useful bound"), "Disk requests in flight",
     "Requests issued to the device and not yet completed, reads and writes together (/proc/diskstats)."},
    {"disk__busy.pct", T::ratio, Unit::pct, K::device, Source::procfs, kPct, "Disk busy",
     "Share of wall time the device had at least one request in flight (/proc/diskstats io_ticks)."},
    {"disk__read_inflight", T::counter, Unit::requests, K::device, Source::procfs,
     PeakRule::unknown("a queue depth has no useful bound"), "Disk reads in flight", "Read requests queued."},
    {"disk__write_inflight", T::counter, Unit::requests, K::device, Source::procfs,
     PeakRule::unknown("a queue depth has no useful bound"), "Disk writes in flight",
     "Write requests queued."},
};

std::string format_number(double v) {
  return fmt::format("{:g}", v);  // as an ostream writes a double by default
}

}  // namespace

std::string_view to_string(Source source) {
  switch (source) {
    case Source::cupti:
      return "CUPTI";
    case Source::nvml:
      return "NVML";
    case Source::procfs:
      return "procfs";
    case Source::derived:
      return "derived";
  }
  return "?";
}

std::string describe(const PeakRule& rule) {
  switch (rule.kind) {
    case PeakRule::Kind::fixed:
      return format_number(rule.value);
    case PeakRule::Kind::per_cpu:
      return format_number(rule.value) + " per logical CPU";
    case PeakRule::Kind::metric:
      return std::string(rule.metric);
    case PeakRule::Kind::none:
      return "none: " + std::string(rule.reason);
  }
  return "?";
}

std::span<const CatalogEntry> catalog() {
  return kCatalog;
}

const CatalogEntry* find_metric(std::string_view name) {
  for (const CatalogEntry& entry : kCatalog) {
    if (entry.name == name) return &entry;
  }
  return nullptr;
}

std::vector<std::string_view> closest_metric_names(std::string_view name, std::size_t limit) {
  std::vector<std::pair<std::size_t, std::string_view>> scored;
  for (const CatalogEntry& entry : kCatalog) {
    std::size_t d = core::edit_distance(name, entry.name);
    if (2 * d <= name.size()) scored.emplace_back(d, entry.name);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string_view> out;
  for (std::size_t i = 0; i < scored.size() && i < limit; ++i) out.push_back(scored[i].second);
  return out;
}

Expected<const CatalogEntry*> lookup_metric(std::string_view name) {
  if (const CatalogEntry* entry = find_metric(name)) return entry;
  auto parsed = parse_metric_name(name);
  std::string reason = parsed ? "unknown metric \"" + std::string(name) + "\"" : parsed.reason();
  auto near = closest_metric_names(name);
  if (!near.empty()) {
    reason += "; closest known: ";
    for (std::size_t i = 0; i < near.size(); ++i) reason += (i ? ", " : "") + std::string(near[i]);
  } else if (parsed) {
    reason += "; docs/metrics.md lists the known names";
  }
  return MetricError{reason};
}

Expected<MetricDescriptor> describe_metric(std::string_view name, const Scope& scope,
                                           const PeakInputs& inputs) {
  auto found = lookup_metric(name);
  if (!found) return found.error();
  const CatalogEntry& entry = **found;
  // cpu__ metrics come for all CPUs (system) or for one logical CPU (docs/metrics.md#names).
  const bool one_cpu = scope.kind == K::cpu && entry.scope == K::system && entry.name.starts_with("cpu__");
  if (scope.kind != entry.scope && !one_cpu) {
    return MetricError{"metric \"" + std::string(name) + "\" comes with " +
                       std::string(to_string(entry.scope)) + " scope, not " +
                       std::string(to_string(scope.kind))};
  }
  MetricDescriptor d;
  d.name = *parse_metric_name(entry.name, entry.type);  // the catalog test keeps every entry legal
  d.type = entry.type;
  d.unit = entry.unit;
  d.scope = scope;
  switch (entry.peak.kind) {
    case PeakRule::Kind::fixed:
      d.peak = entry.peak.value;
      break;
    case PeakRule::Kind::per_cpu:
      if (inputs.logical_cpus > 0) {
        d.peak = entry.peak.value * inputs.logical_cpus;
      } else {
        d.no_peak_reason = "the number of logical CPUs is not known";
      }
      break;
    case PeakRule::Kind::metric:
      if (auto it = inputs.readings.find(entry.peak.metric);
          it != inputs.readings.end() && std::isfinite(it->second) && it->second > 0) {
        d.peak = it->second;
      } else {
        d.no_peak_reason = "its peak is " + std::string(entry.peak.metric) + ", which has no reading";
      }
      break;
    case PeakRule::Kind::none:
      d.no_peak_reason = entry.peak.reason;
      break;
  }
  return d;
}

std::string catalog_markdown_table() {
  std::string out =
      "| name | label | type | unit | peak | scope | source | what it is |\n"
      "| --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (const CatalogEntry& e : kCatalog) {
    out += "| `" + std::string(e.name) + "` | " + std::string(e.label) + " | " +
           std::string(to_string(e.type)) + " | " + std::string(to_string(e.unit)) + " | " +
           describe(e.peak) + " | " + std::string(to_string(e.scope)) + " | " +
           std::string(to_string(e.source)) + " | " + std::string(e.note) + " |\n";
  }
  return out;
}

}  // namespace diescope::metrics
