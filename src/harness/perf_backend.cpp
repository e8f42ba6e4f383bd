#include "diescope/harness/perf_backend.hpp"

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <optional>

#include <fmt/format.h>

namespace diescope::harness {

namespace {

constexpr std::array<PerfCounter, kPerfCounterCount> kAllCounters = {
    PerfCounter::cycles,        PerfCounter::instructions,     PerfCounter::branches,
    PerfCounter::branch_misses, PerfCounter::cache_references, PerfCounter::cache_misses,
    PerfCounter::task_clock,    PerfCounter::context_switches, PerfCounter::page_faults,
};

// Context switches happen in the kernel, so they are counted with exclude_kernel off; that needs
// perf_event_paranoid <= 1 (or CAP_PERFMON), so they are opened apart from the group, whose
// user-space counters work at paranoid 2.
bool joins_group(PerfCounter c) {
  return c != PerfCounter::context_switches;
}

std::size_t slot(PerfCounter c) {
  return static_cast<std::size_t>(c);
}

struct EventCode {
  std::uint32_t type;
  std::uint64_t config;
};

EventCode event_code(PerfCounter counter) {
  switch (counter) {
    case PerfCounter::cycles:
      return {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES};
    case PerfCounter::instructions:
      return {PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS};
    case PerfCounter::branches:
      return {PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS};
    case PerfCounter::branch_misses:
      return {PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES};
    case PerfCounter::cache_references:
      return {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES};
    case PerfCounter::cache_misses:
      return {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES};
    case PerfCounter::task_clock:
      return {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK};
    case PerfCounter::context_switches:
      return {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES};
    case PerfCounter::page_faults:
      return {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS};
  }
  return {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY};
}

class LinuxPerfEventApi final : public PerfEventApi {
 public:
  int open(PerfCounter counter, int group_fd, bool as_group) override {
    perf_event_attr attr;
    std::memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    const EventCode code = event_code(counter);
    attr.type = code.type;
    attr.config = code.config;
    attr.disabled = group_fd == -1 ? 1 : 0;              // members follow their leader
    attr.exclude_kernel = joins_group(counter) ? 1 : 0;  // user space only: allowed at paranoid 2
    attr.exclude_hv = 1;
    attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
    if (as_group) attr.read_format |= PERF_FORMAT_GROUP;
    const long fd = syscall(SYS_perf_event_open, &attr, 0, -1, group_fd, PERF_FLAG_FD_CLOEXEC);
    return fd < 0 ? -errno : static_cast<int>(fd);
  }
  void close(int fd) override { ::close(fd); }
  void reset_and_enable(int fd, bool whole_group) override {
    const unsigned long flag = whole_group ? PERF_IOC_FLAG_GROUP : 0;
    ioctl(fd, PERF_EVENT_IOC_RESET, flag);
    ioctl(fd, PERF_EVENT_IOC_ENABLE, flag);
  }
  void disable(int fd, bool whole_group) override {
    ioctl(fd, PERF_EVENT_IOC_DISABLE, whole_group ? PERF_IOC_FLAG_GROUP : 0);
  }
  bool read(int fd, bool whole_group, std::span<PerfReading> out) override {
    if (whole_group) {
      // nr, time_enabled, time_running, value[nr]
      std::vector<std::uint64_t> buffer(3 + out.size());
      const ssize_t got = ::read(fd, buffer.data(), buffer.size() * sizeof(std::uint64_t));
      if (got < static_cast<ssize_t>(3 * sizeof(std::uint64_t)) || buffer[0] != out.size()) return false;
      for (std::size_t i = 0; i < out.size(); ++i) out[i] = {buffer[3 + i], buffer[1], buffer[2]};
      return true;
    }
    std::uint64_t buffer[3] = {};  // value, time_enabled, time_running
    if (::read(fd, buffer, sizeof buffer) != static_cast<ssize_t>(sizeof buffer) || out.size() != 1)
      return false;
    out[0] = {buffer[0], buffer[1], buffer[2]};
    return true;
  }
};

std::optional<int> perf_event_paranoid() {
  std::ifstream in("/proc/sys/kernel/perf_event_paranoid");
  int level = 0;
  if (in >> level) return level;
  return std::nullopt;
}

// Why perf_event_open said no, in words a reader can act on.
std::string explain_errno(int error) {
  std::string name = std::strerror(error);
  switch (error) {
    case ENOENT:
    case EOPNOTSUPP:
      return name + ": this CPU or VM exposes no such hardware counter (common in virtual machines)";
    case EACCES:
    case EPERM: {
      const auto level = perf_event_paranoid();
      return name +
             ": not permitted (kernel.perf_event_paranoid = " + (level ? std::to_string(*level) : "?") +
             "); fix: sysctl kernel.perf_event_paranoid=2, or grant CAP_PERFMON";
    }
    case ENOSYS:
      return name + ": perf events are not available (kernel without them, or blocked by seccomp)";
    default:
      return name;
  }
}

std::string join_counters(const std::vector<PerfCounter>& counters) {
  std::string out;
  for (PerfCounter c : counters) {
    if (!out.empty()) out += ", ";
    out += to_string(c);
  }
  return out;
}

std::optional<double> scaled(const PerfReading& r) {
  if (r.time_running == 0) return std::nullopt;  // never scheduled in this window
  if (r.time_running >= r.time_enabled) return static_cast<double>(r.value);
  return static_cast<double>(r.value) * static_cast<double>(r.time_enabled) /
         static_cast<double>(r.time_running);
}

}  // namespace

std::string_view to_string(PerfCounter counter) {
  switch (counter) {
    case PerfCounter::cycles:
      return "cycles";
    case PerfCounter::instructions:
      return "instructions";
    case PerfCounter::branches:
      return "branches";
    case PerfCounter::branch_misses:
      return "branch-misses";
    case PerfCounter::cache_references:
      return "cache-references";
    case PerfCounter::cache_misses:
      return "cache-misses";
    case PerfCounter::task_clock:
      return "task-clock";
    case PerfCounter::context_switches:
      return "context-switches";
    case PerfCounter::page_faults:
      return "page-faults";
  }
  return "unknown";
}

std::unique_ptr<PerfEventApi> make_linux_perf_event_api() {
  return std::make_unique<LinuxPerfEventApi>();
}

LinuxPerfBackend::LinuxPerfBackend(std::unique_ptr<PerfEventApi> api) : api_(std::move(api)) {
  fds_.fill(-1);
  if (open_group()) {
    mode_ = PerfMode::group;
    open_individually([](PerfCounter c) { return !joins_group(c); });
  } else {
    mode_ =
        open_individually([](PerfCounter) { return true; }) ? PerfMode::individual : PerfMode::unavailable;
  }
  if (mode_ == PerfMode::unavailable) {
    setup_diagnostics_.push_back(
        {DiagnosticKind::measurement,
         "host PMU: no perf_event counter could be opened; samples are timed by the wall "
         "clock only"});
  }
}

LinuxPerfBackend::~LinuxPerfBackend() {
  close_all();
}

bool LinuxPerfBackend::has(PerfCounter counter) const {
  return fds_[slot(counter)] >= 0;
}

void LinuxPerfBackend::close_all() {
  for (int& fd : fds_) {
    if (fd >= 0) api_->close(fd);
    fd = -1;
  }
  group_members_.clear();
  solo_.clear();
}

bool LinuxPerfBackend::open_group() {
  std::string why;
  for (PerfCounter c : kAllCounters) {
    if (!joins_group(c)) continue;
    const int leader = group_members_.empty() ? -1 : fds_[slot(group_members_.front())];
    const int fd = api_->open(c, leader, true);
    if (fd < 0) {
      why = fmt::format("{} could not be opened in it: {}", to_string(c), std::strerror(-fd));
      break;
    }
    fds_[slot(c)] = fd;
    group_members_.push_back(c);
  }
  if (why.empty()) {
    // A group that fits no set of hardware counters opens fine but never runs: probe once.
    const int leader = fds_[slot(group_members_.front())];
    std::vector<PerfReading> readings(group_members_.size());
    api_->reset_and_enable(leader, true);
    api_->disable(leader, true);
    if (!api_->read(leader, true, readings)) {
      why = "reading the group failed";
    } else if (readings.front().time_running == 0) {
      why = "the group never got the hardware counters it needs at once";
    } else {
      return true;
    }
  }
  close_all();
  setup_diagnostics_.push_back(
      {DiagnosticKind::measurement,
       "host PMU: the counter group could not be used (" + why +
           "); counters opened one by one, so each covers slightly different instructions"});
  return false;
}

bool LinuxPerfBackend::open_individually(const std::function<bool(PerfCounter)>& wanted) {
  std::map<int, std::vector<PerfCounter>> failed_by_errno;
  bool any = false;
  for (PerfCounter c : kAllCounters) {
    if (!wanted(c)) continue;
    const int fd = api_->open(c, -1, false);
    if (fd < 0) {
      failed_by_errno[-fd].push_back(c);
    } else {
      fds_[slot(c)] = fd;
      solo_.push_back(c);
      any = true;
    }
  }
  for (const auto& [error, counters] : failed_by_errno) {
    setup_diagnostics_.push_back({DiagnosticKind::measurement, "host PMU: " + join_counters(counters) +
                                                                   " unavailable: " + explain_errno(error)});
  }
  return any;
}

void LinuxPerfBackend::begin() {
  for (PerfCounter c : solo_) api_->reset_and_enable(fds_[slot(c)], false);
  if (mode_ == PerfMode::group) api_->reset_and_enable(fds_[slot(group_members_.front())], true);
}

void LinuxPerfBackend::end() {
  if (mode_ == PerfMode::group) api_->disable(fds_[slot(group_members_.front())], true);
  for (PerfCounter c : solo_) api_->disable(fds_[slot(c)], false);
}

void LinuxPerfBackend::collect(const SampleWindow& window, SampleMeasurement& out) {
  if (mode_ == PerfMode::unavailable) return;
  std::array<std::optional<double>, kPerfCounterCount> value{};
  auto take = [&](PerfCounter c, const PerfReading& r) {
    value[slot(c)] = scaled(r);
    if (r.time_enabled > 0 && r.time_running > 0) {
      least_running_fraction_ = std::min(
          least_running_fraction_, static_cast<double>(r.time_running) / static_cast<double>(r.time_enabled));
    }
  };
  if (mode_ == PerfMode::group) {
    std::vector<PerfReading> readings(group_members_.size());
    if (api_->read(fds_[slot(group_members_.front())], true, readings)) {
      for (std::size_t i = 0; i < readings.size(); ++i) take(group_members_[i], readings[i]);
    }
  }
  for (PerfCounter c : solo_) {
    PerfReading r;
    if (api_->read(fds_[slot(c)], false, std::span<PerfReading>(&r, 1))) take(c, r);
  }

  const double iterations = static_cast<double>(std::max<std::uint64_t>(window.iterations, 1));
  auto push = [&](const MetricValue& m) { out.metrics.push_back(m.with_section("host_pmu")); };
  const auto& cycles = value[slot(PerfCounter::cycles)];
  const auto& instructions = value[slot(PerfCounter::instructions)];
  if (cycles)
    push(
        MetricValue("cycles", *cycles / iterations, "cycles/iter").with_display_name("cycles per iteration"));
  if (instructions)
    push(MetricValue("instructions", *instructions / iterations, "instr/iter")
             .with_display_name("instructions per iteration"));
  if (cycles && instructions && *cycles > 0)
    push(MetricValue("ipc", *instructions / *cycles, "instr/cycle").with_display_name("IPC"));
  const auto& branches = value[slot(PerfCounter::branches)];
  const auto& branch_misses = value[slot(PerfCounter::branch_misses)];
  if (branches && branch_misses && *branches > 0) {
    push(MetricValue("branch_miss_pct", 100.0 * *branch_misses / *branches, "%")
             .with_display_name("branch misses"));
  }
  const auto& references = value[slot(PerfCounter::cache_references)];
  const auto& misses = value[slot(PerfCounter::cache_misses)];
  if (references && misses && *references > 0)
    push(MetricValue("cache_miss_pct", 100.0 * *misses / *references, "%").with_display_name("cache misses"));
  if (const auto& task = value[slot(PerfCounter::task_clock)]) {
    push(MetricValue::duration_ms("task_clock_ms", std::chrono::duration<double>(*task * 1e-9))
             .with_display_name("task clock per sample"));
  }
  if (const auto& switches = value[slot(PerfCounter::context_switches)]) {
    push(MetricValue::integer("context_switches", std::llround(*switches), "count")
             .with_display_name("context switches per sample"));
  }
  if (const auto& faults = value[slot(PerfCounter::page_faults)]) {
    push(MetricValue::integer("page_faults", std::llround(*faults), "count")
             .with_display_name("page faults per sample"));
  }
}

std::vector<Diagnostic> LinuxPerfBackend::diagnostics() const {
  std::vector<Diagnostic> out = setup_diagnostics_;
  if (least_running_fraction_ < 0.99) {  // below 1 % short is rounding, not sharing
    out.push_back(
        {DiagnosticKind::measurement,
         fmt::format("host PMU: counters were multiplexed (counting as little as {:.0f}% of a window); "
                     "their values are scaled estimates",
                     100.0 * least_running_fraction_)});
  }
  return out;
}

}  // namespace diescope::harness
