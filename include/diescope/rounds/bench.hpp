// `diescope bench`: repeated rounds of `diescope run` on the same command, each summarised over
// its steady window, with statistics across the rounds that were kept (docs/bench-command.md).
//
// Layout of a bench folder:
//   bench.json                       every round's headline, kept/left-out lists, the statistics
//                                    (docs/bench.schema.json); rewritten atomically after each round
//   round-01/gpu0.dsrec              round 1's recording of GPU 0 (run_type "round")
//   round-01/gpu0.dsrec.report/      its report.json and samples.csv
//   round-01/stdout.log              the command's stdout in round 1 (unless shown on the terminal)
#pragma once

#include <filesystem>
#include <functional>
#include <iosfwd>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "diescope/rounds/rounds.hpp"
#include "diescope/rounds/stats.hpp"
#include "diescope/collect/run.hpp"

namespace diescope::rounds {

inline constexpr int kBenchSchemaVersion = 1;
// The statistics need at least this many kept rounds; fewer is a failed bench.
inline constexpr int kMinKeptRounds = 2;
// The exit code of a bench that ran but kept too few rounds on some GPU.
inline constexpr int kExitTooFewRounds = 1;

// One GPU in one round.
struct GpuRound {
  int gpu_index = -1;
  recording::GpuIdentity gpu;
  std::filesystem::path recording;
  std::filesystem::path report;  // report.json; empty when the recording could not be analysed
  Verdict verdict;
  bool window_found = false;
  std::optional<analysis::WindowFinding> window_finding;  // nullopt when the recording could not be analysed
  bool counters = false;                                  // chip samples were recorded
  std::string counters_why;                               // why not, or why they stopped early
  std::optional<std::string> limiting_unit;               // label, over the window
  std::vector<Figure> figures;                            // over the window; empty when there is none
  // The report's rounded headline over the window, or over the run when there is no window
  // (headline_covers says which: "window" or "run"); null when the recording could not be analysed.
  nlohmann::json headline;
  std::string headline_covers;
};

struct Round {
  int number = 0;  // 1-based
  std::filesystem::path folder;
  double duration_s = 0;
  int exit_code = 0;            // the command's
  recording::RunEnding ending;  // exited, or the signal that ended it
  bool interrupted = false;     // diescope was sent SIGINT or SIGTERM during the round
  std::string failure;          // the run could not be made (the error's cause); empty otherwise
  std::vector<std::string> warnings;
  std::vector<GpuRound> gpus;
};

struct FigureStats {
  std::string key, label, unit, group;
  Summary summary;
  std::vector<int> missing_in;  // kept rounds in which the figure was not available
};

struct LeftOut {
  int round = 0;
  std::string reason;
};

struct GpuBench {
  int gpu_index = -1;
  recording::GpuIdentity gpu;
  std::vector<int> kept;
  std::vector<LeftOut> left_out;
  std::vector<FigureStats> figures;
  std::map<std::string, int> limiting_units;  // label -> kept rounds in which it limited
  bool enough = false;                        // kept.size() >= kMinKeptRounds
};

struct BenchOptions {
  int rounds = 5;
  collect::RunOptions run;              // every round's options; output_dir and run_type are set per round
  std::filesystem::path output_dir;     // the bench folder
  std::optional<std::string> workload;  // the bundled workload's name when the command runs one
  bool show_output = false;             // the command's stdout to diescope's; else round-NN/stdout.log
  // Called before each round with its number and options (tests vary a round through it).
  std::function<void(int round, collect::RunOptions&)> adjust_round;
};

struct BenchResult {
  std::vector<std::string> command;
  std::optional<std::string> workload;
  int rounds_requested = 0;
  double interval_ms = 0;
  double drain_ms = 0;
  recording::TimeNs start_ns = 0;
  recording::TimeNs end_ns = 0;
  bool interrupted = false;     // stopped early by SIGINT/SIGTERM
  std::string stopped_because;  // why fewer rounds than requested ran; empty when all ran
  std::vector<Round> rounds;
  std::vector<GpuBench> gpus;  // statistics, in GPU order
  std::filesystem::path bench_json;
  // The error that stopped the bench in a round after the first (the command line reports it, with
  // its exit code, after the summary); unset otherwise.
  struct Failure {
    std::string cause, fix;
    int exit_code = 0;
  };
  std::optional<Failure> failure;
};

// Told about the rounds as they go (the terminal progress bar).
class ProgressSink {
 public:
  virtual ~ProgressSink() = default;
  virtual void round_started(int round, int rounds) = 0;
  virtual void round_finished(const Round& round, int rounds) = 0;
};

// Runs the rounds through `nvml` and writes every round's report and bench.json (after each round).
// A SIGINT or SIGTERM stops the bench after the round it arrives in; the result says so. An Error
// from the run (no permission, command not found, ...) in round 1 is rethrown (nothing was
// measured); in a later round it stops the bench and is returned in `failure`, with the rounds
// before it summarised in bench.json. Throws UsageError when the bench folder already holds one.
BenchResult run_bench(const BenchOptions& options, const collect::Nvml& nvml, ProgressSink& progress);

// Analyses one round's recording over its steady window, writes its report.json and samples.csv
// into `<recording>.report/`, and judges it. A recording that cannot be read is left out, named.
GpuRound evaluate_recording(const std::filesystem::path& recording, int gpu_index);

// The statistics over the rounds: per GPU, the kept and left-out rounds and each figure's summary
// over the kept rounds that have it. A round that failed or has no recording for a GPU is left out
// for that GPU.
std::vector<GpuBench> summarise_rounds(const std::vector<Round>& rounds);

// bench.json (docs/bench.schema.json). Figures that could not be computed are null beside a reason.
nlohmann::json bench_json(const BenchResult& result);

// The summary printed at the end: per GPU the rounds, those left out and why, and the statistics.
std::string render_summary(const BenchResult& result);

// Empty when every GPU kept at least kMinKeptRounds rounds; otherwise the message saying which did not.
std::string too_few_rounds(const BenchResult& result);

// Throws core::Error, with its fix and exit code, when the bench failed (the failure's), was
// interrupted (130) or kept too few rounds (kExitTooFewRounds, the fix said from the rounds' reasons:
// no window, or partial coverage); returns when it kept enough.
void require_kept_rounds(const BenchResult& result);

// Progress on a stream: a redrawn bar when it is a terminal, plain lines otherwise.
class StreamProgress final : public ProgressSink {
 public:
  StreamProgress(std::ostream& out, bool terminal) : out_(out), terminal_(terminal) {}
  void round_started(int round, int rounds) override;
  void round_finished(const Round& round, int rounds) override;

 private:
  std::ostream& out_;
  bool terminal_;
  double elapsed_s_ = 0;  // sum of the finished rounds' durations
  int finished_ = 0;
};

// "[#####-----]": `done` of `total` filled, `width` cells between the brackets.
std::string progress_bar(int done, int total, int width);

// One line about a finished round: kept or left out (why) per GPU, the command's exit when not 0.
std::string describe_round(const Round& round);

}  // namespace diescope::rounds
