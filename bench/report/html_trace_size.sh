#!/usr/bin/env bash
# Size, wall time and peak memory of report.html and trace.json for synthetic 1-hour and 24-hour
# recordings (diescope-make-recording long HOURS: 10 ms chip samples, 8 units, 2 diagnostics, 1
# count), and for the bundled H200 recordings: both outputs are drawn on a grid of at most 1000
# (HTML) and 10,000 (trace) bins, so their size must not grow with the recording's length
# (docs/report.md#the-timeline). Runs on any CPU machine. Writes OUT_DIR/sizes.tsv.
#
#   bench/report/html_trace_size.sh OUT_DIR [HOURS...]     BUILD=build folder (default build/ci)
set -euo pipefail
out_dir=${1:?usage: bench/report/html_trace_size.sh OUT_DIR [HOURS...]   (BUILD=build folder, default build/ci)}
shift
[ $# -gt 0 ] && hours_list=("$@") || hours_list=(1 24)
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$root/build/ci}
diescope="$build/bin/diescope"
make_recording="$build/bin/diescope-make-recording"
for bin in "$diescope" "$make_recording"; do
  [ -x "$bin" ] || { echo "html_trace_size: no $bin; build the diescope and diescope-make-recording targets first" >&2; exit 2; }
done
mkdir -p "$out_dir"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/diescope-html-trace-size.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
tsv="$out_dir/sizes.tsv"
printf "recording\trecording_bytes\tformat\toutput_bytes\twall_s\tpeak_rss_mib\n" >"$tsv"
measure() {  # measure NAME RECORDING
  local name=$1 rec=$2 format secs kib bytes
  for format in html trace; do
    /usr/bin/time -f "%e %M" -o "$tmp/time" "$diescope" report "$rec" --format "$format" --output "$tmp/out" >/dev/null
    read -r secs kib <"$tmp/time"
    if [ "$format" = html ]; then bytes=$(stat -c %s "$tmp/out/report.html"); else bytes=$(stat -c %s "$tmp/out/trace.json"); fi
    printf "%s\t%s\t%s\t%s\t%s\t%s\n" "$name" "$(stat -c %s "$rec")" "$format" "$bytes" "$secs" "$(( kib / 1024 ))" | tee -a "$tsv"
    rm -rf "$tmp/out"
  done
}
for h in "${hours_list[@]}"; do
  "$make_recording" long "$h" "$tmp/run-$h.dsrec" >/dev/null
  measure "synthetic-${h}h" "$tmp/run-$h.dsrec"
  rm -f "$tmp/run-$h.dsrec"
done
for rec in "$root"/data/recordings/h200/resnet50.dsrec "$root"/data/recordings/synthetic-input-bound.dsrec; do
  [ -f "$rec" ] && measure "$(basename "$rec" .dsrec)" "$rec"
done
{
  echo "commit: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "build: $(grep -m1 CMAKE_BUILD_TYPE "$build/CMakeCache.txt" | cut -d= -f2)"
} >"$out_dir/machine.txt"
