// A minimal NVML poller: what a user's own monitoring loop costs. It loads NVML at run time, reads
// GPU-Util (nvmlDeviceGetUtilizationRates) of one GPU every --interval-ms for --seconds, and prints
// the reads, its CPU time and its peak RSS as key=value pairs.
//
//   nvml_poll [--device 0] [--interval-ms 10] [--seconds 20]
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <sys/resource.h>
#include <unistd.h>

namespace {
struct Utilization {
  unsigned gpu, memory;
};
using Fn0 = int (*)();
using GetHandle = int (*)(unsigned, void**);
using GetUtil = int (*)(void*, Utilization*);

std::int64_t now_ns(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}
}  // namespace

int main(int argc, char** argv) {
  unsigned device = 0;
  double interval_ms = 10, seconds = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--device"))
      device = static_cast<unsigned>(std::atoi(argv[i + 1]));
    else if (!std::strcmp(argv[i], "--interval-ms"))
      interval_ms = std::atof(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--seconds"))
      seconds = std::atof(argv[i + 1]);
    else {
      std::fprintf(stderr, "nvml_poll: unknown argument %s (see the header of nvml_poll.cpp)\n", argv[i]);
      return 2;
    }
  }
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW);
  if (!lib) {
    std::fprintf(stderr, "nvml_poll: cannot load libnvidia-ml.so.1: install the NVIDIA driver\n");
    return 1;
  }
  auto init = reinterpret_cast<Fn0>(dlsym(lib, "nvmlInit_v2"));
  auto handle_of = reinterpret_cast<GetHandle>(dlsym(lib, "nvmlDeviceGetHandleByIndex_v2"));
  auto util_of = reinterpret_cast<GetUtil>(dlsym(lib, "nvmlDeviceGetUtilizationRates"));
  auto shutdown = reinterpret_cast<Fn0>(dlsym(lib, "nvmlShutdown"));
  void* dev = nullptr;
  if (!init || !handle_of || !util_of || init() != 0 || handle_of(device, &dev) != 0) {
    std::fprintf(stderr, "nvml_poll: NVML could not open GPU %u: check nvidia-smi -L\n", device);
    return 1;
  }
  const std::int64_t began = now_ns(CLOCK_MONOTONIC), cpu_began = now_ns(CLOCK_PROCESS_CPUTIME_ID);
  const auto period = static_cast<std::int64_t>(interval_ms * 1e6);
  const std::int64_t until = began + static_cast<std::int64_t>(seconds * 1e9);
  long reads = 0, failed = 0;
  unsigned long sum = 0;
  for (std::int64_t next = began; next < until; next += period) {
    const std::int64_t wait = next - now_ns(CLOCK_MONOTONIC);
    if (wait > 0) usleep(static_cast<useconds_t>(wait / 1000));
    Utilization u{};
    if (util_of(dev, &u) == 0) {
      ++reads;
      sum += u.gpu;
    } else {
      ++failed;
    }
  }
  const double wall = static_cast<double>(now_ns(CLOCK_MONOTONIC) - began) / 1e9;
  const double cpu = static_cast<double>(now_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu_began) / 1e9;
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  std::printf("interval_ms=%g seconds=%.2f reads=%ld failed=%ld mean_util=%.1f cpu_pct=%.3f maxrss_mb=%.1f\n",
              interval_ms, wall, reads, failed,
              reads ? static_cast<double>(sum) / static_cast<double>(reads) : 0.0, 100 * cpu / wall,
              static_cast<double>(ru.ru_maxrss) / 1024);
  if (shutdown) shutdown();
  return 0;
}
