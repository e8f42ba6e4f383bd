#!/usr/bin/env bash
# Speed and peak memory of `diescope report` per output (terminal, json, html, trace) and for all
# four in one command, on synthetic recordings of HOURS at 10 ms, beside the time `wc -l` takes to
# read the same file. For each: the wall time and the CPU time (user + system) of the fastest of
# REPEAT runs, chip samples a second (the recording's chip lines over that wall time), the ratio to
# `wc -l`'s fastest wall time, and the peak RSS of the process. samples.csv is left out: it writes
# every sample and is bounded by the disk. Runs on any CPU machine (no GPU). Writes
# OUT_DIR/report-speed.txt with the machine's details and the load average before and after.
#
# Several binaries (a build from before a change and one from after) are measured on the same
# recordings, one after the other for each output.
#
#   bench/analysis/report_speed.sh OUT_DIR [DIESCOPE_BINARY...]
#       BUILD=build/release (diescope, diescope-make-recording); REPEAT=3; HOURS="1 6 24"
set -euo pipefail
out_dir=${1:?usage: bench/analysis/report_speed.sh OUT_DIR [DIESCOPE_BINARY...]   (BUILD, REPEAT, HOURS)}
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$root/build/release}
shift
binaries=("$@")
((${#binaries[@]})) || binaries=("$build/bin/diescope")
read -r -a hours <<<"${HOURS:-1 6 24}"
repeat=${REPEAT:-3}
make_recording="$build/bin/diescope-make-recording"
for bin in "${binaries[@]}" "$make_recording"; do
  [ -x "$bin" ] || { echo "report_speed: no $bin; build the diescope and diescope-make-recording targets first" >&2; exit 2; }
done
mkdir -p "$out_dir"
out="$out_dir/report-speed.txt"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/diescope-report-speed.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# best_of CMD...: runs CMD REPEAT times; prints "wall_s cpu_s peak_rss_kib" of the fastest run.
best_of() {
  local best="" line
  for _ in $(seq "$repeat"); do
    /usr/bin/time -f "%e %U %S %M" -o "$tmp/time" "$@" >/dev/null
    line=$(awk '{printf "%.2f %.2f %d", $1, $2 + $3, $4}' "$tmp/time")
    if [ -z "$best" ] || awk -v a="${line%% *}" -v b="${best%% *}" 'BEGIN {exit !(a < b)}'; then best=$line; fi
  done
  echo "$best"
}

{
  echo "# diescope report: seconds, chip samples a second and peak memory per output (bench/analysis/report_speed.sh)"
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores"
  echo "build: $(grep -m1 CMAKE_BUILD_TYPE "$build/CMakeCache.txt" | cut -d= -f2)"
  for i in "${!binaries[@]}"; do echo "binary $((i + 1)): ${binaries[$i]}"; done
  echo "recordings: diescope-make-recording long HOURS (10 ms chip samples, 8 units, 2 diagnostics, 1 count),"
  echo "  read from the page cache (each file is read once by wc -l before the timed runs)"
  echo "each figure: the fastest of $repeat runs (wall_s, its cpu_s = user + system, its peak RSS);"
  echo "  ratio = wall_s / wc -l's wall_s (cpu: cpu_s / wc -l's cpu_s); samples_per_s = chip lines / wall_s"
  echo "  (per cpu_s: chip lines / cpu_s, the figure a shared machine disturbs least)"
  echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg) (other jobs share the cores)"
  echo
  for h in "${hours[@]}"; do
    rec="$tmp/run-$h.dsrec"
    "$make_recording" long "$h" "$rec" >/dev/null
    wc -l "$rec" >/dev/null
    chips=$(grep -c '^chip ' "$rec")
    read -r wc_wall wc_cpu _ < <(best_of wc -l "$rec")
    echo "hours=$h recording_mib=$(($(stat -c %s "$rec") / 1048576)) chip_samples=$chips wc_l_wall_s=$wc_wall wc_l_cpu_s=$wc_cpu"
    for format in terminal json html trace terminal,json,html,trace; do
      for i in "${!binaries[@]}"; do
        read -r wall cpu kib < <(best_of "${binaries[$i]}" report "$rec" --format "$format" --output "$tmp/out")
        awk -v b="$((i + 1))" -v f="$format" -v w="$wall" -v c="$cpu" -v k="$kib" -v n="$chips" -v wc="$wc_wall" -v wcc="$wc_cpu" 'BEGIN {
          printf "  binary=%s format=%-24s wall_s=%-6.2f cpu_s=%-6.2f samples_per_s=%.2fM (per cpu_s %.2fM) ratio_to_wc_l=%.1f (cpu %.1f) peak_rss_mib=%.1f\n",
            b, f, w, c, (w > 0 ? n / w / 1e6 : 0), (c > 0 ? n / c / 1e6 : 0), (wc > 0 ? w / wc : 0),
            (wcc > 0 ? c / wcc : 0), k / 1024 }'
        rm -rf "$tmp/out"
      done
    done
    rm -f "$rec"
  done
  echo
  echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out"
