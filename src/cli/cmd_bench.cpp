// `diescope bench [opts] -- CMD ARGS` and `diescope bench --workload NAME [-- ARGS]`: repeated
// rounds of `diescope run` with the steady window, statistics across the kept rounds, rounds with
// no window or partial coverage left out and named (docs/bench-command.md).
#include <fmt/core.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "command.hpp"
#include "options.hpp"
#include "diescope/rounds/bench.hpp"
#include "diescope/collect/nvml.hpp"
#include "diescope/core/error.hpp"
#include "diescope/workloads/launcher.hpp"
#include "diescope/workloads/options.hpp"

namespace diescope::cli {
namespace {

namespace fs = std::filesystem;

struct BenchCliOptions {
  int rounds = 5;
  double interval_ms = 0;  // the defaults come from the rules (options.hpp)
  double drain_ms = 0;
  std::string report_dir;
  std::vector<int> gpus;
  std::string workload;
  bool show_output = false;
  std::vector<std::string> command;  // after --: the command, or the workload's arguments
};

std::string default_bench_dir() {
  std::time_t t = std::time(nullptr);
  std::tm local{};
  localtime_r(&t, &local);
  char name[64];
  std::strftime(name, sizeof name, "diescope-bench-%Y%m%d-%H%M%S", &local);
  return name;
}

// The command each round runs: the given one, or this diescope running the bundled workload.
std::vector<std::string> round_command(const BenchCliOptions& cli) {
  if (cli.workload.empty()) {
    if (cli.command.empty())
      throw core::UsageError(
          "no command to bench",
          "put it after --, e.g. diescope bench --rounds 5 -- ./app, or bench a bundled workload with "
          "--workload stream");
    return cli.command;
  }
  if (!workloads::is_workload(cli.workload))
    throw core::UsageError("unknown workload '" + cli.workload + "'",
                           "choose one of: ffma, stream, gemm, duty");
  // Check the workload's own arguments now, not once per round.
  std::vector<std::string> args{cli.workload};
  args.insert(args.end(), cli.command.begin(), cli.command.end());
  const workloads::ParsedCommand parsed = workloads::parse_command_line(args);
  if (!parsed.options)
    throw core::UsageError("--help was given as the workload's argument",
                           "see `diescope workload " + cli.workload + " --help`, then bench without --help");
  const fs::path self = workloads::current_executable();
  workloads::find_workload_binary(self);  // throws, naming where it looked, when it is not built
  std::vector<std::string> command{self.string(), "workload"};
  command.insert(command.end(), args.begin(), args.end());
  return command;
}

int bench_command(const BenchCliOptions& cli) {
  if (cli.rounds < rounds::kMinKeptRounds || cli.rounds > 10'000)
    throw core::UsageError(
        fmt::format("--rounds {} is out of range", cli.rounds),
        fmt::format("give from {} to 10000 rounds: the spread needs at least {} kept rounds (default 5)",
                    rounds::kMinKeptRounds, rounds::kMinKeptRounds));
  check_range(kIntervalMs, cli.interval_ms);
  check_range(kDrainMs, cli.drain_ms);

  rounds::BenchOptions options;
  options.rounds = cli.rounds;
  options.run.command = round_command(cli);
  options.run.interval_ms = cli.interval_ms;
  options.run.drain_ms = cli.drain_ms;
  if (!cli.gpus.empty()) options.run.gpus = cli.gpus;
  options.output_dir = cli.report_dir.empty() ? fs::path(default_bench_dir()) : fs::path(cli.report_dir);
  if (!cli.workload.empty()) options.workload = cli.workload;
  options.show_output = cli.show_output;

  std::unique_ptr<collect::Nvml> nvml = collect::Nvml::load();
  std::cerr << fmt::format(
      "diescope bench: {} rounds, each summarised over its steady window; results in {}{}\n", cli.rounds,
      options.output_dir.string(), cli.show_output ? "" : " (the command's output in round-NN/stdout.log)");
  rounds::StreamProgress progress(std::cerr, ::isatty(2) == 1);
  const rounds::BenchResult result = rounds::run_bench(options, *nvml, progress);
  for (const auto& round : result.rounds)
    for (const auto& warning : round.warnings)
      std::cerr << "diescope: warning: round " << round.number << ": " << warning << "\n";
  std::cout << rounds::render_summary(result) << std::flush;

  rounds::require_kept_rounds(result);
  return 0;
}

std::function<int()> setup_bench(Args sub) {
  auto opt = std::make_shared<BenchCliOptions>();
  sub.whole("--rounds", opt->rounds, "rounds of `diescope run` (default 5; at least 2)");
  sub.number(kIntervalMs, opt->interval_ms);
  sub.number(kDrainMs, opt->drain_ms, {}, {"--poll-ms"});
  sub.text("--output", opt->report_dir,
           "folder for bench.json and the rounds' recordings and reports (default "
           "diescope-bench-<date>-<time> in the current folder)",
           {"--report"})
      .type_name("DIR");
  sub.gpu_list(opt->gpus, "GPU indexes to measure, as nvidia-smi numbers them (default: every GPU)");
  sub.option("--workload", opt->workload,
             "bench a bundled workload (ffma, stream, gemm, duty); arguments after -- go to the workload");
  sub.flag("--show-output", opt->show_output,
           "copy the command's stdout to the terminal (default: to round-NN/stdout.log)");
  sub.option("command", opt->command, "the command to bench, after -- (or the workload's arguments)");
  sub.footer(
      "Every round is summarised over the steady window between the lines 'diescope: measure start' and\n"
      "'diescope: measure stop' that the command prints, or the one a line 'diescope: measure window START\n"
      "STOP' (Unix seconds) or 'diescope: measure last SECONDS' gives afterwards. A round with no window,\n"
      "or whose counters covered under 90% of it, is left out of the statistics and named. Exit code 0 when\n"
      "at least 2 rounds were kept.\n"
      "Examples: diescope bench --rounds 5 --workload stream\n"
      "          diescope bench --rounds 10 -- python train.py --steps 200\n");
  return [opt]() { return bench_command(*opt); };
}

const CommandRegistrar registrar{Command{"bench", 15, setup_bench,
                                         "repeated rounds of run on the steady window: mean, spread and 95% "
                                         "interval across rounds, partial rounds named"}};

}  // namespace
}  // namespace diescope::cli
