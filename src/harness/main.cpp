#include "diescope/harness/main.hpp"

#include <iostream>

#include <CLI/CLI.hpp>

#include "diescope/harness/runner.hpp"
#include "diescope/core/error.hpp"

namespace diescope::harness {

int bench_main(int argc, char** argv, const std::vector<Benchmark>& benchmarks) {
  CLI::App app{"diescope::harness benchmark executable"};
  std::string filter;
  std::string json_path;
  std::string csv_path;
  bool list = false;
  bool aggregates_only = false;
  StoppingCriteria stopping;
  double max_noise_percent = stopping.max_noise * 100;
  app.add_option("--filter", filter,
                 "run only benchmarks whose name (with axes) matches this regular expression");
  app.add_flag("--list", list, "list the benchmark names (with axes) and exit");
  app.add_option("--json", json_path, "write Google Benchmark JSON to this file (compare.py reads it)");
  app.add_flag("--json-aggregates-only", aggregates_only,
               "one JSON entry per point plus aggregates, not one per sample");
  app.add_option("--csv", csv_path, "write a tidy CSV to this file");
  auto* min_samples = app.add_option("--min-samples", stopping.min_samples, "minimum kept samples per point");
  auto* min_time = app.add_option("--min-time", stopping.min_time_s, "minimum measured seconds per point");
  auto* max_noise = app.add_option("--max-noise", max_noise_percent, "target relative noise, percent")
                        ->check(CLI::PositiveNumber);
  auto* timeout =
      app.add_option("--timeout", stopping.timeout_s, "wall-clock seconds per point before giving up")
          ->check(CLI::PositiveNumber);
  auto* max_samples = app.add_option("--max-samples", stopping.max_samples, "sample cap per point");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : core::kExitUsage;
  }

  RunOptions options;
  options.executable = argc > 0 ? argv[0] : "";
  if (!filter.empty()) {
    try {
      options.filter = std::regex(filter);
    } catch (const std::regex_error& e) {
      std::cerr << "diescope-harness: error: --filter '" << filter << "' is not a regular expression ("
                << e.what()
                << ")\n  fix: pass an ECMAScript regular expression, e.g. --filter 'copy/bytes:.*'\n";
      return core::kExitUsage;
    }
  }
  if (*min_samples || *min_time || *max_noise || *timeout || *max_samples) {
    stopping.max_noise = max_noise_percent / 100;
    options.stopping = stopping;
  }

  if (list) {
    for (const Benchmark& b : benchmarks) {
      for (const AxisPoint& p : cartesian_product(b.config().axes)) {
        const std::string name = b.config().name + p.name_suffix();
        if (!options.filter || std::regex_search(name, *options.filter)) std::cout << name << "\n";
      }
    }
    return 0;
  }

  MultiPrinter printer;
  printer.add(std::make_unique<ConsolePrinter>(std::cout));
  if (!json_path.empty())
    printer.add(std::make_unique<JsonPrinter>(json_path, JsonOptions{!aggregates_only}));
  if (!csv_path.empty()) printer.add(std::make_unique<CsvPrinter>(csv_path));
  std::vector<RunResult> results;
  try {
    results = run_benchmarks(benchmarks, printer, options);
  } catch (const core::Error& e) {
    std::cerr << "diescope-harness: error: " << e.cause() << "\n  fix: " << e.fix() << "\n";
    return e.exit_code();
  }
  if (results.empty()) {
    std::cerr << "diescope-harness: error: no benchmark matched"
              << (filter.empty() ? "" : " --filter '" + filter + "'")
              << "\n  fix: list the names with --list\n";
    return core::kExitUsage;
  }
  std::string failed;
  for (const RunResult& r : results) {
    if (r.error) failed += (failed.empty() ? "" : ", ") + r.name;
  }
  if (!failed.empty()) {
    std::cerr << "diescope-harness: error: these benchmarks failed: " << failed
              << "\n  fix: read each one's error and diagnostics above\n";
    return 1;
  }
  return 0;
}

}  // namespace diescope::harness
