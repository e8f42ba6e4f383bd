// A ready-made main() for benchmark executables: parses the command line, runs the benchmarks,
// prints the console table and writes JSON and CSV when asked.
//
//   int main(int argc, char** argv) { return diescope::harness::bench_main(argc, argv, {copy_benchmark()}); }
//
// Options: --filter REGEX, --list, --json PATH, --json-aggregates-only, --csv PATH, --min-samples N,
// --min-time S, --max-noise PERCENT, --timeout S, --max-samples N.
#pragma once

#include <vector>

#include "diescope/harness/benchmark.hpp"

namespace diescope::harness {

// Exit code: 0 when every point ran or was skipped, 1 when any failed, 2 for a bad option.
int bench_main(int argc, char** argv, const std::vector<Benchmark>& benchmarks);

}  // namespace diescope::harness
