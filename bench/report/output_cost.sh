#!/usr/bin/env bash
# Wall time and peak memory of `diescope report` writing each output (json, csv, html, trace), on
# synthetic 1 h and 6 h recordings, to show that the per-sample outputs (samples.csv, report.html,
# trace.json) stream: peak memory must not grow with the recording's length. Runs on any CPU machine
# (no GPU). Writes OUT_DIR/report-outputs.txt.
#
#   bench/report/output_cost.sh OUT_DIR [DIESCOPE_BINARY]     BUILD=build/release (diescope, diescope-make-recording)
set -euo pipefail
out_dir=${1:?usage: bench/report/output_cost.sh OUT_DIR [DIESCOPE_BINARY]   (BUILD=build folder, default build/release)}
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$root/build/release}
diescope=${2:-$build/bin/diescope}
make_recording="$build/bin/diescope-make-recording"
for bin in "$diescope" "$make_recording"; do
  [ -x "$bin" ] || { echo "output_cost: no $bin; build the diescope and diescope-make-recording targets first" >&2; exit 2; }
done
mkdir -p "$out_dir"
out="$out_dir/report-outputs.txt"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/diescope-report-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
{
  echo "# diescope report: wall time and peak memory per output (bench/report/output_cost.sh)"
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores"
  echo "build: $(grep -m1 CMAKE_BUILD_TYPE "$build/CMakeCache.txt" | cut -d= -f2), binary: $diescope"
  echo "recordings: diescope-make-recording long HOURS (10 ms chip samples, 8 units, 2 diagnostics, 1 count)"
  echo "each line: one process; json = analysis + report.json only; the others add one streamed pass each."
  echo "Other jobs share the cores (load average: $(cut -d' ' -f1-3 /proc/loadavg)); times are noisy."
  echo
  for h in 1 6; do
    "$make_recording" long "$h" "$tmp/run-$h.dsrec" >/dev/null
    echo "hours=$h recording_mib=$(( $(stat -c %s "$tmp/run-$h.dsrec") / 1048576 ))"
    for format in json csv html trace; do
      /usr/bin/time -f "%e %M" -o "$tmp/time" "$diescope" report "$tmp/run-$h.dsrec" --format "$format" \
        --out "$tmp/out-$h-$format" >/dev/null
      read -r secs kib <"$tmp/time"
      bytes=$(du -cb "$tmp/out-$h-$format" | tail -1 | cut -f1)
      printf "  format=%-5s wall_s=%-6s peak_rss_mib=%-6s output_mib=%s\n" "$format" "$secs" \
        "$(( kib / 1024 ))" "$(( bytes / 1048576 ))"
      rm -rf "$tmp/out-$h-$format"
    done
    rm -f "$tmp/run-$h.dsrec"
  done
} | tee "$out"
