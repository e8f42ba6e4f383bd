#!/usr/bin/env bash
# Speed and peak memory of the analysis (analyze()) on synthetic 1 h, 6 h and 24 h recordings at
# 10 ms: synthesised on the fly, then written to a file and read back, then one plain pass over each
# record stream of the 24 h file. Each analysis runs 3 times in its own process, so each peak RSS is
# its own. Runs on any CPU machine (no GPU). Writes OUT_DIR/analysis-throughput.txt with the
# machine's details.
#
#   bench/analysis/throughput.sh OUT_DIR        BUILD=build/release (a build with analysis_throughput)
set -euo pipefail
out_dir=${1:?usage: bench/analysis/throughput.sh OUT_DIR   (BUILD=build folder, default build/release)}
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$root/build/release}
bin="$build/bin/analysis_throughput"
[ -x "$bin" ] || { echo "throughput: no $bin; build the analysis_throughput target first" >&2; exit 2; }
mkdir -p "$out_dir"
out="$out_dir/analysis-throughput.txt"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/diescope-analysis-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
{
  echo "# analyze() throughput and peak memory (bench/analysis/throughput.sh)"
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
  echo "Other jobs may share the cores (load average below): each analysis runs 3 times; the fastest of"
  echo "the three is the least disturbed. Figures are noisy, not best cases."
  echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
  for h in 1 6 24; do for _ in 1 2 3; do "$bin" stream "$h"; done; done
  for h in 1 6 24; do
    "$bin" write "$h" "$tmp/run-$h.dsrec"
    echo "file   size_mib=$(( $(stat -c %s "$tmp/run-$h.dsrec") / 1048576 ))"
    for _ in 1 2 3; do "$bin" file "$tmp/run-$h.dsrec"; done
    [ "$h" = 24 ] && "$bin" scan "$tmp/run-$h.dsrec"
    rm -f "$tmp/run-$h.dsrec"
  done
  echo
  echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out"
