// MultiPrinter, the run context, and the console table.
#include "diescope/harness/printer.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <ostream>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "diescope/harness/flush.hpp"
#include "diescope/harness/result.hpp"

namespace diescope::harness {

MultiPrinter& MultiPrinter::add(std::unique_ptr<Printer> printer) {
  printers_.push_back(std::move(printer));
  return *this;
}
void MultiPrinter::begin(const RunContext& context) {
  for (auto& p : printers_) p->begin(context);
}
void MultiPrinter::report(const RunResult& result) {
  for (auto& p : printers_) p->report(result);
}
void MultiPrinter::end() {
  for (auto& p : printers_) p->end();
}

RunContext RunContext::of_this_process(std::string executable) {
  RunContext c;
  c.executable = std::move(executable);
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char buffer[64];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%S%z", &local);
  c.date = buffer;
  if (c.date.size() >= 5) c.date.insert(c.date.size() - 2, ":");  // +0100 -> +01:00 (ISO 8601)
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) c.host_name = host;
  c.num_cpus = static_cast<int>(std::thread::hardware_concurrency());
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("cpu MHz", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) c.mhz_per_cpu = std::atof(line.c_str() + colon + 1);
      break;
    }
  }
  std::ifstream governor("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
  std::string name;
  c.cpu_scaling_enabled = governor >> name && name != "performance";
  double load[3];
  const int got = getloadavg(load, 3);
  for (int i = 0; i < got; ++i) c.load_avg.push_back(load[i]);
  c.caches = host_caches();
  return c;
}

namespace {

// Picks ns, us, ms or s.
std::string format_seconds(double seconds) {
  if (std::isnan(seconds)) return "n/a";
  const double a = std::abs(seconds);
  if (a < 1e-6) return fmt::format("{:.4g} ns", seconds * 1e9);
  if (a < 1e-3) return fmt::format("{:.4g} us", seconds * 1e6);
  if (a < 1) return fmt::format("{:.4g} ms", seconds * 1e3);
  return fmt::format("{:.4g} s", seconds);
}

std::string format_value(double value, MetricFormat format) {
  if (std::isnan(value)) return "n/a";
  if (format == MetricFormat::integer) return fmt::format("{}", std::llround(value));
  const double a = std::abs(value);
  if (a == 0) return "0";
  if (a >= 1e9 || a < 1e-3) return fmt::format("{:.3e}", value);
  if (a >= 1000) return fmt::format("{:.1f}", value);
  if (a >= 1) return fmt::format("{:.3f}", value);
  return fmt::format("{:.5f}", value);
}

std::string section_heading(const RunResult& result, const MetricSummary& m) {
  std::string heading = m.key.section == "host_pmu" ? std::string(pmu_coverage_label(result.domain))
                        : m.key.section.empty()     ? std::string("custom")
                                                    : m.key.section;
  if (m.origin == MetricOrigin::diagnostic_pass) heading += " (diagnostic pass, not timed)";
  return heading;
}

}  // namespace

std::string format_console(const RunResult& r) {
  std::string out = fmt::format("{}  [domain {}, backend {}, {}]\n", r.name, to_string(r.domain),
                                r.backend.empty() ? "none" : r.backend, to_string(r.timing));
  if (!r.cache_flush.empty()) out += "  " + r.cache_flush + "\n";
  if (r.skip_reason) return out + "  skipped: " + *r.skip_reason + "\n";
  if (r.error) out += "  error: " + *r.error + "\n";
  if (r.time.count > 0) {
    out += fmt::format("  {} samples x {} iteration(s), stopped: {} after {:.3g} s\n", r.time.count,
                       r.iterations_per_sample, to_string(r.stop_reason), r.wall_seconds);
    out += fmt::format("  {:<9} {:>12} {:>12} {:>12} {:>12} {:>12} {:>8}\n", "per iter", "mean", "median",
                       "p95", "min", "max", "noise");
    auto row = [&](const char* label, const Summary& s) {
      const double noise = s.relative_noise();
      out +=
          fmt::format("  {:<9} {:>12} {:>12} {:>12} {:>12} {:>12} {:>8}\n", label, format_seconds(s.mean),
                      format_seconds(s.median), format_seconds(s.p95), format_seconds(s.min),
                      format_seconds(s.max), std::isnan(noise) ? "n/a" : fmt::format("{:.2f}%", 100 * noise));
    };
    row("time", r.time);
    row("cpu time", r.cpu_time);
  }
  // Every metric, aggregated by section, name and unit (docs/harness.md#custom-metrics).
  if (!r.metrics.empty()) out += "  custom metrics:\n";
  std::string current;
  for (const MetricSummary& m : r.metrics) {
    const std::string heading = section_heading(r, m);
    if (heading != current) {
      current = heading;
      out += fmt::format("  {}:\n    {:<26} {:>11} {:>11} {:>11} {:>11} {:>11} {:>5}  {}\n", heading,
                         "metric", "mean", "median", "p95", "min", "max", "n", "unit");
    }
    const Summary& s = m.stats;
    out += fmt::format("    {:<26} {:>11} {:>11} {:>11} {:>11} {:>11} {:>5}  {}\n", m.label(),
                       format_value(s.mean, m.format), format_value(s.median, m.format),
                       format_value(s.p95, m.format), format_value(s.min, m.format),
                       format_value(s.max, m.format), s.count, m.key.unit);
  }
  for (const std::string& line : r.visible_diagnostics()) out += "  ! " + line + "\n";
  return out;
}

void ConsolePrinter::begin(const RunContext& c) {
  out_ << fmt::format("{}\nRun on ({} X {:.0f} MHz CPU s){}\n", c.date, c.num_cpus, c.mhz_per_cpu,
                      c.cpu_scaling_enabled ? "  [CPU scaling is enabled: timings may vary]" : "");
  for (const HostCache& cache : c.caches) {
    out_ << fmt::format("  L{} {} {} KiB (x{})\n", cache.level, cache.type, cache.size_bytes / 1024,
                        cache.num_sharing > 0 && c.num_cpus > 0 ? c.num_cpus / cache.num_sharing : 1);
  }
  out_ << "\n";
}

void ConsolePrinter::report(const RunResult& result) {
  out_ << format_console(result) << "\n" << std::flush;
}

}  // namespace diescope::harness
