// What both sampler children (CUPTI and fake) share: their arguments, how they learn to stop, and
// how they write protocol lines to the parent.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "diescope/collect/sampler.hpp"

namespace diescope::collect::child {

struct Args {
  int device = 0;
  double interval_ms = 10;
  double drain_ms = 1000;
  std::vector<std::string> metrics;
  // CUPTI only.
  std::size_t hw_buffer_mb = 512;
  bool keep_latest = false;  // hardware buffer append mode; KEEP_OLDEST reports overflow
  // Fake only.
  bool fake = false;
  long crash_after = -1;     // raise SIGSEGV after this many samples
  std::string fail_with;     // an ErrorKind name: report it and exit
  long max_samples = -1;     // stop by itself after this many
  long gap_at = -1;          // skip one sample's time after this many, to show a gap
};

// Parses the child's command line (argv[0] is the program or subcommand name). Returns nullopt and
// sets `why` on a bad argument.
std::optional<Args> parse_args(int argc, char** argv, std::string& why);

std::int64_t realtime_ns();
std::int64_t monotonic_ns();

// Watches stdin (EOF or a "stop" line) and SIGTERM/SIGINT/SIGHUP; one per process.
class StopWatcher {
 public:
  StopWatcher();
  ~StopWatcher();
  // Sleeps up to `timeout_ms`; returns true once a stop has been asked for.
  bool wait(std::int64_t timeout_ms);
  bool stop_requested() const { return stop_; }
  std::string reason() const { return reason_; }

 private:
  bool stop_ = false;
  std::string reason_;
  std::string stdin_buffer_;
};

// Finds samples lost between two that should touch: with a time trigger each sample starts where
// the previous one ended. A hole longer than half an interval is reported as a gap.
class Continuity {
 public:
  explicit Continuity(std::int64_t interval_ns) : tolerance_ns_(interval_ns / 2) {}
  std::optional<sampler_msg::Gap> check(std::int64_t start_ns, std::int64_t end_ns);
  void reset() { last_end_ns_.reset(); }

 private:
  std::int64_t tolerance_ns_;
  std::optional<std::int64_t> last_end_ns_;
};

// Buffers lines and writes them to stdout. A parent that has gone away (EPIPE) marks it broken.
class Emitter {
 public:
  void emit(const SamplerMessage& message);
  // Writes everything buffered. Returns false when the parent can no longer read.
  bool flush();
  bool broken() const { return broken_; }
  long samples() const { return samples_; }

 private:
  std::string buffer_;
  bool broken_ = false;
  long samples_ = 0;
};

}  // namespace diescope::collect::child
