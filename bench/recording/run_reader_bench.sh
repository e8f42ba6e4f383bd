#!/usr/bin/env bash
# Runs the recording reader benchmark and writes bench/results/recording-reader.txt with the
# machine it ran on. Usage: bench/recording/run_reader_bench.sh [BUILD_DIR]   (default build/ci)
set -euo pipefail
cd "$(dirname "$0")/../.."
build="${1:-build/ci}"
cmake --build "$build" --target recording_reader_bench >/dev/null
out=bench/results/recording-reader.txt
mkdir -p bench/results
{
  echo "# recording reader throughput (bench/recording/run_reader_bench.sh)"
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
