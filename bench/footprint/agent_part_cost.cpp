// What each part of the agent's own work costs on this machine, by this thread's CPU clock around the
// same code the agent runs (docs/footprint.md#the-agents-own-cost): one read of the host probes
// (HostMetrics::read, the agent's), each of its /proc files read alone, the once-a-poll publish of ten
// reads, one wake of an idle loop from poll(), a scan for other profilers (ProfilerWatch, every poll
// while the counters are off): the first, later ones in a row and later ones 200 ms apart; and, where NVML
// is there, what NVML's GPU-Util sample buffer holds (the whole buffer read at once: how many samples, over
// how long), so the agent's cadence for reading it can be checked against it (docs/agent.md#nvml-reads).
//   agent_part_cost [ROUNDS]      (default 200)
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "diescope/agent/host_metrics.hpp"
#include "diescope/collect/nvml.hpp"
#include "diescope/collect/profiler_watch.hpp"
#include "diescope/core/clock.hpp"
#include "diescope/core/error.hpp"

namespace {

using diescope::core::monotonic_ns;
using diescope::core::realtime_ns;
using diescope::core::thread_cpu_ns;

// CPU us of this thread per call, over `rounds` calls after one untimed call.
void time_part(const char* name, int rounds, const std::function<void()>& call) {
  call();
  const std::int64_t wall0 = monotonic_ns(), cpu0 = thread_cpu_ns();
  for (int i = 0; i < rounds; ++i) call();
  std::printf("%-40s cpu_us=%.1f wall_us=%.1f calls=%d\n", name,
              double(thread_cpu_ns() - cpu0) / rounds / 1e3, double(monotonic_ns() - wall0) / rounds / 1e3,
              rounds);
}

// A /proc file kept open and read again from offset 0 until a read returns nothing, as the probes do.
void read_kept(int fd, std::string& out) {
  out.clear();
  char buf[16384];
  for (off_t at = 0;;) {
    const ssize_t n = ::pread(fd, buf, sizeof buf, at);
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
    at += n;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 200;
  std::string text;
  for (const char* file : {"/proc/stat", "/proc/meminfo", "/proc/diskstats"}) {
    const int fd = ::open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    read_kept(fd, text);
    const std::string name = std::string("read ") + file + " (" + std::to_string(text.size()) + " bytes)";
    time_part(name.c_str(), rounds, [&] { read_kept(fd, text); });
    ::close(fd);
  }
  diescope::agent::HostMetrics host;
  time_part("host probes: one read (HostMetrics::read)", rounds,
            [&] { host.read(realtime_ns(), monotonic_ns()); });
  for (int i = 0; i < 10; ++i) host.read(realtime_ns(), monotonic_ns());
  std::printf("host probes: %zu figures\n", host.publish(realtime_ns()).size());
  {
    const int publishes = std::max(1, rounds / 10);
    std::int64_t cpu = 0;
    for (int p = 0; p < publishes; ++p) {
      for (int i = 0; i < 10; ++i) host.read(realtime_ns(), monotonic_ns());
      const std::int64_t c0 = thread_cpu_ns();
      host.publish(realtime_ns());
      cpu += thread_cpu_ns() - c0;
    }
    std::printf("%-40s cpu_us=%.1f calls=%d\n", "host probes: publish of 10 reads",
                double(cpu) / publishes / 1e3, publishes);
  }
  time_part("wake from poll() after 5 ms, idle", std::max(1, rounds / 4), [] { ::poll(nullptr, 0, 5); });
  // The profiler scan (docs/agent.md#beside-other-profilers): the first, which meets every process
  // (each one's comm and stat, each environment once), then later scans in a row, and later scans each
  // after 200 ms asleep, as the agent's come (its caches cold).
  using diescope::collect::ProfilerWatch;
  std::size_t processes = 0, kernel_threads = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (!std::isdigit(static_cast<unsigned char>(name[0]))) continue;
    ++processes;
    std::FILE* f = std::fopen((e.path() / "stat").c_str(), "r");
    if (!f) continue;
    char line[512] = {};
    const std::size_t got = std::fread(line, 1, sizeof line - 1, f);
    std::fclose(f);
    const char* close = std::strrchr(line, ')');
    int parent = -1;
    if (got > 0 && close && std::sscanf(close + 1, " %*c %d", &parent) == 1 && (parent == 2 || name == "2"))
      ++kernel_threads;
  }
  const std::string here =
      "(" + std::to_string(processes) + " processes, " + std::to_string(kernel_threads) + " kernel threads)";
  ProfilerWatch watch("/proc");
  const std::int64_t first0 = thread_cpu_ns();
  watch.scan();
  std::printf("%-40s cpu_us=%.1f calls=1\n", ("profiler scan, the first " + here).c_str(),
              double(thread_cpu_ns() - first0) / 1e3);
  time_part("profiler scan, later, in a row", std::max(1, rounds / 4), [&] { watch.scan(); });
  std::int64_t cold_ns = 0;
  constexpr int kCold = 10;
  for (int i = 0; i < kCold; ++i) {
    ::poll(nullptr, 0, 200);
    const std::int64_t cpu0 = thread_cpu_ns();
    watch.scan();
    cold_ns += thread_cpu_ns() - cpu0;
  }
  std::printf("%-40s cpu_us=%.1f calls=%d\n", "profiler scan, later, each after 200 ms",
              double(cold_ns) / kCold / 1e3, kCold);
  try {
    auto nvml = diescope::collect::Nvml::load();
    for (int i = 0; i < nvml->device_count(); ++i) {
      const diescope::collect::NvmlDevice device = nvml->device(i);
      for (int take = 0; take < 3; ++take) {
        if (take > 0) ::poll(nullptr, 0, 1000);
        const diescope::collect::UtilSamplesRead got = device.gpu_util_samples(0);
        if (got.samples.empty()) {
          std::printf("GPU %d: NVML's GPU-Util buffer: no samples (%s)\n", i, got.error.c_str());
          continue;
        }
        const double span_s = double(got.samples.back().ts_ns - got.samples.front().ts_ns) / 1e9;
        const double age_s = double(realtime_ns() - got.samples.front().ts_ns) / 1e9;
        std::printf(
            "GPU %d: NVML's GPU-Util buffer holds %zu samples over %.2f s (the oldest %.2f s old, the "
            "newest %.3f s old), one every %.1f ms\n",
            i, got.samples.size(), span_s, age_s, double(realtime_ns() - got.samples.back().ts_ns) / 1e9,
            got.samples.size() > 1 ? span_s * 1e3 / double(got.samples.size() - 1) : 0.0);
      }
    }
  } catch (const diescope::core::Error& e) {
    std::printf("NVML: not read (%s)\n", e.cause().c_str());
  }
  return 0;
}
