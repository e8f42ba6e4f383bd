// gpm_probe: NVML GPM through diescope's adapter (collect::GpmSampler), on a GPU.
//
//   gpm_probe intervals [--gpu N] [--ms 1,2,5,...] [--seconds-each S]
//       For each interval, samples GPM for S seconds and prints one row: samples taken, samples
//       that failed or were not a number, and each unit's mean, standard deviation and range over
//       the samples, plus the process CPU time per second of sampling. Run it over a steady load: the
//       shortest interval whose samples agree with the longer ones is GPM's shortest sound interval
//       (docs/method.md#gpm-as-a-second-chip-source).
//   gpm_probe serve [--gpu N] [--interval-ms X]
//       Samples GPM until SIGTERM or SIGINT, then prints its CPU time per second: the cost of GPM
//       itself, and a stand-in for "GPM on" in bench/agent/cost_events.py.
//   gpm_probe trace [--gpu N] [--interval-ms X] [--seconds S]
//       Polls GPM every X ms (5 ms: finer than the driver's 100 ms refresh) for S seconds and prints one
//       CSV line per sample the sampler returns: its edges (CLOCK_REALTIME ns) and every column. A
//       pair with no refresh inside is kept open by the sampler, so at X = 5 each line ends within 5 ms
//       after a refresh: the lines give the refresh times, and each value the share over the refresh
//       interval (docs/method.md#gpm-as-a-second-chip-source).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <string>
#include <sys/resource.h>
#include <thread>
#include <vector>

#include "diescope/collect/gpm.hpp"
#include "diescope/collect/nvml.hpp"
#include "diescope/core/clock.hpp"
#include "diescope/core/error.hpp"

namespace {

using diescope::collect::GpmSampler;
std::atomic<bool> g_stop{false};

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

std::vector<double> parse_list(const std::string& text) {
  std::vector<double> out;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    out.push_back(std::stod(text.substr(at, comma - at)));
    at = comma + 1;
  }
  return out;
}

struct Stats {
  double mean = NAN, sd = NAN, lo = NAN, hi = NAN;
};
Stats stats(const std::vector<double>& v) {
  Stats s;
  if (v.empty()) return s;
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / static_cast<double>(v.size());
  double ss = 0;
  for (double x : v) ss += (x - s.mean) * (x - s.mean);
  s.sd = v.size() > 1 ? std::sqrt(ss / static_cast<double>(v.size() - 1)) : 0;
  s.lo = *std::min_element(v.begin(), v.end());
  s.hi = *std::max_element(v.begin(), v.end());
  return s;
}

void sleep_until_mono(std::int64_t mono_ns) {
  const std::int64_t left = mono_ns - diescope::core::monotonic_ns();
  if (left > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(left));
}

int intervals(const diescope::collect::NvmlDevice& device, const std::vector<double>& ms,
              double seconds_each) {
  GpmSampler sampler(device, diescope::core::realtime_ns());
  const auto& table = sampler.table();
  std::printf("interval_ms,samples,failed,cpu_ms_per_s");
  for (const auto& u : table.units)
    std::printf(",%s_mean,%s_sd,%s_min,%s_max", u.key.c_str(), u.key.c_str(), u.key.c_str(), u.key.c_str());
  std::printf(",sm_active_mean\n");
  for (double interval : ms) {
    const auto step = static_cast<std::int64_t>(interval * 1e6);
    std::vector<std::vector<double>> values(table.units.size());
    std::vector<double> sm_active;
    int samples = 0, failed = 0;
    sampler.sample(diescope::core::realtime_ns());  // a new pair starts here
    const double cpu0 = cpu_seconds();
    const std::int64_t start = diescope::core::monotonic_ns();
    std::int64_t next = start + step;
    while (next <= start + static_cast<std::int64_t>(seconds_each * 1e9)) {
      sleep_until_mono(next);
      next += step;
      auto s = sampler.sample(diescope::core::realtime_ns());
      if (!s) {
        ++failed;
        continue;
      }
      ++samples;
      bool bad = false;
      for (double v : s->columns.units) bad = bad || !std::isfinite(v);
      if (bad) {
        ++failed;
        continue;
      }
      for (std::size_t i = 0; i < values.size(); ++i) values[i].push_back(s->columns.units[i]);
      if (!s->columns.diagnostics.empty()) sm_active.push_back(s->columns.diagnostics[0]);
    }
    const double wall = static_cast<double>(diescope::core::monotonic_ns() - start) * 1e-9;
    std::printf("%g,%d,%d,%.3f", interval, samples, failed, (cpu_seconds() - cpu0) * 1000 / wall);
    for (const auto& v : values) {
      const Stats s = stats(v);
      std::printf(",%.3f,%.3f,%.3f,%.3f", s.mean, s.sd, s.lo, s.hi);
    }
    std::printf(",%.3f\n", stats(sm_active).mean);
    std::fflush(stdout);
  }
  return 0;
}

int serve(const diescope::collect::NvmlDevice& device, double interval_ms) {
  std::signal(SIGTERM, [](int) { g_stop = true; });
  std::signal(SIGINT, [](int) { g_stop = true; });
  GpmSampler sampler(device, diescope::core::realtime_ns());
  std::printf("on\n");
  std::fflush(stdout);
  const auto step = static_cast<std::int64_t>(interval_ms * 1e6);
  const double cpu0 = cpu_seconds();
  const std::int64_t start = diescope::core::monotonic_ns();
  std::int64_t next = start + step;
  long samples = 0;
  while (!g_stop) {
    sleep_until_mono(next);
    next += step;
    if (sampler.sample(diescope::core::realtime_ns())) ++samples;
  }
  const double wall = static_cast<double>(diescope::core::monotonic_ns() - start) * 1e-9;
  std::printf("gpm serve: %ld samples at %g ms over %.1f s; CPU %.3f ms per second\n", samples, interval_ms,
              wall, (cpu_seconds() - cpu0) * 1000 / wall);
  return 0;
}

int trace(const diescope::collect::NvmlDevice& device, double interval_ms, double seconds) {
  GpmSampler sampler(device, diescope::core::realtime_ns());
  const auto& table = sampler.table();
  std::printf("start_ns,end_ns");
  for (const auto& u : table.units) std::printf(",%s", u.key.c_str());
  for (const auto& d : table.diagnostics) std::printf(",%s", d.key.c_str());
  std::printf("\n");
  const auto step = static_cast<std::int64_t>(interval_ms * 1e6);
  const std::int64_t start = diescope::core::monotonic_ns();
  std::int64_t next = start + step;
  long polls = 0, returned = 0;
  while (next <= start + static_cast<std::int64_t>(seconds * 1e9)) {
    sleep_until_mono(next);
    next += step;
    ++polls;
    auto s = sampler.sample(diescope::core::realtime_ns());
    if (!s) continue;
    ++returned;
    std::printf("%lld,%lld", static_cast<long long>(s->start_ns), static_cast<long long>(s->end_ns));
    for (double v : s->columns.units) std::printf(",%.4f", v);
    for (double v : s->columns.diagnostics) std::printf(",%.4f", v);
    std::printf("\n");
  }
  std::fprintf(stderr, "gpm trace: %ld polls at %g ms, %ld samples returned\n", polls, interval_ms, returned);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc < 2) {
      std::fprintf(stderr,
                   "usage: gpm_probe intervals|serve|trace [--gpu N] [--ms LIST] [--seconds-each S] "
                   "[--interval-ms X] [--seconds S]\n");
      return 2;
    }
    const std::string mode = argv[1];
    int gpu = 0;
    std::vector<double> ms = {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000};
    double seconds_each = 2, interval_ms = 100, seconds = 5;
    for (int i = 2; i + 1 < argc; i += 2) {
      const std::string key = argv[i], value = argv[i + 1];
      if (key == "--gpu")
        gpu = std::stoi(value);
      else if (key == "--ms")
        ms = parse_list(value);
      else if (key == "--seconds-each")
        seconds_each = std::stod(value);
      else if (key == "--interval-ms")
        interval_ms = std::stod(value);
      else if (key == "--seconds")
        seconds = std::stod(value);
      else {
        std::fprintf(stderr, "gpm_probe: unknown option %s\n", key.c_str());
        return 2;
      }
    }
    auto nvml = diescope::collect::Nvml::load();
    const auto device = nvml->device(gpu);
    if (mode == "intervals") return intervals(device, ms, seconds_each);
    if (mode == "serve") return serve(device, interval_ms);
    if (mode == "trace") return trace(device, interval_ms, seconds);
    std::fprintf(stderr, "gpm_probe: unknown mode %s\n", mode.c_str());
    return 2;
  } catch (const diescope::core::Error& e) {
    std::fprintf(stderr, "gpm_probe: %s (%s)\n", e.what(), e.fix().c_str());
    return 1;
  }
}
