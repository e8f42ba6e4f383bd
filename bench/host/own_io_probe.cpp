// own_io_probe: diescope's host probes (collect::HostProbes, docs/method.md#host-probes) on a command
// run as a child, without a GPU: every --interval-ms it reads the probes with the child as the root,
// and at the end prints, per process of the tree, the mean of its own-I/O streams over the reads
// (storage bytes per second, kernel and blocked time, threads in D), and the figures the idle rule
// forms from them over every read (docs/method.md#stranded-idle-explained). Used where the GPU machine
// cannot show a part: a throttled cgroup, delay accounting (bench/host/own_io_cpu.sh).
//
//   own_io_probe [--interval-ms 100] -- CMD ARGS...
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "diescope/collect/host_probes.hpp"
#include "diescope/core/clock.hpp"

namespace {

struct Stream {
  std::int64_t pid = 0;
  std::string name;
};

struct Means {
  double sum = 0;
  long n = 0;
  void add(double v) {
    if (!std::isfinite(v)) return;
    sum += v;
    ++n;
  }
  double value() const { return n > 0 ? sum / static_cast<double>(n) : NAN; }
};

}  // namespace

int main(int argc, char** argv) {
  double interval_ms = 100;
  int cmd = 1;
  for (; cmd < argc; ++cmd) {
    if (!std::strcmp(argv[cmd], "--")) {
      ++cmd;
      break;
    }
    if (!std::strcmp(argv[cmd], "--interval-ms") && cmd + 1 < argc) interval_ms = std::stod(argv[++cmd]);
  }
  if (cmd >= argc) {
    std::fprintf(stderr, "usage: own_io_probe [--interval-ms MS] -- CMD ARGS...\n");
    return 2;
  }
  const pid_t child = ::fork();
  if (child == 0) {
    ::execvp(argv[cmd], argv + cmd);
    std::perror("own_io_probe: exec");
    ::_exit(127);
  }
  diescope::collect::HostProbes probes;
  std::map<std::int64_t, Stream> streams;
  std::map<std::int64_t, std::map<std::string, Means>> per_pid;
  Means own_read, own_io, own_reader;
  long io_reads = 0, reads_with_io = 0;
  int status = 0;
  while (::waitpid(child, &status, WNOHANG) == 0) {
    const auto batch = probes.read(diescope::core::realtime_ns(), diescope::core::monotonic_ns(), child);
    for (const auto& s : batch.streams)
      if (s.descriptor.scope.kind == diescope::metrics::Scope::Kind::process)
        streams[s.id] = {s.descriptor.scope.id, s.descriptor.full_name()};
    // One read: each process's values, then the rule's sums over the readers (as explain_idle forms them).
    std::map<std::int64_t, std::map<std::string, double>> now;
    for (const auto& v : batch.sample.values) {
      const auto it = streams.find(v.id);
      if (it == streams.end()) continue;
      now[it->second.pid][it->second.name] = v.value;
      per_pid[it->second.pid][it->second.name].add(v.value);
    }
    // The idle rule's figures (docs/method.md#stranded-idle-explained), as if the GPU idled throughout:
    // an I/O read reads >= 10 MB/s from storage or has >= 0.5 threads blocked on I/O.
    double read = 0, blocked_all = 0, io = 0, reader = 0;
    bool any = false;
    auto blocked_of = [](std::map<std::string, double>& m) {
      const double b = m["proc__io_blocked.sum.per_second"];
      return std::isfinite(b)                            ? b / 100
             : std::isfinite(m["proc__threads_blocked"]) ? m["proc__threads_blocked"]
                                                         : 0.0;
    };
    for (auto& [pid, m] : now) {
      const auto rb = m.find("proc__io_read_bytes.sum.per_second");
      if (rb == m.end() || !std::isfinite(rb->second)) continue;
      any = true;
      read += rb->second;
      blocked_all += blocked_of(m);
    }
    if (any) {
      own_read.add(read);
      const bool io_read = read >= 10e6 || blocked_all >= 0.5;
      io_reads += io_read ? 1 : 0;
      ++reads_with_io;
      if (io_read) {
        for (auto& [pid, m] : now) {
          const double blocked = blocked_of(m);
          if (!(m["proc__io_read_bytes.sum.per_second"] > 0) && !(blocked > 0)) continue;
          io += m["proc__cycles_kernel.sum.per_second"] / 100 + blocked;
          reader += m["proc__cycles_active.sum.per_second"] / 100 + blocked;
        }
        own_io.add(io);
        own_reader.add(reader);
      }
    }
    std::this_thread::sleep_for(std::chrono::microseconds(static_cast<long>(interval_ms * 1000)));
  }
  std::printf("pid,reads,read_bytes_per_s,cpu_pct,kernel_pct,blocked_pct,threads_in_d\n");
  for (auto& [pid, m] : per_pid)
    std::printf("%lld,%ld,%.4g,%.1f,%.1f,%.1f,%.2f\n", static_cast<long long>(pid),
                m["proc__cycles_active.sum.per_second"].n, m["proc__io_read_bytes.sum.per_second"].value(),
                m["proc__cycles_active.sum.per_second"].value(),
                m["proc__cycles_kernel.sum.per_second"].value(), m["proc__io_blocked.sum.per_second"].value(),
                m["proc__threads_blocked"].value());
  std::printf("own_read_bytes_per_s,%.4g\nown_read_share,%.3f\nown_io_cores,%.3f\nown_reader_cores,%.3f\n",
              own_read.value(),
              reads_with_io > 0 ? static_cast<double>(io_reads) / static_cast<double>(reads_with_io) : NAN,
              own_io.value(), own_reader.value());
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
