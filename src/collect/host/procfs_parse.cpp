// Parsers of the /proc files the host probes read (docs/method.md#host-probes). Each takes a
// file's text and returns what it holds; a line it cannot read is skipped, never guessed.
#include <charconv>
#include <cmath>
#include <limits>

#include "diescope/collect/host_probes.hpp"

namespace diescope::collect {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Splits `text` into lines without their '\n'.
template <typename F>
void for_each_line(std::string_view text, F&& f) {
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    f(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
}

// The next whitespace-separated word of `s`, removed from it.
std::string_view next_word(std::string_view& s) {
  std::size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  std::size_t j = i;
  while (j < s.size() && s[j] != ' ' && s[j] != '\t') ++j;
  const std::string_view w = s.substr(i, j - i);
  s.remove_prefix(j);
  return w;
}

template <typename T>
bool to_number(std::string_view w, T& out) {
  if (w.empty()) return false;
  const auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), out);
  return ec == std::errc{} && end == w.data() + w.size();
}

}  // namespace

std::vector<CpuJiffies> parse_proc_stat(std::string_view text) {
  std::vector<CpuJiffies> out;
  for_each_line(text, [&](std::string_view line) {
    std::string_view rest = line;
    const std::string_view name = next_word(rest);
    if (name.size() < 3 || name.substr(0, 3) != "cpu") return;
    CpuJiffies j;
    if (name.size() > 3 && !to_number(name.substr(3), j.cpu)) return;
    std::uint64_t* fields[] = {&j.user, &j.nice, &j.system, &j.idle, &j.iowait, &j.irq, &j.softirq, &j.steal};
    for (std::uint64_t* field : fields) {
      const std::string_view w = next_word(rest);
      // Kernels before 2.6.11 lack steal; older ones more: a missing field reads 0.
      if (w.empty()) break;
      if (!to_number(w, *field)) return;
    }
    if (j.cpu < 0)
      out.insert(out.begin(), j);
    else
      out.push_back(j);
  });
  return out;
}

MemInfo parse_meminfo(std::string_view text) {
  MemInfo m{kNaN, kNaN, kNaN, kNaN};
  for_each_line(text, [&](std::string_view line) {
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) return;
    const std::string_view key = line.substr(0, colon);
    std::string_view rest = line.substr(colon + 1);
    double v = 0;
    if (!to_number(next_word(rest), v)) return;
    const std::string_view unit = next_word(rest);
    if (unit == "kB") v *= 1024;
    if (key == "MemTotal")
      m.total = v;
    else if (key == "MemAvailable")
      m.available = v;
    else if (key == "Cached")
      m.cached = v;
    else if (key == "Buffers")
      m.buffers = v;
  });
  return m;
}

std::vector<DiskStat> parse_diskstats(std::string_view text) {
  std::vector<DiskStat> out;
  for_each_line(text, [&](std::string_view line) {
    std::string_view rest = line;
    next_word(rest);  // major
    next_word(rest);  // minor
    DiskStat d;
    d.name = std::string(next_word(rest));
    if (d.name.empty()) return;
    std::uint64_t f[11] = {};
    for (std::uint64_t& v : f)
      if (!to_number(next_word(rest), v)) return;
    // reads, reads merged, sectors read, ms reading, writes, writes merged, sectors written,
    // ms writing, I/Os in progress, ms doing I/O, weighted ms.
    d.sectors_read = f[2];
    d.sectors_written = f[6];
    d.in_flight = f[8];
    d.io_ms = f[9];
    out.push_back(std::move(d));
  });
  return out;
}

std::optional<PidStat> parse_pid_stat(std::string_view text) {
  // "PID (COMM) STATE PPID ...": COMM may hold spaces and parentheses, so it ends at the last ')'.
  const std::size_t open = text.find('(');
  const std::size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return std::nullopt;
  PidStat s;
  s.comm = std::string(text.substr(open + 1, close - open - 1));
  std::string_view rest = text.substr(close + 1);
  // Fields after the comm, counted from 3 as proc(5) numbers them.
  std::string_view fields[40];
  for (std::string_view& f : fields) f = next_word(rest);
  if (fields[0].size() != 1) return std::nullopt;
  s.state = fields[0][0];
  if (!to_number(fields[1], s.ppid)) return std::nullopt;        // field 4
  if (!to_number(fields[17], s.threads)) return std::nullopt;    // field 20
  if (!to_number(fields[21], s.rss_pages)) return std::nullopt;  // field 24
  std::uint64_t utime = 0, stime = 0;
  if (!to_number(fields[11], utime) || !to_number(fields[12], stime)) return std::nullopt;  // fields 14, 15
  s.cpu_ticks = utime + stime;
  s.kernel_ticks = stime;
  std::uint64_t blkio = 0;
  if (to_number(fields[39], blkio)) s.blkio_ticks = blkio;  // field 42
  return s;
}

std::optional<std::uint64_t> parse_schedstat(std::string_view text) {
  std::uint64_t ns = 0;
  if (!to_number(next_word(text), ns)) return std::nullopt;
  return ns;
}

std::optional<PidIo> parse_pid_io(std::string_view text) {
  PidIo io;
  bool r = false, w = false;
  for_each_line(text, [&](std::string_view line) {
    std::string_view rest = line;
    const std::string_view key = next_word(rest);
    if (key == "rchar:") r = to_number(next_word(rest), io.rchar);
    if (key == "wchar:") w = to_number(next_word(rest), io.wchar);
    std::uint64_t v = 0;
    if (key == "read_bytes:" && to_number(next_word(rest), v)) io.read_bytes = v;
  });
  if (!r || !w) return std::nullopt;
  return io;
}

}  // namespace diescope::collect
