#!/usr/bin/env bash
# Runs analysis_throughput on 1 h, 6 h and 24 h recordings, each in its own process so each peak RSS
# is its own, and writes bench/results/analysis-throughput.txt with the machine's details.
#   bench/analysis/run_throughput.sh BUILD_DIR
set -euo pipefail
build=${1:?usage: run_throughput.sh BUILD_DIR}
bin="$build/bin/analysis_throughput"
root=$(cd "$(dirname "$0")/../.." && pwd)
out="$root/bench/results/analysis-throughput.txt"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/diescope-analysis-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
{
  echo "# analyze() throughput and peak memory (bench/analysis/run_throughput.sh)"
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores"
  echo "memory: $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
  echo "compiler: $(c++ --version | head -1)"
  echo "build: $(grep -m1 CMAKE_BUILD_TYPE "$build/CMakeCache.txt" | cut -d= -f2)"
  echo "recording: 10 ms chip samples (first spans 614 ms of setup), 8 units, 2 diagnostics, 1 count,"
  echo "  2 engines every 100 ms, GPU-Util every 200 ms, clocks and throttle every 100 ms, a steady window"
  echo "stream = synthesised on the fly (no file: the analysis's own cost, generation included);"
  echo "file = written by the recording helper's generator, then read back through open_recording()."
  echo "peak_rss_mib = getrusage(RUSAGE_SELF).ru_maxrss of that process alone."
  echo "scan = one plain pass over each record stream of the 24 h file, no analysis: the reading cost."
  echo "Other jobs share the 2 cores (load average below): each analysis runs 3 times; the fastest of"
  echo "the three is the least disturbed. Figures are noisy, not best cases."
  echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
  for h in 1 6 24; do for run in 1 2 3; do "$bin" stream "$h"; done; done
  if "$bin" file /nonexistent >/dev/null 2>&1 || [ $? -ne 2 ]; then
    for h in 1 6 24; do
      "$bin" write "$h" "$tmp/run-$h.dsrec"
      echo "file   size_mib=$(( $(stat -c %s "$tmp/run-$h.dsrec") / 1048576 ))"
      for run in 1 2 3; do "$bin" file "$tmp/run-$h.dsrec"; done
      [ "$h" = 24 ] && "$bin" scan "$tmp/run-$h.dsrec"
      rm -f "$tmp/run-$h.dsrec"
    done
  else
    echo "(file mode not built: the recording reader and generator were not in the tree)"
  fi
  echo
  echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out"
