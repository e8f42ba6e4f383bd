#!/usr/bin/env bash
# Speed of the recording reader (Google Benchmark, bench/recording/reader_bench.cpp): a chip stream
# of 8 units, the same with 2 diagnostics and 1 count, the opening pass and a sparse GPU-Util stream,
# each over a synthetic recording of 1,000,000 chip samples read from the page cache. Runs on any CPU
# machine (no GPU). Builds the target, then writes OUT_DIR/recording-reader.txt with the machine's
# details.
#
#   bench/recording/reader_throughput.sh OUT_DIR        BUILD=build/release (a configured build folder)
set -euo pipefail
out_dir=${1:?usage: bench/recording/reader_throughput.sh OUT_DIR   (BUILD=build folder, default build/release)}
cd "$(dirname "$0")/../.."
build=${BUILD:-build/release}
[ -f "$build/CMakeCache.txt" ] || { echo "reader_throughput: $build is not a configured build folder (cmake --preset release)" >&2; exit 2; }
cmake --build "$build" --target recording_reader_bench >/dev/null
mkdir -p "$out_dir"
out="$out_dir/recording-reader.txt"
{
  echo "# recording reader throughput (bench/recording/reader_throughput.sh)"
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "nproc: $(nproc)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
  echo "load average before the run: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "compiler: $(c++ --version | head -1)"
  echo "recordings: long_run_spec cut to 1,000,000 chip samples (10 ms), read from the page cache;"
  echo "  items_per_second counts chip samples (chip streams), lines (open) or GPU-Util readings (util),"
  echo "  per second of CPU time (Google Benchmark's default); Time is wall-clock, which suffers when other"
  echo "  jobs share the CPU (see the load averages)."
  echo
  "$build/bin/recording_reader_bench" --benchmark_repetitions=3 --benchmark_report_aggregates_only=true 2>&1
  echo
  echo "load average after the run: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out"
