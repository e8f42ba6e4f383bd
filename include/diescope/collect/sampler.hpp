// The chip-counter sampler: a child process that runs CUPTI PM sampling device-wide and streams
// samples to its parent over a pipe. Keeping CUPTI in a child means a crash in NVIDIA's counter
// decoder ends the counters, not diescope: the parent keeps what arrived and says why it stops.
//
// Wire protocol (version 1): one message per '\n'-terminated ASCII line, fields separated by one
// space, the first field names the message. Times are ns on the host's CLOCK_REALTIME timeline
// (the child converts GPU timestamps before sending). Doubles are written shortest-round-trip;
// "nan" is a value that could not be read. A free-text field is always last and has no newline.
//
//   hello <version> <pid> <mode>                      mode: cupti | fake
//   device <index> <cc> <sm_count> <uuid> <chip> <name...>
//   metrics <n> <name_1> ... <name_n>                 the order of every sample's values
//   clock <offset_ns> <uncertainty_ns> <method...>    realtime = gpu timestamp + offset
//   on <ts_ns>                                        sampling started (first sample spans setup)
//   s <start_ns> <end_ns> <v_1> ... <v_n>             one sample
//   drain <ts_ns> <samples> <decode_us> <blanked>     one drain; blanked: samples sent without values
//                                                     because a decode split them (see cupti_sampler.cpp)
//   overflow <ts_ns> <text...>                        the hardware buffer overflowed: samples lost
//   gap <from_ns> <to_ns>                             consecutive samples do not touch: samples lost
//   note <topic> <text...>
//   off <ts_ns> <reason...>                           sampling stopped and counters disabled
//   error <kind> <code> <text...>                     fatal; the child exits after it
//   bye <samples_sent>                                clean end; nothing follows
//
// The parent stops the child by closing its stdin (or writing "stop\n" to it, or SIGTERM): the
// child then stops sampling, drains what is left, disables the counters, says "off" and "bye".
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <variant>
#include <vector>

#include "diescope/core/child_process.hpp"
#include "diescope/recording/records.hpp"

namespace diescope::collect {

inline constexpr int kSamplerProtocolVersion = 1;

namespace sampler_msg {

struct Hello {
  int version = kSamplerProtocolVersion;
  long pid = 0;
  std::string mode;  // "cupti" or "fake"
};
struct Device {
  int index = -1;
  int compute_capability = 0;  // major*10+minor
  int sm_count = 0;
  std::string uuid;  // "GPU-xxxxxxxx-...", as NVML writes it
  std::string chip;  // CUPTI chip name, "GH100"
  std::string name;  // "NVIDIA H200"
};
struct Metrics {
  std::vector<std::string> names;
};
struct Clock {
  recording::TimeNs offset_ns = 0;       // realtime = gpu + offset
  recording::TimeNs uncertainty_ns = 0;  // half-width of the bracket the offset was measured in
  std::string method;
};
struct On {
  recording::TimeNs ts_ns = 0;
};
struct Sample {
  recording::TimeNs start_ns = 0;
  recording::TimeNs end_ns = 0;
  std::vector<double> values;  // one per metric, in the "metrics" order
};
struct Drain {
  recording::TimeNs ts_ns = 0;
  long samples = 0;
  long decode_us = 0;
  long blanked = 0;  // samples in this drain sent with NaN values: a decode split them
};
struct Overflow {
  recording::TimeNs ts_ns = 0;
  std::string text;
};
struct Gap {
  recording::TimeNs from_ns = 0;
  recording::TimeNs to_ns = 0;
};
struct Note {
  std::string topic;
  std::string text;
};
struct Off {
  recording::TimeNs ts_ns = 0;
  std::string reason;
};

// Why the child could not sample. Each kind maps to one message with a fix (describe_error).
enum class ErrorKind {
  permission,   // CUPTI_ERROR_INSUFFICIENT_PRIVILEGES
  busy,         // the counters are held by another profiler (ncu, nsys, DCGM profiling, ...)
  no_driver,    // no libcuda.so.1 or cuInit failed
  no_device,    // the device index does not exist
  unsupported,  // the chip or configuration cannot PM-sample (vGPU, MIG, pre-Turing, ...)
  metrics,      // the metric set is invalid or needs more than one pass
  usage,        // bad arguments to the child
  cupti,        // any other CUPTI failure
};
struct Error {
  ErrorKind kind = ErrorKind::cupti;
  long code = 0;  // the vendor's error code, 0 when none
  std::string text;
};
struct Bye {
  long samples = 0;
};

}  // namespace sampler_msg

using SamplerMessage =
    std::variant<sampler_msg::Hello, sampler_msg::Device, sampler_msg::Metrics, sampler_msg::Clock,
                 sampler_msg::On, sampler_msg::Sample, sampler_msg::Drain, sampler_msg::Overflow,
                 sampler_msg::Gap, sampler_msg::Note, sampler_msg::Off, sampler_msg::Error, sampler_msg::Bye>;

// One line without its '\n'. Free text has newlines replaced by spaces.
std::string format_message(const SamplerMessage& message);
// The same line appended to `out`: the child formats thousands of samples a second into one buffer.
void append_message(std::string& out, const SamplerMessage& message);
// Parses one line (without '\n'). Returns nullopt and sets `why` when the line is not a message.
std::optional<SamplerMessage> parse_message(std::string_view line, std::string* why = nullptr);

std::string_view error_kind_name(sampler_msg::ErrorKind kind);
std::optional<sampler_msg::ErrorKind> error_kind_from_name(std::string_view name);

// What a user reads for a sampler error: the cause and the fix.
struct ErrorText {
  std::string cause;
  std::string fix;
};
ErrorText describe_error(const sampler_msg::Error& error, int device_index);

// How the parent starts one child.
struct SamplerConfig {
  std::string executable;                 // diescope-cupti, or a fake speaking the same protocol
  std::vector<std::string> leading_args;  // e.g. {"sample"} for diescope-cupti
  int device = 0;
  double interval_ms = recording::kDefaultIntervalMs;
  double drain_ms = 1000;
  std::vector<std::string> metrics;
  std::vector<std::string> extra_args;  // appended last (e.g. "--fake", "--crash-after", "5")
};

// The child's exit, as the parent saw it.
struct SamplerExit {
  bool exited = false;  // exited normally (else killed by a signal)
  int exit_code = -1;
  int signal = 0;
  bool said_bye = false;
  std::string stderr_tail;  // the last lines the child wrote to stderr
  // "exited with code 3", "killed by signal SIGSEGV (Segmentation fault)".
  std::string describe() const;
  bool clean() const { return exited && exit_code == 0 && said_bye; }
};

// Finds diescope-cupti: $DIESCOPE_CUPTI if set, else beside the running executable. Empty if absent.
std::string find_sampler_executable();

// Parent side of one child. Not thread-safe; one owner polls output_fd() and calls pump().
class SamplerProcess {
 public:
  // Starts the child in its own process group (a terminal's Ctrl-C reaches the measured command,
  // not the sampler; the parent stops it). Throws DeviceError when the executable cannot be run.
  explicit SamplerProcess(const SamplerConfig& config);
  ~SamplerProcess();
  SamplerProcess(const SamplerProcess&) = delete;
  SamplerProcess& operator=(const SamplerProcess&) = delete;

  pid_t pid() const { return child_.pid(); }
  int device() const { return device_; }
  // Readable when the child wrote something or closed its output.
  int output_fd() const { return child_.stdout_pipe().get(); }
  int stderr_fd() const { return child_.stderr_pipe().get(); }

  // Reads what is available without blocking and appends every complete message to `out`.
  // A line that is not a message becomes a Note with topic "protocol". Returns false once the
  // child has closed its output (it ended or crashed) and everything was read.
  bool pump(std::vector<SamplerMessage>& out);
  // Blocks up to `timeout` for at least one message or the end of output.
  bool pump_for(std::vector<SamplerMessage>& out, std::chrono::milliseconds timeout);
  // Reads the child's stderr into the tail buffer without blocking.
  void pump_stderr();

  // Asks the child to stop (closes its stdin). Idempotent.
  void request_stop();
  void send_signal(int sig);
  bool output_closed() const { return !child_.stdout_pipe(); }
  // Waits for the child's exit; after `timeout` it is killed (SIGKILL). Reaps it. Idempotent.
  // Messages read meanwhile are kept for the next pump().
  SamplerExit wait(std::chrono::milliseconds timeout);
  long samples_received() const { return samples_received_; }

 private:
  void read_into_buffer(core::UniqueFd& fd, std::string& buffer, bool& closed);
  void parse_buffer(std::vector<SamplerMessage>& out, bool flush_partial);

  core::ChildProcess child_;  // its stdin says "stop" by closing; its stdout carries the protocol
  int device_ = 0;
  std::string out_buffer_;
  std::vector<SamplerMessage> pending_;  // read by wait(), handed out by the next pump()
  std::string err_tail_;
  bool said_bye_ = false;
  long samples_received_ = 0;
  std::optional<SamplerExit> exit_;
};

// Entry point of `diescope-cupti sample ...` (the child). Returns its exit code.
int sampler_main(int argc, char** argv);

// The fake child: speaks the protocol with synthetic values and no GPU. Used by CPU tests and by
// `diescope-cupti sample --fake`. Value of metric j in sample k: 10*(j+1) + (k % 10).
// Options: --device N --interval-ms X --drain-ms Y --metrics a,b,... [--crash-after N]
//          [--fail-with KIND] [--max-samples N] [--gap-at N] [--fake-chip NAME (default GH100)]
//          [--blank-each-drain (the first sample of each drain after the first has NaN values)]
int fake_sampler_main(int argc, char** argv);

}  // namespace diescope::collect
