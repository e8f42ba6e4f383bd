// The host probes (docs/method.md#host-probes). One read() per host interval: /proc/stat,
// /proc/meminfo, /proc/diskstats, and every process of the measured command's tree. What one read
// costs, and why the system files stay open and the tree is followed through its children files:
// docs/method.md#what-the-probes-cost.
#include "diescope/collect/host_probes.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "diescope/core/error.hpp"
#include "diescope/core/unique_fd.hpp"
#include "diescope/metrics/catalog.hpp"

namespace diescope::collect {
namespace {

using recording::HostValue;
using recording::TimeNs;
using Scope = metrics::Scope;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kSectorBytes = 512;  // /proc/diskstats counts 512-byte sectors whatever the device

constexpr const char* kBusy = "cpu__cycles_busy.avg.pct_of_peak_sustained_elapsed";
constexpr const char* kUser = "cpu__cycles_user.avg.pct_of_peak_sustained_elapsed";
constexpr const char* kKernel = "cpu__cycles_kernel.avg.pct_of_peak_sustained_elapsed";
constexpr const char* kIowait = "cpu__cycles_iowait.avg.pct_of_peak_sustained_elapsed";

// A read of a /proc file shorter than this reached the file's end: the kernel's seq_file fills a read
// to at least a page (4096 bytes) less the longest line these files have unless the file ends there,
// so the read that would return nothing is not made (docs/method.md#what-the-probes-cost).
constexpr ssize_t kShortReadIsEnd = 4096 - 512;

// Reads a small /proc file whole into `out`; false (with errno kept) when it cannot be read. A short
// read is its end (kShortReadIsEnd).
bool read_file(const std::filesystem::path& path, std::string& out) {
  out.clear();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      errno = err;
      return false;
    }
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
    if (n < kShortReadIsEnd) break;
  }
  ::close(fd);
  return true;
}

// A /proc file kept open from one read to the next and read again from its start (pread at offset 0
// has the kernel produce it anew): an open and a close fewer per read.
class KeptFile {
 public:
  // The whole file into `out`; false (with errno kept) when it cannot be opened or read. A failed
  // read closes it, so the next read opens it again.
  bool read(const std::filesystem::path& path, std::string& out) {
    out.clear();
    if (!fd_) {
      fd_ = core::UniqueFd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
      if (!fd_) return false;
    }
    char buf[16384];
    for (off_t at = 0;;) {
      const ssize_t n = ::pread(fd_.get(), buf, sizeof buf, at);
      if (n < 0) {
        if (errno == EINTR) continue;
        const int err = errno;
        fd_.reset();
        errno = err;
        return false;
      }
      if (n == 0) break;
      out.append(buf, static_cast<std::size_t>(n));
      at += n;
      if (n < kShortReadIsEnd) break;
    }
    return true;
  }
  void close() { fd_.reset(); }

 private:
  core::UniqueFd fd_;
};

// The pids in /proc/PID/task/TID/children of every thread of `pid` (its child processes), appended
// to `out`. False when the process's task folder cannot be listed (it exited). `children` is set to
// false when a thread has no children file (a kernel without CONFIG_PROC_CHILDREN).
bool child_pids(const std::filesystem::path& proc, std::int64_t pid, std::string& text,
                std::vector<std::int64_t>& out, bool& children);

// The numeric entries of a /proc-like folder (pids, or a process's thread ids).
std::vector<std::int64_t> numeric_entries(const std::filesystem::path& dir) {
  std::vector<std::int64_t> out;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return out;
  while (const dirent* e = ::readdir(d)) {
    std::int64_t id = 0;
    const std::string_view name(e->d_name);
    const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), id);
    if (ec == std::errc{} && end == name.data() + name.size() && id > 0) out.push_back(id);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

bool child_pids(const std::filesystem::path& proc, std::int64_t pid, std::string& text,
                std::vector<std::int64_t>& out, bool& children) {
  const std::filesystem::path dir = proc / std::to_string(pid) / "task";
  const std::vector<std::int64_t> tids = numeric_entries(dir);
  if (tids.empty()) return false;
  for (const std::int64_t tid : tids) {
    if (!read_file(dir / std::to_string(tid) / "children", text)) {
      if (errno == ENOENT && !std::filesystem::exists(dir / std::to_string(tid))) continue;  // it exited
      if (errno == ENOENT) children = false;
      continue;
    }
    const char* at = text.data();
    const char* const end = text.data() + text.size();
    while (at < end) {
      std::int64_t child = 0;
      const auto [next, ec] = std::from_chars(at, end, child);
      if (ec == std::errc{}) {
        if (child > 0) out.push_back(child);
        at = next;
      } else {
        ++at;  // the separating space, or anything else the file holds
      }
    }
  }
  return true;
}

double pct(std::uint64_t part, std::uint64_t whole) {
  return whole == 0 ? kNaN : 100.0 * static_cast<double>(part) / static_cast<double>(whole);
}

// Unsigned counters can step back (a CPU going offline and back resets its line): no rate then.
std::uint64_t delta(std::uint64_t now, std::uint64_t before) {
  return now >= before ? now - before : 0;
}

bool is_whole_device(const std::string& name, const std::filesystem::path& sys_block, bool have_sys_block) {
  if (name.starts_with("loop") || name.starts_with("ram") || name.starts_with("zram")) return false;
  if (!have_sys_block) return true;
  std::error_code ec;
  return std::filesystem::exists(sys_block / name, ec);
}

}  // namespace

struct HostProbes::State {
  HostProbeOptions opt;
  long page_bytes = 4096;
  std::uint64_t ns_per_tick = 10'000'000;
  std::string text;  // reused read buffer
  std::int64_t next_id = 0;
  KeptFile stat_file, meminfo_file, diskstats_file, delayacct_file;
  metrics::PeakInputs peaks;
  bool have_prev = false;
  TimeNs prev_mono = 0;

  // CPU
  bool cpu_declared = false;
  std::int64_t id_busy = -1, id_user = -1, id_kernel = -1, id_iowait = -1;
  std::map<int, std::int64_t> core_ids;
  std::map<int, CpuJiffies> prev_cpu;  // by cpu (-1: all)

  // Memory
  bool mem_declared = false;
  std::int64_t id_capacity = -1, id_available = -1, id_used = -1, id_cached = -1, id_buffers = -1;

  // Disks
  struct Disk {
    DiskStat first, prev;
    bool declared = false;
    std::int64_t id_read = -1, id_write = -1, id_inflight = -1, id_busy = -1;
  };
  std::map<std::string, Disk> disks;
  bool have_sys_block = false;

  // Processes: every pid seen (for its parent), and the tree's own state.
  struct Known {
    std::int64_t ppid = 0;
    bool in_tree = false;
  };
  std::unordered_map<std::int64_t, Known> known;
  // How the tree is found (docs/method.md#what-the-probes-cost): through the children files from the
  // root down, or, where the kernel has none, by reading every pid's parent in /proc.
  enum class TreeSource { unknown, children, scan };
  TreeSource tree_source = TreeSource::unknown;
  std::vector<std::int64_t> tree;  // the tree's pids at the previous read (children source)
  struct Proc {
    std::int64_t id_cpu = -1, id_thread = -1, id_threads = -1, id_rss = -1, id_rchar = -1, id_wchar = -1;
    std::int64_t id_read_bytes = -1, id_kernel = -1, id_blocked = -1, id_threads_blocked = -1;
    std::unordered_map<std::int64_t, std::uint64_t> thread_ns;     // by tid, at the previous read
    std::unordered_map<std::int64_t, std::uint64_t> thread_blkio;  // delayacct_blkio_ticks, by tid
    std::uint64_t prev_kernel_ticks = 0;
    bool have_prev = false;
    TimeNs prev_mono = 0;
    PidIo prev_io;
    bool prev_io_ok = false;
    bool io_noted = false;
    std::string comm;
  };
  std::map<std::int64_t, Proc> procs;

  std::int64_t declare(HostBatch& batch, TimeNs now, std::string_view name, const Scope& scope) {
    auto d = metrics::describe_metric(name, scope, peaks);
    if (!d)
      throw core::Error("host probe stream " + std::string(name) + ": " + d.reason(),
                        "this is a bug in the host probes; please report it", core::kExitInternal);
    const std::int64_t id = next_id++;
    batch.streams.push_back(recording::HostStream{now, id, *d});
    return id;
  }

  void read_cpu(HostBatch& batch, TimeNs now, std::vector<HostValue>& values);
  void read_memory(HostBatch& batch, TimeNs now, std::vector<HostValue>& values);
  void read_disks(HostBatch& batch, TimeNs now, double elapsed_s, std::vector<HostValue>& values);
  void read_processes(HostBatch& batch, TimeNs now, TimeNs mono, std::int64_t root,
                      std::vector<HostValue>& values);
  std::vector<std::int64_t> tree_by_children(std::int64_t root);
  std::vector<std::int64_t> tree_by_scan(std::int64_t root);
  void close_files() {
    stat_file.close();
    meminfo_file.close();
    diskstats_file.close();
    delayacct_file.close();
  }
};

void HostProbes::State::read_cpu(HostBatch& batch, TimeNs now, std::vector<HostValue>& values) {
  if (!stat_file.read(opt.proc / "stat", text)) return;
  const std::vector<CpuJiffies> cpus = parse_proc_stat(text);
  if (cpus.empty() || cpus.front().cpu != -1) return;
  if (!cpu_declared) {
    peaks.logical_cpus = static_cast<int>(cpus.size()) - 1;
    id_busy = declare(batch, now, kBusy, Scope::system());
    id_user = declare(batch, now, kUser, Scope::system());
    id_kernel = declare(batch, now, kKernel, Scope::system());
    id_iowait = declare(batch, now, kIowait, Scope::system());
    for (std::size_t i = 1; i < cpus.size(); ++i)
      core_ids[cpus[i].cpu] = declare(batch, now, kBusy, Scope::cpu(cpus[i].cpu));
    cpu_declared = true;
  }
  for (const CpuJiffies& j : cpus) {
    const auto before = prev_cpu.find(j.cpu);
    if (before != prev_cpu.end()) {
      const CpuJiffies& b = before->second;
      const std::uint64_t total = delta(j.total(), b.total());
      // No jiffy passed (an interval shorter than the kernel's tick): no value rather than 0.
      if (total > 0) {
        if (j.cpu == -1) {
          values.push_back({id_busy, pct(delta(j.busy(), b.busy()), total)});
          values.push_back({id_user, pct(delta(j.user + j.nice, b.user + b.nice), total)});
          values.push_back(
              {id_kernel, pct(delta(j.system + j.irq + j.softirq, b.system + b.irq + b.softirq), total)});
          values.push_back({id_iowait, pct(delta(j.iowait, b.iowait), total)});
        } else if (const auto id = core_ids.find(j.cpu); id != core_ids.end()) {
          values.push_back({id->second, pct(delta(j.busy(), b.busy()), total)});
        }
      }
    }
    prev_cpu[j.cpu] = j;
  }
}

void HostProbes::State::read_memory(HostBatch& batch, TimeNs now, std::vector<HostValue>& values) {
  if (!meminfo_file.read(opt.proc / "meminfo", text)) return;
  const MemInfo m = parse_meminfo(text);
  if (!mem_declared) {
    if (std::isfinite(m.total)) peaks.readings["mem__capacity_bytes"] = m.total;
    id_capacity = declare(batch, now, "mem__capacity_bytes", Scope::system());
    id_available = declare(batch, now, "mem__available_bytes", Scope::system());
    id_used = declare(batch, now, "mem__used_bytes", Scope::system());
    id_cached = declare(batch, now, "mem__cached_bytes", Scope::system());
    id_buffers = declare(batch, now, "mem__buffers_bytes", Scope::system());
    mem_declared = true;
  }
  values.push_back({id_capacity, m.total});
  values.push_back({id_available, m.available});
  values.push_back({id_used, m.total - m.available});  // NaN when either is missing
  values.push_back({id_cached, m.cached});
  values.push_back({id_buffers, m.buffers});
}

void HostProbes::State::read_disks(HostBatch& batch, TimeNs now, double elapsed_s,
                                   std::vector<HostValue>& values) {
  if (!diskstats_file.read(opt.proc / "diskstats", text)) return;
  for (const DiskStat& d : parse_diskstats(text)) {
    auto it = disks.find(d.name);
    if (it == disks.end()) {
      if (!is_whole_device(d.name, opt.sys_block, have_sys_block)) continue;
      it = disks.emplace(d.name, Disk{d, d, false}).first;
      continue;  // a rate needs a second read
    }
    Disk& disk = it->second;
    // Only devices that moved during the run get streams: a host lists many idle ones.
    if (!disk.declared && (d.sectors_read != disk.first.sectors_read ||
                           d.sectors_written != disk.first.sectors_written || d.in_flight > 0)) {
      const Scope scope = Scope::block_device(d.name);
      disk.id_read = declare(batch, now, "disk__read_bytes.sum.per_second", scope);
      disk.id_write = declare(batch, now, "disk__write_bytes.sum.per_second", scope);
      disk.id_inflight = declare(batch, now, "disk__inflight", scope);
      disk.id_busy = declare(batch, now, "disk__busy.pct", scope);
      disk.declared = true;
    }
    if (disk.declared && elapsed_s > 0) {
      values.push_back({disk.id_read, static_cast<double>(delta(d.sectors_read, disk.prev.sectors_read)) *
                                          kSectorBytes / elapsed_s});
      values.push_back(
          {disk.id_write, static_cast<double>(delta(d.sectors_written, disk.prev.sectors_written)) *
                              kSectorBytes / elapsed_s});
      values.push_back({disk.id_inflight, static_cast<double>(d.in_flight)});
      values.push_back({disk.id_busy, std::min(100.0, static_cast<double>(delta(d.io_ms, disk.prev.io_ms)) /
                                                          (elapsed_s * 1000) * 100)});
    }
    disk.prev = d;
  }
}

void HostProbes::State::read_processes(HostBatch& batch, TimeNs now, TimeNs mono, std::int64_t root,
                                       std::vector<HostValue>& values) {
  // Delay accounting (kernel.task_delayacct, off by default since Linux 5.14): when it is off or the
  // switch is missing, field 42 of a thread's stat reads 0 whatever the thread waited, so the blocked
  // time is not known (docs/method.md#host-probes).
  const bool delay_accounting = delayacct_file.read(opt.proc / "sys/kernel/task_delayacct", text) &&
                                !text.empty() && text.front() == '1';
  // Which pids are in the tree: the root, and every pid whose parent is, found through the children
  // files where the kernel has them (docs/method.md#host-probes).
  if (tree_source == TreeSource::unknown) {
    std::vector<std::int64_t> ignored;
    bool children = true;
    if (child_pids(opt.proc, root, text, ignored, children))
      tree_source = children ? TreeSource::children : TreeSource::scan;
  }
  const std::vector<std::int64_t> pids =
      tree_source == TreeSource::children ? tree_by_children(root) : tree_by_scan(root);

  for (auto it = procs.begin(); it != procs.end();) {  // exited
    it = std::binary_search(pids.begin(), pids.end(), it->first) ? std::next(it) : procs.erase(it);
  }
  for (std::int64_t pid : pids) {  // in pid order, so stream ids do not depend on hashing
    const std::filesystem::path dir = opt.proc / std::to_string(pid);
    if (!read_file(dir / "stat", text)) continue;
    const auto st = parse_pid_stat(text);
    if (!st || st->state == 'Z') continue;  // a zombie has no threads to read
    auto [pit, is_new] = procs.try_emplace(pid);
    Proc& p = pit->second;
    // A new name is an exec (the command itself is read first as diescope's fork): a task line again.
    if (is_new || st->comm != p.comm)
      batch.tasks.push_back(recording::HostTask{now, pid, st->ppid, st->comm});
    p.comm = st->comm;
    if (is_new) {
      const Scope scope = Scope::process(pid);
      p.id_cpu = declare(batch, now, "proc__cycles_active.sum.per_second", scope);
      p.id_thread = declare(batch, now, "proc__thread_cycles_active.max.per_second", scope);
      p.id_threads = declare(batch, now, "proc__threads", scope);
      p.id_rss = declare(batch, now, "proc__rss_bytes", scope);
      p.id_rchar = declare(batch, now, "proc__io_rchar.sum.per_second", scope);
      p.id_wchar = declare(batch, now, "proc__io_wchar.sum.per_second", scope);
      p.id_read_bytes = declare(batch, now, "proc__io_read_bytes.sum.per_second", scope);
      p.id_kernel = declare(batch, now, "proc__cycles_kernel.sum.per_second", scope);
      p.id_blocked = declare(batch, now, "proc__io_blocked.sum.per_second", scope);
      p.id_threads_blocked = declare(batch, now, "proc__threads_blocked", scope);
    }
    // CPU: every thread's schedstat; a thread that appeared since the previous read ran only
    // within the interval, so all its time counts.
    std::unordered_map<std::int64_t, std::uint64_t> threads, blkio;
    std::uint64_t sum = 0, busiest = 0, blkio_ticks = 0;
    int blocked_threads = 0;
    bool blkio_all = true;
    for (std::int64_t tid : numeric_entries(dir / "task")) {
      const std::filesystem::path task = dir / "task" / std::to_string(tid);
      // The thread's state (D: waiting uninterruptibly, mostly on I/O) and its block-I/O delay
      // (docs/method.md#host-probes).
      std::optional<PidStat> ts;
      if (read_file(task / "stat", text)) ts = parse_pid_stat(text);
      if (ts && ts->state == 'D') ++blocked_threads;
      if (ts && ts->blkio_ticks) {
        blkio.emplace(tid, *ts->blkio_ticks);
        const auto before = p.thread_blkio.find(tid);
        blkio_ticks +=
            before == p.thread_blkio.end() ? *ts->blkio_ticks : delta(*ts->blkio_ticks, before->second);
      } else {
        blkio_all = false;
      }
      std::optional<std::uint64_t> ns;
      if (read_file(task / "schedstat", text)) ns = parse_schedstat(text);
      // Without schedstat (a kernel built without it): the thread's user and system ticks.
      if (!ns && ts) ns = ts->cpu_ticks * ns_per_tick;
      if (!ns) continue;
      threads.emplace(tid, *ns);
      if (!p.have_prev) continue;
      const auto before = p.thread_ns.find(tid);
      const std::uint64_t d = before == p.thread_ns.end() ? *ns : delta(*ns, before->second);
      sum += d;
      busiest = std::max(busiest, d);
    }
    const double elapsed_ns = static_cast<double>(mono - p.prev_mono);
    const bool rate = p.have_prev && elapsed_ns > 0;
    if (rate && !threads.empty()) {
      values.push_back({p.id_cpu, static_cast<double>(sum) / elapsed_ns * 100});
      values.push_back({p.id_thread, std::min(100.0, static_cast<double>(busiest) / elapsed_ns * 100)});
    }
    values.push_back({p.id_threads, static_cast<double>(st->threads)});
    values.push_back({p.id_threads_blocked, static_cast<double>(blocked_threads)});
    if (rate) {
      // Kernel time: the process's stime (all threads), in clock ticks.
      values.push_back({p.id_kernel, static_cast<double>(delta(st->kernel_ticks, p.prev_kernel_ticks)) *
                                         static_cast<double>(ns_per_tick) / elapsed_ns * 100});
      // Blocked on I/O: NaN unless the kernel's delay accounting is on (its ticks read 0 when off).
      values.push_back({p.id_blocked, delay_accounting && blkio_all
                                          ? static_cast<double>(blkio_ticks) *
                                                static_cast<double>(ns_per_tick) / elapsed_ns * 100
                                          : kNaN});
    }
    p.prev_kernel_ticks = st->kernel_ticks;
    p.thread_blkio = std::move(blkio);
    values.push_back({p.id_rss, static_cast<double>(st->rss_pages) * static_cast<double>(page_bytes)});
    // I/O: another user's process reads EACCES; NaN then, and a note once.
    std::optional<PidIo> io;
    if (read_file(dir / "io", text)) {
      io = parse_pid_io(text);
    } else if (!p.io_noted) {
      batch.notes.push_back(
          recording::Note{now, "host_probes",
                          fmt::format("/proc/{}/io ({}) cannot be read: {}; its I/O rates are NaN", pid,
                                      st->comm, std::strerror(errno))});
      p.io_noted = true;
    }
    if (rate) {
      const double s = elapsed_ns / 1e9;
      const bool both = io && p.prev_io_ok;
      values.push_back(
          {p.id_rchar, both ? static_cast<double>(delta(io->rchar, p.prev_io.rchar)) / s : kNaN});
      values.push_back(
          {p.id_wchar, both ? static_cast<double>(delta(io->wchar, p.prev_io.wchar)) / s : kNaN});
      const bool storage = both && io->read_bytes && p.prev_io.read_bytes;
      values.push_back(
          {p.id_read_bytes,
           storage ? static_cast<double>(delta(*io->read_bytes, *p.prev_io.read_bytes)) / s : kNaN});
    }
    p.prev_io_ok = io.has_value();
    if (io) p.prev_io = *io;
    p.thread_ns = std::move(threads);
    p.have_prev = true;
    p.prev_mono = mono;
  }
}

// The tree through the children files: the root, the pids that were in the tree at the previous read
// and are still there (a process whose parent exited stays in the tree, as with the scan), and every
// child of those, down. Reads only the tree's own processes, whatever else the host runs. Ascending.
std::vector<std::int64_t> HostProbes::State::tree_by_children(std::int64_t root) {
  std::vector<std::int64_t> todo = tree;
  todo.push_back(root);
  std::set<std::int64_t> found;
  std::vector<std::int64_t> kids;
  bool children = true;
  while (!todo.empty()) {
    const std::int64_t pid = todo.back();
    todo.pop_back();
    if (found.contains(pid)) continue;
    kids.clear();
    if (!child_pids(opt.proc, pid, text, kids, children)) continue;  // exited
    found.insert(pid);
    todo.insert(todo.end(), kids.begin(), kids.end());
  }
  tree.assign(found.begin(), found.end());
  return tree;
}

// The tree by reading every pid's parent in /proc (kernels without the children files): a pid joins
// when its parent is in the tree, and stays while it runs. Ascending.
std::vector<std::int64_t> HostProbes::State::tree_by_scan(std::int64_t root) {
  const std::vector<std::int64_t> pids = numeric_entries(opt.proc);
  std::unordered_map<std::int64_t, Known> seen;
  seen.reserve(pids.size());
  std::vector<std::int64_t> fresh;
  for (std::int64_t pid : pids) {
    if (const auto k = known.find(pid); k != known.end()) {
      seen.emplace(pid, k->second);
      continue;
    }
    if (!read_file(opt.proc / std::to_string(pid) / "stat", text)) continue;  // it exited meanwhile
    const auto st = parse_pid_stat(text);
    if (!st) continue;
    seen.emplace(pid, Known{st->ppid, pid == root});
    fresh.push_back(pid);
  }
  // A child may be listed before its parent joins: repeat until nothing more joins.
  for (bool grew = true; grew;) {
    grew = false;
    for (std::int64_t pid : fresh) {
      Known& k = seen[pid];
      if (k.in_tree) continue;
      const auto parent = seen.find(k.ppid);
      if (parent != seen.end() && parent->second.in_tree) {
        k.in_tree = true;
        grew = true;
      }
    }
  }
  known = std::move(seen);
  std::vector<std::int64_t> in_tree;
  for (std::int64_t pid : pids)
    if (const auto k = known.find(pid); k != known.end() && k->second.in_tree) in_tree.push_back(pid);
  return in_tree;
}

HostProbes::HostProbes(HostProbeOptions options) : state_(std::make_unique<State>()) {
  state_->opt = std::move(options);
  state_->page_bytes = state_->opt.page_bytes > 0 ? state_->opt.page_bytes : ::sysconf(_SC_PAGESIZE);
  const long ticks = ::sysconf(_SC_CLK_TCK);
  if (ticks > 0) state_->ns_per_tick = 1'000'000'000ULL / static_cast<std::uint64_t>(ticks);
  std::error_code ec;
  state_->have_sys_block = std::filesystem::is_directory(state_->opt.sys_block, ec);
}

HostProbes::~HostProbes() = default;

void HostProbes::set_proc_root(std::filesystem::path proc) {
  state_->opt.proc = std::move(proc);
  state_->close_files();
  state_->tree_source = State::TreeSource::unknown;
}

HolderIdentity identify_gpu_holder(std::int64_t pid, std::int64_t command_pid, std::int64_t self_pid,
                                   const std::filesystem::path& proc) {
  HolderIdentity who;
  std::string text;
  std::int64_t at = pid;
  // A parent chain is short; the bound only guards against a /proc that loops.
  for (int depth = 0; depth < 256 && at > 0; ++depth) {
    if (command_pid > 0 && at == command_pid) {
      who.role = recording::HolderRole::command;
      break;
    }
    if (at == self_pid) {
      who.role = recording::HolderRole::diescope;
      break;
    }
    if (!read_file(proc / std::to_string(at) / "stat", text)) break;
    const std::optional<PidStat> st = parse_pid_stat(text);
    if (!st) break;
    if (at == pid) who.name = st->comm;
    if (st->ppid == at) break;
    at = st->ppid;
  }
  if (who.name.empty() && read_file(proc / std::to_string(pid) / "stat", text))
    if (const std::optional<PidStat> st = parse_pid_stat(text)) who.name = st->comm;
  return who;
}

std::vector<recording::GpuHolder> GpuHolderTracker::update(TimeNs now_ns, const std::vector<unsigned>& pids,
                                                           std::int64_t command_pid, std::int64_t self_pid) {
  std::vector<recording::GpuHolder> changes;
  const std::set<std::int64_t> now_set(pids.begin(), pids.end());
  for (const std::int64_t pid : current_)
    if (now_set.count(pid) == 0) changes.push_back({now_ns, pid, recording::HolderRole::gone, {}});
  for (const std::int64_t pid : now_set) {
    if (pid <= 0 || current_.count(pid) != 0) continue;
    HolderIdentity who = identify_gpu_holder(pid, command_pid, self_pid, proc_);
    changes.push_back({now_ns, pid, who.role, std::move(who.name)});
  }
  current_.clear();
  for (const std::int64_t pid : now_set)
    if (pid > 0) current_.insert(pid);
  return changes;
}

HostBatch HostProbes::read(TimeNs now_ns, TimeNs mono_ns, std::int64_t root_pid) {
  State& s = *state_;
  HostBatch batch;
  std::vector<HostValue>& values = batch.sample.values;
  const double elapsed_s = s.have_prev ? static_cast<double>(mono_ns - s.prev_mono) / 1e9 : 0;
  s.read_cpu(batch, now_ns, values);
  s.read_memory(batch, now_ns, values);
  s.read_disks(batch, now_ns, elapsed_s, values);
  if (root_pid > 0) s.read_processes(batch, now_ns, mono_ns, root_pid, values);
  std::sort(values.begin(), values.end(), [](const HostValue& a, const HostValue& b) { return a.id < b.id; });
  for (HostValue& v : values)
    if (std::isinf(v.value)) v.value = kNaN;  // never written: a recording refuses infinities
  batch.sample.ts_ns = now_ns;
  s.have_prev = true;
  s.prev_mono = mono_ns;
  ++reads_;
  return batch;
}

}  // namespace diescope::collect
