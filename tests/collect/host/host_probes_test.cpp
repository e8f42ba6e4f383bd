// The host probes (docs/method.md#host-probes) on fixture /proc trees: fixtures/t0 and fixtures/t1
// are two reads 100 ms apart. Every expected value is worked out from the fixture files by hand.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <vector>

#include "diescope/collect/host_probes.hpp"

namespace diescope {
namespace {

namespace fs = std::filesystem;
using collect::HostBatch;

const fs::path kFixtures = fs::path(DIESCOPE_SOURCE_DIR) / "tests/collect/host/fixtures";
constexpr recording::TimeNs kT0 = 1'796'130'000'000'000'000;
constexpr recording::TimeNs kMono0 = 1'000'000'000;
constexpr recording::TimeNs kStep = 100'000'000;  // 100 ms between the two reads

// Values of one read by (name, scope word), with every declaration seen so far.
class Reads {
 public:
  void add(const HostBatch& b) {
    for (const auto& s : b.streams) {
      ASSERT_FALSE(names_.contains(s.id)) << "id declared twice: " << s.id;
      names_[s.id] = key(s.descriptor.full_name(), metrics::scope_word(s.descriptor.scope));
      descriptors_[names_[s.id]] = s.descriptor;
    }
    last_.clear();
    std::int64_t prev = -1;
    for (const auto& v : b.sample.values) {
      EXPECT_GT(v.id, prev) << "ids must ascend";
      prev = v.id;
      ASSERT_TRUE(names_.contains(v.id)) << "value for undeclared id " << v.id;
      last_[names_[v.id]] = v.value;
    }
  }
  bool has(const std::string& name, const std::string& scope) const {
    return last_.contains(key(name, scope));
  }
  double at(const std::string& name, const std::string& scope) const {
    const auto it = last_.find(key(name, scope));
    EXPECT_NE(it, last_.end()) << "no value for " << name << " " << scope;
    return it == last_.end() ? -1 : it->second;
  }
  bool declared(const std::string& name, const std::string& scope) const {
    return descriptors_.contains(key(name, scope));
  }
  const metrics::MetricDescriptor& descriptor(const std::string& name, const std::string& scope) const {
    return descriptors_.at(key(name, scope));
  }

 private:
  static std::string key(const std::string& name, const std::string& scope) { return name + " @ " + scope; }
  std::map<std::int64_t, std::string> names_;
  std::map<std::string, metrics::MetricDescriptor> descriptors_;
  std::map<std::string, double> last_;
};

collect::HostProbes fixture_probes() {
  collect::HostProbeOptions o;
  o.proc = kFixtures / "t0";
  o.sys_block = kFixtures / "sys_block";
  o.page_bytes = 4096;
  return collect::HostProbes(o);
}

const std::string kBusy = "cpu__cycles_busy.avg.pct_of_peak_sustained_elapsed";

TEST(HostProbes, ParsersReadTheFixtureFiles) {
  const auto cpus = collect::parse_proc_stat("cpu  1 2 3 4 5 6 7 8 9 10\ncpu3 1 0 0 1 0 0 0 0\nintr 5\n");
  ASSERT_EQ(cpus.size(), 2U);
  EXPECT_EQ(cpus[0].cpu, -1);
  EXPECT_EQ(cpus[0].total(), 36U);  // guest and guest_nice are inside user and nice already
  EXPECT_EQ(cpus[0].busy(), 1U + 2 + 3 + 6 + 7 + 8);
  EXPECT_EQ(cpus[1].cpu, 3);
  const auto st =
      collect::parse_pid_stat("50 (cat (x) y) R 102 50 50 0 -1 0 0 0 0 0 1 2 0 0 20 0 3 0 9 100 64 5\n");
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->comm, "cat (x) y");  // a name with spaces and parentheses ends at the last ')'
  EXPECT_EQ(st->state, 'R');
  EXPECT_EQ(st->ppid, 102);
  EXPECT_EQ(st->threads, 3);
  EXPECT_EQ(st->rss_pages, 64);
  EXPECT_FALSE(collect::parse_pid_stat("garbage").has_value());
  EXPECT_FALSE(collect::parse_pid_stat("1 (x) S 0 1").has_value());  // cut short
  EXPECT_EQ(collect::parse_schedstat("123456789 100 3\n"), 123456789U);
  EXPECT_FALSE(collect::parse_schedstat("").has_value());
  const auto io = collect::parse_pid_io("rchar: 7\nwchar: 9\nsyscr: 1\n");
  ASSERT_TRUE(io.has_value());
  EXPECT_EQ(io->rchar, 7U);
  EXPECT_EQ(io->wchar, 9U);
  EXPECT_FALSE(collect::parse_pid_io("rchar: 7\n").has_value());
  const auto mem = collect::parse_meminfo("MemTotal: 10 kB\nCached: 2 kB\n");
  EXPECT_EQ(mem.total, 10240);
  EXPECT_EQ(mem.cached, 2048);
  EXPECT_TRUE(std::isnan(mem.available));  // missing: NaN, never 0
  const auto disks = collect::parse_diskstats(" 8 0 sda 1 2 3 4 5 6 7 8 9 10 11\n 8 1 bad 1 2\n");
  ASSERT_EQ(disks.size(), 1U);
  EXPECT_EQ(disks[0].sectors_read, 3U);
  EXPECT_EQ(disks[0].sectors_written, 7U);
  EXPECT_EQ(disks[0].in_flight, 9U);
  EXPECT_EQ(disks[0].io_ms, 10U);
}

TEST(HostProbes, FirstReadDeclaresStreamsAndGivesLevelsOnly) {
  collect::HostProbes probes = fixture_probes();
  Reads r;
  const HostBatch b = probes.read(kT0, kMono0, 100);
  r.add(b);
  // CPU: 4 system streams and one per logical CPU (2), no value before a second read.
  EXPECT_TRUE(r.declared(kBusy, "system"));
  EXPECT_TRUE(r.declared(kBusy, "cpu:0"));
  EXPECT_TRUE(r.declared(kBusy, "cpu:1"));
  EXPECT_FALSE(r.has(kBusy, "system"));
  // Memory levels at once: 16384000 kB = 16777216000 bytes; used = total - available.
  EXPECT_EQ(r.at("mem__capacity_bytes", "system"), 16777216000.0);
  EXPECT_EQ(r.at("mem__available_bytes", "system"), 4194304000.0);
  EXPECT_EQ(r.at("mem__used_bytes", "system"), 12582912000.0);
  EXPECT_EQ(r.at("mem__cached_bytes", "system"), 2097152000.0);
  EXPECT_EQ(r.at("mem__buffers_bytes", "system"), 104857600.0);
  // The tree: 100 (root), 101 (its child), 102 (101's child); 200 is not the command's.
  ASSERT_EQ(b.tasks.size(), 3U);
  EXPECT_EQ(b.tasks[0].pid, 100);
  EXPECT_EQ(b.tasks[0].name, "diescope");  // not exec'd yet
  EXPECT_EQ(b.tasks[2].pid, 102);
  EXPECT_EQ(b.tasks[2].ppid, 101);
  EXPECT_FALSE(r.declared("proc__cycles_active.sum.per_second", "process:200"));
  // Levels: 2 threads; 25600 pages of 4096 bytes.
  EXPECT_EQ(r.at("proc__threads", "process:100"), 2);
  EXPECT_EQ(r.at("proc__rss_bytes", "process:100"), 104857600.0);
  EXPECT_FALSE(r.has("proc__cycles_active.sum.per_second", "process:100"));
  // Peaks resolved on this host: 2 logical CPUs, so a process peaks at 200% of a core; RSS at MemTotal.
  EXPECT_EQ(r.descriptor("proc__cycles_active.sum.per_second", "process:100").peak, 200.0);
  EXPECT_EQ(r.descriptor("proc__rss_bytes", "process:100").peak, 16777216000.0);
  // pid 101's io file is missing (another user's process): a note, once.
  ASSERT_EQ(b.notes.size(), 1U);
  EXPECT_NE(b.notes[0].text.find("/proc/101/io"), std::string::npos) << b.notes[0].text;
  // No disk has moved yet: no disk streams.
  EXPECT_FALSE(r.declared("disk__read_bytes.sum.per_second", "device:nvme0n1"));
}

TEST(HostProbes, SecondReadGivesRatesOverTheElapsedTime) {
  collect::HostProbes probes = fixture_probes();
  Reads r;
  r.add(probes.read(kT0, kMono0, 100));
  probes.set_proc_root(kFixtures / "t1");
  const HostBatch b = probes.read(kT0 + kStep, kMono0 + kStep, 100);
  r.add(b);
  // /proc/stat over all CPUs: user +70, system +20, idle +90, iowait +20 jiffies of 200.
  EXPECT_DOUBLE_EQ(r.at(kBusy, "system"), 45.0);  // (70 + 20) / 200
  EXPECT_DOUBLE_EQ(r.at("cpu__cycles_user.avg.pct_of_peak_sustained_elapsed", "system"), 35.0);
  EXPECT_DOUBLE_EQ(r.at("cpu__cycles_kernel.avg.pct_of_peak_sustained_elapsed", "system"), 10.0);
  EXPECT_DOUBLE_EQ(r.at("cpu__cycles_iowait.avg.pct_of_peak_sustained_elapsed", "system"), 10.0);
  // cpu0: +60 user +20 system of 100 = 80%; cpu1: +10 user of 100 = 10% (iowait is not busy).
  EXPECT_DOUBLE_EQ(r.at(kBusy, "cpu:0"), 80.0);
  EXPECT_DOUBLE_EQ(r.at(kBusy, "cpu:1"), 10.0);
  // pid 100: threads +50 ms, +90 ms, and a new thread's whole 20 ms, over 100 ms = 160% of a core;
  // the busiest thread 90%; three threads now.
  EXPECT_DOUBLE_EQ(r.at("proc__cycles_active.sum.per_second", "process:100"), 160.0);
  EXPECT_DOUBLE_EQ(r.at("proc__thread_cycles_active.max.per_second", "process:100"), 90.0);
  EXPECT_EQ(r.at("proc__threads", "process:100"), 3);
  // It exec'd: a second task line names it python3.
  bool renamed = false;
  for (const auto& t : b.tasks) renamed = renamed || (t.pid == 100 && t.name == "python3");
  EXPECT_TRUE(renamed);
  // pid 101: 98 ms of 100 ms = 98%.
  EXPECT_DOUBLE_EQ(r.at("proc__cycles_active.sum.per_second", "process:101"), 98.0);
  // I/O of pid 100: rchar +1,000,000 bytes in 0.1 s = 1e7 B/s, wchar unchanged = 0.
  EXPECT_DOUBLE_EQ(r.at("proc__io_rchar.sum.per_second", "process:100"), 1e7);
  EXPECT_DOUBLE_EQ(r.at("proc__io_wchar.sum.per_second", "process:100"), 0.0);
  // Its storage reads: read_bytes +500,000 in 0.1 s = 5e6 B/s.
  EXPECT_DOUBLE_EQ(r.at("proc__io_read_bytes.sum.per_second", "process:100"), 5e6);
  // Kernel time: stime +2 ticks over 100 ms, as a percent of one core.
  const double ns_per_tick = 1e9 / static_cast<double>(::sysconf(_SC_CLK_TCK));
  EXPECT_DOUBLE_EQ(r.at("proc__cycles_kernel.sum.per_second", "process:100"), 2 * ns_per_tick / 1e8 * 100);
  // Threads in D at the read: 105. Blocked on I/O (delay accounting on in the fixture): thread 105's
  // delayacct_blkio_ticks 1 -> 3, the others 0 (106 new, with 0): 2 ticks over 100 ms.
  EXPECT_EQ(r.at("proc__threads_blocked", "process:100"), 1);
  EXPECT_DOUBLE_EQ(r.at("proc__io_blocked.sum.per_second", "process:100"), 2 * ns_per_tick / 1e8 * 100);
  // pid 101's io cannot be read: NaN, never 0, and no second note.
  EXPECT_TRUE(std::isnan(r.at("proc__io_rchar.sum.per_second", "process:101")));
  EXPECT_TRUE(b.notes.empty());
  // New processes join: 103 (child of 100), and 50, listed before its parent 102 joined.
  EXPECT_TRUE(r.declared("proc__cycles_active.sum.per_second", "process:103"));
  EXPECT_TRUE(r.declared("proc__cycles_active.sum.per_second", "process:50"));
  EXPECT_FALSE(r.has("proc__cycles_active.sum.per_second", "process:103"));  // rates from its second read
  EXPECT_FALSE(r.declared("proc__cycles_active.sum.per_second", "process:200"));
  // nvme0n1 moved: 2048 sectors read and 1024 written in 0.1 s, 3 requests in flight, busy 50 of
  // 100 ms. Its partition, the loop device and the idle sda get no streams.
  EXPECT_DOUBLE_EQ(r.at("disk__read_bytes.sum.per_second", "device:nvme0n1"), 2048 * 512 / 0.1);
  EXPECT_DOUBLE_EQ(r.at("disk__write_bytes.sum.per_second", "device:nvme0n1"), 1024 * 512 / 0.1);
  EXPECT_EQ(r.at("disk__inflight", "device:nvme0n1"), 3);
  EXPECT_DOUBLE_EQ(r.at("disk__busy.pct", "device:nvme0n1"), 50.0);
  EXPECT_FALSE(r.declared("disk__read_bytes.sum.per_second", "device:nvme0n1p1"));
  EXPECT_FALSE(r.declared("disk__read_bytes.sum.per_second", "device:loop0"));
  EXPECT_FALSE(r.declared("disk__read_bytes.sum.per_second", "device:sda"));
}

TEST(HostProbes, ProcessesThatExitLeaveTheTree) {
  collect::HostProbes probes = fixture_probes();
  probes.set_proc_root(kFixtures / "t1");
  Reads r;
  r.add(probes.read(kT0, kMono0, 100));
  // Back to t0, where 103 and 50 do not exist: no values for them, and no error.
  probes.set_proc_root(kFixtures / "t0");
  const HostBatch b = probes.read(kT0 + kStep, kMono0 + kStep, 100);
  r.add(b);
  EXPECT_FALSE(r.has("proc__threads", "process:103"));
  EXPECT_FALSE(r.has("proc__threads", "process:50"));
  EXPECT_TRUE(r.has("proc__threads", "process:100"));
  // Counters that step back (t0 is "earlier" than t1) give 0, never a negative or huge rate.
  EXPECT_GE(r.at("proc__cycles_active.sum.per_second", "process:101"), 0.0);
}

TEST(HostProbes, WithoutARootOnlyTheHostIsRead) {
  collect::HostProbes probes = fixture_probes();
  const HostBatch b = probes.read(kT0, kMono0, 0);
  EXPECT_TRUE(b.tasks.empty());
  for (const auto& s : b.streams) EXPECT_NE(s.descriptor.scope.kind, metrics::Scope::Kind::process);
}

TEST(HostProbes, TheLiveHostReads) {
  // The machine's own /proc: this test process is the root; it has at least one thread.
  collect::HostProbes probes;
  Reads r;
  const auto self = static_cast<std::int64_t>(::getpid());
  r.add(probes.read(kT0, kMono0, self));
  volatile double spin = 0;
  for (int i = 0; i < 5'000'000; ++i) spin = spin + 1.0;
  r.add(probes.read(kT0 + kStep, kMono0 + kStep, self));
  EXPECT_GE(r.at("proc__threads", "process:" + std::to_string(self)), 1);
  EXPECT_GE(r.at("proc__cycles_active.sum.per_second", "process:" + std::to_string(self)), 0);
  EXPECT_GT(r.at("mem__capacity_bytes", "system"), 0);
}

// A /proc tree written by the test: each process with its stat, one thread with its schedstat, and
// that thread's children file (a kernel with CONFIG_PROC_CHILDREN).
class ChildrenTree {
 public:
  ChildrenTree()
      : root_(fs::temp_directory_path() / ("diescope-host-children-" + std::to_string(::getpid()))) {
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  ~ChildrenTree() { fs::remove_all(root_); }
  ChildrenTree(const ChildrenTree&) = delete;
  ChildrenTree& operator=(const ChildrenTree&) = delete;

  void process(int pid, int ppid, const std::string& children) {
    const fs::path task = root_ / std::to_string(pid) / "task" / std::to_string(pid);
    fs::create_directories(task);
    put(root_ / std::to_string(pid) / "stat", std::to_string(pid) + " (p" + std::to_string(pid) + ") S " +
                                                  std::to_string(ppid) +
                                                  " 1 1 0 -1 4194304 120 0 0 0 10 5 0 0 20 0 1 0 12345 "
                                                  "1000000 256 18446744073709551615 1 1 0 0 0 0 "
                                                  "0 0 0 0 0 0 17 3 0 0 0 0 0\n");
    put(task / "schedstat", "1000 0 0\n");
    put(task / "children", children);
  }
  void exit(int pid) { fs::remove_all(root_ / std::to_string(pid)); }
  const fs::path& root() const { return root_; }

 private:
  static void put(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }
  fs::path root_;
};

std::vector<std::int64_t> task_pids(const HostBatch& b) {
  std::vector<std::int64_t> out;
  for (const auto& t : b.tasks) out.push_back(t.pid);
  return out;
}

TEST(HostProbes, TheTreeIsFollowedThroughTheChildrenFiles) {
  ChildrenTree proc;
  // 100 is the root; 101 its child, 102 and 103 101's; 300's stat names 100 as its parent, but no
  // children file lists it: the probes read the tree from the children files, not from /proc's list.
  proc.process(100, 1, "101 ");
  proc.process(101, 100, "102 103 ");
  proc.process(102, 101, "");
  proc.process(103, 101, "");
  proc.process(300, 100, "");
  collect::HostProbeOptions o;
  o.proc = proc.root();
  o.page_bytes = 4096;
  collect::HostProbes probes(o);
  Reads r;
  const HostBatch first = probes.read(kT0, kMono0, 100);
  r.add(first);
  EXPECT_EQ(task_pids(first), (std::vector<std::int64_t>{100, 101, 102, 103}));
  EXPECT_FALSE(r.declared("proc__threads", "process:300"));
  // 101 exits: 102 is re-parented to init (its stat says 1, no children file lists it) and stays in
  // the tree, as with the scan; 103 exits with it; 104 is new under 100.
  proc.exit(101);
  proc.exit(103);
  proc.process(102, 1, "");
  proc.process(100, 1, "104");
  proc.process(104, 100, "");
  r.add(probes.read(kT0 + kStep, kMono0 + kStep, 100));
  EXPECT_TRUE(r.has("proc__threads", "process:100"));
  EXPECT_TRUE(r.has("proc__threads", "process:102"));
  EXPECT_TRUE(r.has("proc__threads", "process:104"));
  EXPECT_FALSE(r.has("proc__threads", "process:101"));
  EXPECT_FALSE(r.has("proc__threads", "process:103"));
  // 102's thread ran 1000 ns at both reads: 0 ns over 100 ms is 0% of a core.
  EXPECT_EQ(r.at("proc__cycles_active.sum.per_second", "process:102"), 0.0);
}

TEST(HostProbes, TheLiveTreeFindsAForkedChild) {
  // The machine's own /proc: a child of this test process is in its tree from the first read.
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  collect::HostProbes probes;
  const HostBatch b = probes.read(kT0, kMono0, static_cast<std::int64_t>(::getpid()));
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  const std::vector<std::int64_t> pids = task_pids(b);
  EXPECT_NE(std::find(pids.begin(), pids.end(), static_cast<std::int64_t>(child)), pids.end());
}

}  // namespace
}  // namespace diescope

namespace diescope {
namespace {

// Processes on the GPU (docs/recording-format.md#gpu-holders), placed by their parents in the
// fixture tree t0: 100 diescope (parent 1), 101 pt_data_worker (parent 100), 102 sh (parent 101),
// 200 sshd (parent 1). The measured command is 101 and diescope 100.
TEST(GpuHolders, RoleFromTheParentChainAndNameFromStat) {
  const fs::path proc = kFixtures / "t0";
  using recording::HolderRole;
  const auto who = [&](std::int64_t pid, std::int64_t command) {
    return collect::identify_gpu_holder(pid, command, 100, proc);
  };
  EXPECT_EQ(who(101, 101).role, HolderRole::command);  // the command itself
  EXPECT_EQ(who(101, 101).name, "pt_data_worker");
  EXPECT_EQ(who(102, 101).role, HolderRole::command);  // its child: 102 -> 101
  EXPECT_EQ(who(102, 101).name, "sh");
  EXPECT_EQ(who(100, 101).role, HolderRole::diescope);  // diescope itself
  EXPECT_EQ(who(200, 101).role, HolderRole::other);     // 200 -> 1: neither
  EXPECT_EQ(who(200, 101).name, "sshd");
  EXPECT_EQ(who(999, 101).role, HolderRole::other);  // not in /proc: other, unnamed
  EXPECT_EQ(who(999, 101).name, "");
  // Once the command has ended (0), its former child walks up to diescope.
  EXPECT_EQ(who(102, 0).role, HolderRole::diescope);
}

TEST(GpuHolders, TrackerWritesChangesOnly) {
  collect::GpuHolderTracker tracker(kFixtures / "t0");
  using recording::HolderRole;
  auto first = tracker.update(kT0, {200, 100}, 101, 100);
  ASSERT_EQ(first.size(), 2u);  // new pids, ascending
  EXPECT_EQ(first[0].pid, 100);
  EXPECT_EQ(first[0].role, HolderRole::diescope);
  EXPECT_EQ(first[1].pid, 200);
  EXPECT_EQ(first[1].role, HolderRole::other);
  EXPECT_EQ(first[1].name, "sshd");
  EXPECT_EQ(first[1].ts_ns, kT0);
  auto second = tracker.update(kT0 + kStep, {200, 102}, 101, 100);
  ASSERT_EQ(second.size(), 2u);  // 100 left the lists (gone first), 102 came
  EXPECT_EQ(second[0].pid, 100);
  EXPECT_EQ(second[0].role, HolderRole::gone);
  EXPECT_EQ(second[0].name, "");
  EXPECT_EQ(second[1].pid, 102);
  EXPECT_EQ(second[1].role, HolderRole::command);
  EXPECT_TRUE(tracker.update(kT0 + 2 * kStep, {102, 200}, 101, 100).empty());  // no change, no record
}

}  // namespace
}  // namespace diescope
