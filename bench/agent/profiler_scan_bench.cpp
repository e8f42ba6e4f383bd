// The agent's and top's scan for other profilers (docs/agent.md#beside-other-profilers) runs every
// 200 ms over every process on the host: its cost per scan on this host's /proc, and on a fake /proc
// of many processes with large environments, first scan (every environment read) and later scans.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "diescope/collect/profiler_watch.hpp"

namespace {

namespace fs = std::filesystem;

// Later scans of this host's /proc: stat and comm of every process, environments already known.
void BM_ScanThisHost(benchmark::State& state) {
  diescope::collect::ProfilerWatch watch;
  watch.scan();
  std::size_t processes = 0;
  for (const auto& entry : fs::directory_iterator("/proc"))
    processes += entry.path().filename().string().find_first_not_of("0123456789") == std::string::npos;
  for (auto _ : state) benchmark::DoNotOptimize(watch.scan());
  state.counters["processes"] = static_cast<double>(processes);
}
BENCHMARK(BM_ScanThisHost)->Unit(benchmark::kMicrosecond);

// A fake /proc of range(0) processes whose environments are 8 KiB each.
fs::path fake_proc(int processes) {
  fs::path root = fs::temp_directory_path() / ("diescope-scan-bench-" + std::to_string(::getpid()));
  fs::remove_all(root);
  const std::string environ = "PATH=/usr/bin" + std::string(1, '\0') + "X=" + std::string(8192, 'x');
  for (int pid = 2; pid < processes + 2; ++pid) {
    const fs::path dir = root / std::to_string(pid);
    fs::create_directories(dir);
    std::ofstream(dir / "comm") << "python3\n";
    std::ofstream(dir / "stat") << pid << " (python3) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 " << 1000 + pid
                                << " 0 0\n";
    std::ofstream(dir / "environ", std::ios::binary) << environ;
  }
  return root;
}

void BM_ScanFakeFirst(benchmark::State& state) {
  const fs::path root = fake_proc(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    diescope::collect::ProfilerWatch watch(root, 1);  // new: every environment is read
    benchmark::DoNotOptimize(watch.scan());
  }
  fs::remove_all(root);
}
BENCHMARK(BM_ScanFakeFirst)->Arg(500)->Unit(benchmark::kMicrosecond);

void BM_ScanFakeLater(benchmark::State& state) {
  const fs::path root = fake_proc(static_cast<int>(state.range(0)));
  diescope::collect::ProfilerWatch watch(root, 1);
  watch.scan();
  for (auto _ : state) benchmark::DoNotOptimize(watch.scan());
  fs::remove_all(root);
}
BENCHMARK(BM_ScanFakeLater)->Arg(500)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
