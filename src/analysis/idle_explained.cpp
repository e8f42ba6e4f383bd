// Stranded idle explained (docs/method.md#stranded-idle-explained): what the host was doing while
// the GPU idled, from the recording's host streams, and a verdict when the evidence is clear. Only
// the streams' descriptors and the tasks are used: no probe-specific knowledge.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>

#include "diescope/analysis/analyze.hpp"
#include "internal.hpp"

namespace diescope::analysis {
namespace {

using recording::TimeNs;

// A weighted mean: values with their weights; NaN values are left out. Deviations from the first
// value are summed, so a constant series has exactly its value as its mean (a threshold's edge
// holds as written).
struct Mean {
  double weight = 0;
  double sum = 0;
  double base = kNaN;
  void add(double w, double v) {
    if (!std::isfinite(v) || w <= 0) return;
    if (std::isnan(base)) base = v;
    weight += w;
    sum += w * (v - base);
  }
  double value() const { return weight > 0 ? base + sum / weight : kNaN; }
};

// What a stream is, for the figures; decided from its descriptor alone.
enum class Role {
  other,
  host_busy,
  host_iowait,
  mem_available,
  mem_capacity,
  disk_read,
  disk_write,
  disk_busy,
  proc_cpu,
  proc_thread,
  proc_threads,
  proc_read_bytes,
  proc_kernel,
  proc_blocked,
  proc_threads_blocked
};

Role role_of(const metrics::MetricDescriptor& d) {
  const std::string name = d.full_name();
  using K = metrics::Scope::Kind;
  if (d.scope.kind == K::system) {
    if (name == "cpu__cycles_busy.avg.pct_of_peak_sustained_elapsed") return Role::host_busy;
    if (name == "cpu__cycles_iowait.avg.pct_of_peak_sustained_elapsed") return Role::host_iowait;
    if (name == "mem__available_bytes") return Role::mem_available;
    if (name == "mem__capacity_bytes") return Role::mem_capacity;
  } else if (d.scope.kind == K::device) {
    if (name == "disk__read_bytes.sum.per_second") return Role::disk_read;
    if (name == "disk__write_bytes.sum.per_second") return Role::disk_write;
    if (name == "disk__busy.pct") return Role::disk_busy;
  } else if (d.scope.kind == K::process) {
    if (name == "proc__cycles_active.sum.per_second") return Role::proc_cpu;
    if (name == "proc__thread_cycles_active.max.per_second") return Role::proc_thread;
    if (name == "proc__threads") return Role::proc_threads;
    if (name == "proc__io_read_bytes.sum.per_second") return Role::proc_read_bytes;
    if (name == "proc__cycles_kernel.sum.per_second") return Role::proc_kernel;
    if (name == "proc__io_blocked.sum.per_second") return Role::proc_blocked;
    if (name == "proc__threads_blocked") return Role::proc_threads_blocked;
  }
  return Role::other;
}

struct StreamInfo {
  Role role = Role::other;
  std::int64_t pid = 0;  // process streams
  std::string device;    // disk streams
};

struct ProcMeans {
  Mean cpu, thread, threads;
};

// One process's I/O figures in one host sample (docs/method.md#stranded-idle-explained).
struct ProcIo {
  double read = kNaN, cpu = kNaN, kernel = kNaN, blocked = kNaN, threads_blocked = kNaN;
};

}  // namespace

IdleExplanation explain_idle(const recording::Recording& source, TimeNs span_start, TimeNs span_end,
                             double idle_points) {
  IdleExplanation x;
  x.idle_points = idle_points;
  const recording::SideRecords& side = source.side();
  if (side.host_streams.empty()) {
    x.why_not = IdleNotExplained::no_host_streams;
    return x;
  }

  // Streams by id, and the logical CPUs: a process's CPU peaks at 100 per logical CPU.
  std::unordered_map<std::int64_t, StreamInfo> streams;
  int cpu_streams = 0;
  for (const recording::HostStream& h : side.host_streams) {
    const metrics::MetricDescriptor& d = h.descriptor;
    StreamInfo info{role_of(d), d.scope.id, d.scope.device};
    streams.emplace(h.id, info);
    if (info.role == Role::proc_cpu && d.peak && x.logical_cpus == 0)
      x.logical_cpus = static_cast<int>(std::lround(*d.peak / 100));
    if (d.scope.kind == metrics::Scope::Kind::cpu) ++cpu_streams;
  }
  if (x.logical_cpus == 0) x.logical_cpus = cpu_streams;

  // The tree: the root is the task whose parent is not a task; the others are workers. A pid's
  // latest task line names it.
  std::set<std::int64_t> pids;
  std::map<std::int64_t, std::string> names;
  std::int64_t root = 0;
  for (const recording::HostTask& t : side.host_tasks) {
    pids.insert(t.pid);
    names[t.pid] = t.name;
  }
  for (const recording::HostTask& t : side.host_tasks)
    if (!pids.contains(t.ppid)) {
      root = t.pid;
      break;
    }

  // GPU-Util booked to time as for the headline, the spans that touch this one.
  std::vector<BookedUtil> util;
  {
    detail::UtilBooker booker(source.stream<recording::UtilSample>(), source.name());
    BookedUtil b;
    while (booker.next(b))
      if (b.hi > span_start && b.lo < span_end) util.push_back(b);
  }
  if (util.empty() || !std::isfinite(idle_points)) {
    x.why_not = IdleNotExplained::no_gpu_util;
    return x;
  }

  Mean host_busy, host_busy_b, iowait, mem_avail_pct, disk_read, disk_write, command, command_b, workers,
      worker_cores, worker_cores_b, own_read_all, own_io, own_reader;
  bool blocked_from_delay = false, blocked_from_states = false;
  double own_streams_idle = 0, own_reading_idle = 0;  // idle weight with storage figures, and reading
  std::vector<std::string> reader_names;
  std::map<std::string, Mean> disk_busy;
  std::map<std::int64_t, ProcMeans> procs;
  std::vector<std::string> worker_names;

  const double interval_ns =
      std::isfinite(source.meta().host_interval_ms) ? source.meta().host_interval_ms * 1e6 : 1e8;
  auto cursor = source.stream<recording::HostSample>();
  recording::HostSample sample;
  TimeNs prev = 0;
  bool have_prev = false;
  std::size_t u = 0;  // first booked GPU-Util span that may still overlap
  while (cursor->next(sample)) {
    const TimeNs lo_raw = have_prev ? prev : sample.ts_ns - static_cast<TimeNs>(interval_ns);
    prev = sample.ts_ns;
    have_prev = true;
    const TimeNs lo = std::max(lo_raw, span_start);
    const TimeNs hi = std::min(sample.ts_ns, span_end);
    if (hi <= lo) continue;
    // GPU-Util over [lo, hi).
    while (u < util.size() && util[u].hi <= lo) ++u;
    double weighted = 0;
    TimeNs covered = 0;
    for (std::size_t i = u; i < util.size() && util[i].lo < hi; ++i) {
      const TimeNs o = detail::overlap_ns(lo, hi, util[i].lo, util[i].hi);
      weighted += util[i].pct * static_cast<double>(o);
      covered += o;
    }
    const double length_s = detail::seconds(hi - lo);
    if (covered <= 0 ||
        static_cast<double>(covered) < kMinHostSampleUtilCoverage * static_cast<double>(hi - lo))
      continue;
    const double gpu_util = weighted / static_cast<double>(covered);
    const double w_idle = length_s * (1 - gpu_util / 100);
    const double w_busy = length_s * gpu_util / 100;
    x.idle_observed_s += w_idle;
    x.busy_observed_s += w_busy;

    double mem_available = kNaN, mem_capacity = kNaN, read = 0, write = 0, cmd = 0, wk = 0, n_workers = 0;
    bool any_disk = false, any_cpu = false;
    std::map<std::int64_t, ProcIo> io;
    for (const recording::HostValue& v : sample.values) {
      const auto it = streams.find(v.id);
      if (it == streams.end() || !std::isfinite(v.value)) continue;
      const StreamInfo& info = it->second;
      switch (info.role) {
        case Role::host_busy:
          host_busy.add(w_idle, v.value);
          host_busy_b.add(w_busy, v.value);
          break;
        case Role::host_iowait:
          iowait.add(w_idle, v.value);
          break;
        case Role::mem_available:
          mem_available = v.value;
          break;
        case Role::mem_capacity:
          mem_capacity = v.value;
          break;
        case Role::disk_read:
          read += v.value;
          any_disk = true;
          break;
        case Role::disk_write:
          write += v.value;
          any_disk = true;
          break;
        case Role::disk_busy:
          disk_busy[info.device].add(w_idle, v.value);
          break;
        case Role::proc_read_bytes:
          if (pids.contains(info.pid)) io[info.pid].read = v.value;
          break;
        case Role::proc_kernel:
          if (pids.contains(info.pid)) io[info.pid].kernel = v.value / 100;
          break;
        case Role::proc_blocked:
          if (pids.contains(info.pid)) io[info.pid].blocked = v.value / 100;
          break;
        case Role::proc_threads_blocked:
          if (pids.contains(info.pid)) io[info.pid].threads_blocked = v.value;
          break;
        case Role::proc_cpu:
          if (!pids.contains(info.pid)) break;
          io[info.pid].cpu = v.value / 100;
          any_cpu = true;
          cmd += v.value / 100;
          procs[info.pid].cpu.add(w_idle, v.value / 100);
          if (info.pid != root) {
            wk += v.value / 100;
            n_workers += 1;
            const std::string& name = names[info.pid];
            if (std::find(worker_names.begin(), worker_names.end(), name) == worker_names.end())
              worker_names.push_back(name);
          }
          break;
        case Role::proc_thread:
          procs[info.pid].thread.add(w_idle, v.value);
          break;
        case Role::proc_threads:
          procs[info.pid].threads.add(w_idle, v.value);
          break;
        case Role::other:
          break;
      }
    }
    // The command's own I/O: a sample in which its processes read at least kOwnReadMinBytesPerS from
    // storage, or had at least kOwnBlockedMinThreads threads blocked on I/O, is an I/O sample; in it
    // the kernel and blocked time of the processes that read or waited count. Blocked time is delay
    // accounting's where it is on, else the threads in D at the read (an instant's count stands for
    // the interval's mean). Reads are accounted when they are issued, so a process waiting on a slow
    // device shows blocked time in samples where it reads nothing.
    {
      double storage = 0, blocked_all = 0;
      bool any_read = false;
      auto blocked_of = [](const ProcIo& f) {
        return std::isfinite(f.blocked)           ? f.blocked
               : std::isfinite(f.threads_blocked) ? f.threads_blocked
                                                  : 0.0;
      };
      for (const auto& [pid, f] : io) {
        const double blocked = blocked_of(f);
        if (!std::isfinite(f.read)) continue;
        any_read = true;
        storage += f.read;
        blocked_all += blocked;
      }
      if (any_read) {
        own_streams_idle += w_idle;
        own_read_all.add(w_idle, storage);
        if (storage >= kOwnReadMinBytesPerS || blocked_all >= kOwnBlockedMinThreads) {
          own_reading_idle += w_idle;
          double io_cores = 0, reader_cores = 0;
          for (const auto& [pid, f] : io) {
            const double blocked = blocked_of(f);
            if (!(f.read > 0) && !(blocked > 0)) continue;
            if (w_idle > 0 && std::isfinite(f.blocked))
              blocked_from_delay = true;
            else if (w_idle > 0 && std::isfinite(f.threads_blocked))
              blocked_from_states = true;
            io_cores += (std::isfinite(f.kernel) ? f.kernel : 0) + blocked;
            reader_cores += (std::isfinite(f.cpu) ? f.cpu : 0) + blocked;
            const std::string& name = names[pid];
            if (std::find(reader_names.begin(), reader_names.end(), name) == reader_names.end())
              reader_names.push_back(name);
          }
          own_io.add(w_idle, io_cores);
          own_reader.add(w_idle, reader_cores);
        }
      }
    }
    if (std::isfinite(mem_available) && mem_capacity > 0)
      mem_avail_pct.add(w_idle, mem_available / mem_capacity * 100);
    if (any_disk) {
      disk_read.add(w_idle, read);
      disk_write.add(w_idle, write);
    }
    if (any_cpu) {
      command.add(w_idle, cmd);
      command_b.add(w_busy, cmd);
      // Over the same samples as the count, so cores and capacity compare like with like.
      workers.add(w_idle, n_workers);
      worker_cores.add(w_idle, wk);
      worker_cores_b.add(w_busy, wk);
    }
  }

  x.host_cpu_busy_pct = host_busy.value();
  x.host_cpu_busy_pct_busy = host_busy_b.value();
  x.iowait_pct = iowait.value();
  x.memory_available_pct = mem_avail_pct.value();
  x.disk_read_bytes_per_s = disk_read.value();
  x.disk_write_bytes_per_s = disk_write.value();
  for (const auto& [device, mean] : disk_busy) {
    const double v = mean.value();
    if (std::isfinite(v) && !(v <= x.disk_busy_max_pct)) {
      x.disk_busy_max_pct = v;
      x.busiest_disk = device;
    }
  }
  x.own_read_share = own_streams_idle > 0 ? own_reading_idle / own_streams_idle : kNaN;
  x.own_read_bytes_per_s = own_read_all.value();
  x.own_io_cores = own_io.value();
  x.own_reader_cores = own_reader.value();
  x.own_blocked_from = blocked_from_delay    ? IdleExplanation::Blocked::delay_accounting
                       : blocked_from_states ? IdleExplanation::Blocked::thread_states
                                             : IdleExplanation::Blocked::not_seen;
  x.reader_names = reader_names;
  x.command_cores = command.value();
  x.command_cores_busy = command_b.value();
  x.workers = workers.value();
  if (std::isfinite(x.workers) && x.workers > 0) {
    x.worker_cores = worker_cores.value();
    x.worker_cores_busy = worker_cores_b.value();
    // Each worker can use one core; never more cores than the host has.
    x.worker_capacity_cores =
        x.logical_cpus > 0 ? std::min(x.workers, static_cast<double>(x.logical_cpus)) : x.workers;
    x.worker_names = worker_names;
  }
  auto describe = [&](std::int64_t pid, const ProcMeans& m) {
    return IdleProcess{pid, names.count(pid) ? names[pid] : std::string(), m.cpu.value(), m.threads.value(),
                       m.thread.value()};
  };
  for (const auto& [pid, m] : procs) {
    const double cores = m.cpu.value();
    if (std::isfinite(cores) && (!x.busiest || cores > x.busiest->cores)) x.busiest = describe(pid, m);
    const double thread = m.thread.value();
    if (std::isfinite(thread) &&
        (!x.busiest_thread_owner || thread > x.busiest_thread_owner->busiest_thread_pct))
      x.busiest_thread_owner = describe(pid, m);
    if (pid == root) x.root = describe(pid, m);
  }

  // The verdict: the first rule that holds (docs/method.md#stranded-idle-explained).
  if (idle_points < kMinIdlePointsToExplain) {
    x.why_not = IdleNotExplained::idle_too_small;
    return x;
  }
  if (x.idle_observed_s < kMinIdleSecondsObserved) {
    x.why_not = IdleNotExplained::too_little_idle_observed;
    return x;
  }
  x.why_not = IdleNotExplained::none;
  if (x.own_read_bytes_per_s >= kOwnReadMinBytesPerS && x.own_read_share >= kOwnReadMinIdleShare &&
      x.own_io_cores >= kOwnIoMinCores && x.own_io_cores >= kOwnIoMinShare * x.own_reader_cores)
    x.verdict = IdleVerdict::own_io_bound;
  else if (x.worker_capacity_cores >= 1 &&
           x.worker_cores >= kLoaderSaturatedPct / 100 * x.worker_capacity_cores)
    x.verdict = IdleVerdict::input_bound;
  else if (x.busiest_thread_owner && x.busiest_thread_owner->busiest_thread_pct >= kOneThreadBoundPct)
    x.verdict = IdleVerdict::one_thread_bound;
  else if (x.host_cpu_busy_pct >= kHostCpuSaturatedPct)
    x.verdict = IdleVerdict::host_cpu_saturated;
  else if (x.iowait_pct >= kIoWaitBoundPct || x.disk_busy_max_pct >= kDiskBusyBoundPct)
    x.verdict = IdleVerdict::io_bound;
  else if (x.memory_available_pct < kLowMemoryAvailablePct)
    x.verdict = IdleVerdict::memory_pressure;
  else
    x.verdict = IdleVerdict::no_clear_cause;
  return x;
}

}  // namespace diescope::analysis
