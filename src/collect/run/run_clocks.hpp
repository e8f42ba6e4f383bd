// `diescope run`'s own clocks (docs/footprint.md#runs-own-parts): with DIESCOPE_RUN_TIMING=1 in its
// environment, run times each part of its loop by the loop thread's CPU clock and says it in one
// `run-timing` note at the end. Off (the default) every hook is a test of one flag.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <string>

#include <fmt/format.h>

#include "diescope/recording/format.hpp"

namespace diescope::collect {

// The parts of run's loop, each timed exclusive of the parts nested in it.
enum class RunPart : std::uint8_t {
  loop,             // the loop's own work between the parts below: its clocks, the descriptors it polls
  wait,             // the driver's poll(2) the loop sleeps in, the wake from it and the driver's own work
  signals,          // reading the signal pipe
  command_output,   // reading and teeing the command's stdout, scanning it for markers
  sampler_pipe,     // reading the sampler child's pipes and parsing its lines
  sampler_records,  // each message: checking, evaluating and formatting a sample into the writer's buffer
  write,            // write(2) of the writer's buffer, once a drain
  nvml_records,     // formatting NVML's readings into the writer's buffer
  host,             // the host probes' read and their records
  gpm,              // GPM samples
  child_wait,       // waitpid on the command
  tick,             // the tick's clock-jump check
  nvml,             // NVML's calls; the first of kNvmlSets, one per NvmlReadSet (nvml_set)
};
// NVML's read sets: util, clocks, power, engines, processes, holders, one bit each.
inline constexpr std::size_t kNvmlSets = 64;
inline constexpr std::size_t kRunParts = static_cast<std::size_t>(RunPart::nvml) + kNvmlSets;

// Which NVML reads a read made, as a part of its own (bits in the order of RunPart's comment).
inline std::size_t nvml_set(bool util, bool clocks, bool power, bool engines, bool processes, bool holders) {
  return (util ? 1U : 0U) | (clocks ? 2U : 0U) | (power ? 4U : 0U) | (engines ? 8U : 0U) |
         (processes ? 16U : 0U) | (holders ? 32U : 0U);
}

inline recording::TimeNs loop_thread_cpu_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<recording::TimeNs>(ts.tv_sec) * recording::kNsPerSecond + ts.tv_nsec;
}

class RunClocks {
 public:
  bool on() const { return on_; }
  void start() {
    on_ = true;
    last_ = loop_thread_cpu_ns();
  }
  // Enters part `index` (RunPart, or RunPart::nvml + nvml_set): the time since the last change goes to
  // the part that was running. Returns the part to go back to.
  std::size_t enter(std::size_t index) {
    if (!on_) return 0;
    const std::size_t was = current_;
    lap();
    current_ = index;
    ++count_[index];
    return was;
  }
  void leave(std::size_t back) {
    if (!on_) return;
    lap();
    current_ = back;
  }
  // A wake of the loop: the time since the last change, the driver's wait and its own work around it
  // (run waits through collect::LiveDriver), goes to RunPart::wait.
  void wake() {
    ++wakes_;
    if (!on_) return;
    const std::size_t was = current_;
    current_ = static_cast<std::size_t>(RunPart::wait);
    ++count_[current_];
    lap();
    current_ = was;
  }
  long wakes() const { return wakes_; }
  long clock_reads() const { return clock_reads_; }
  recording::TimeNs cpu_ns(std::size_t index) const { return cpu_[index]; }
  long count(std::size_t index) const { return count_[index]; }
  // "part count cpu_us" for every part that ran, NVML's sets as nvml_<letters> (u c p e r h).
  std::string parts_text() const {
    static constexpr std::array<const char*, static_cast<std::size_t>(RunPart::nvml)> kNames = {
        "loop",         "wait", "signals", "command_output", "sampler_pipe", "sampler_records", "write",
        "nvml_records", "host", "gpm",     "child_wait",     "tick"};
    std::string text;
    for (std::size_t i = 0; i < kRunParts; ++i) {
      if (count_[i] == 0 && cpu_[i] == 0) continue;
      std::string name;
      if (i < kNames.size()) {
        name = kNames[i];
      } else {
        name = "nvml_";
        const std::size_t set = i - kNames.size();
        for (std::size_t bit = 0; bit < 6; ++bit)
          if ((set >> bit) & 1U) name += "ucperh"[bit];
      }
      text += fmt::format("{}{} {} {}", text.empty() ? "" : " ", name, count_[i], cpu_[i] / 1000);
    }
    return text;
  }

 private:
  void lap() {
    const recording::TimeNs now = loop_thread_cpu_ns();
    ++clock_reads_;
    cpu_[current_] += now - last_;
    last_ = now;
  }
  bool on_ = false;
  std::size_t current_ = 0;
  recording::TimeNs last_ = 0;
  long wakes_ = 0;
  long clock_reads_ = 0;
  std::array<recording::TimeNs, kRunParts> cpu_{};
  std::array<long, kRunParts> count_{};
};

// Times a scope as one part (nothing when the clocks are off).
class RunPartScope {
 public:
  RunPartScope(RunClocks& clocks, std::size_t index) : clocks_(clocks), back_(clocks.enter(index)) {}
  RunPartScope(RunClocks& clocks, RunPart part) : RunPartScope(clocks, static_cast<std::size_t>(part)) {}
  ~RunPartScope() { clocks_.leave(back_); }
  RunPartScope(const RunPartScope&) = delete;
  RunPartScope& operator=(const RunPartScope&) = delete;

 private:
  RunClocks& clocks_;
  std::size_t back_;
};

}  // namespace diescope::collect
