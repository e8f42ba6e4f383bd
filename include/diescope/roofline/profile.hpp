// `diescope roofline profile`: each target profiled by the backend one after another, a target that
// fails or times out named and skipped (docs/roofline.md#profiling).
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "diescope/roofline/sampled.hpp"
#include "diescope/roofline/table.hpp"

namespace diescope::roofline {

// Backend settings from --NAME VALUE (or -O NAME=VALUE; docs/roofline.md#backend-settings).
struct NcuSettings {
  std::string ncu;                    // the ncu to run ("" = from PATH)
  std::vector<std::string> metrics;   // added to the table's own
  std::vector<std::string> ncu_args;  // passed to ncu before the target
  bool aslr = false;                  // true: leave address-space randomisation on
  std::string gpus;                   // --gpus LIST: ncu --devices LIST (empty: every GPU)
  std::string lib;  // range, sampled: libdiescope-range.so ("" = beside the diescope binary)
  // sampled (docs/roofline.md#the-sampled-backend): the two-point measurement's N (1: one run) and
  // the window rules' constants.
  int iterations = 1;
  SampledConstants sampled;
};

// One backend setting: the flag --NAME VALUE of `roofline profile`, which --help lists under its
// backends' heading, and its old spelling -O NAME=VALUE (docs/roofline.md#backend-settings).
struct BackendSetting {
  std::string name;                // "iterations"
  std::string value_name;          // the value in --help: "N"
  std::vector<Profiler> backends;  // the backends that take it
  std::string help;
  bool repeatable = false;  // each use adds a value (metrics, ncu-arg); else one use
};
const std::vector<BackendSetting>& backend_settings();
// The backends --profiler names: ncu, range, sampled.
std::vector<std::string> profiler_names();
// The heading --help lists a setting under: "sampled backend", "range and sampled backends".
std::string backend_group(const BackendSetting& setting);

// The settings as given: "--NAME=VALUE" from a flag, "NAME=VALUE" from -O; a message quotes each as it
// was written. Throws UsageError for an unknown profiler or name, a name of another backend, or a bad
// value; the fix lists the backend's flags.
NcuSettings parse_backend_settings(const std::string& profiler, const std::vector<std::string>& settings);

struct Target {
  std::string name;               // file name of the output: DIR/<name>.ncu-rep
  std::vector<std::string> argv;  // the command
  bool google_benchmark = false;  // its JSON goes to DIR/<name>.benchmark.json
};
// `-- CMD ARGS` is one target; otherwise each executable is one (names made unique with -2, -3).
std::vector<Target> make_targets(const std::vector<std::string>& executables,
                                 const std::vector<std::string>& command);
// Whether the file is a Google Benchmark binary: it holds the library's flag name
// "benchmark_out_format" (docs/roofline.md#profiling).
bool is_google_benchmark(const std::filesystem::path& executable);

// The ncu command line for one target.
std::vector<std::string> ncu_command(const std::string& ncu, const NcuSettings& s, const Target& t,
                                     const std::filesystem::path& report_base, const std::string& machine);

// The caches ncu's launches start from under these settings (Row::caches): "unflushed" when the
// ncu arguments say --cache-control none (the last such argument wins, as in ncu), else "flushed".
std::string ncu_caches(const NcuSettings& s);

// How one target's profiling ended.
struct ProfileOutcome {
  bool ok = false;
  std::string cause;  // when not ok: one sentence
  std::string fix;
  double seconds = 0;
};
// Runs ncu for one target, its output to `log`; stops it (its whole process group) after `timeout`.
ProfileOutcome run_profiler(const std::vector<std::string>& argv, const std::filesystem::path& log,
                            std::chrono::duration<double> timeout);
// Runs the program itself (the range backend) with `env` added, its output to `log`; stops its process
// group after `timeout`. Not ok when it exits non-zero or dies of a signal (the cause says which).
ProfileOutcome run_target(const std::vector<std::string>& argv,
                          const std::vector<std::pair<std::string, std::string>>& env,
                          const std::filesystem::path& log, std::chrono::duration<double> timeout);
// The cause ncu's log gives for a failure (its first ==ERROR== line, a target's crash), or empty.
std::string ncu_failure_cause(const std::string& log_text);

}  // namespace diescope::roofline
