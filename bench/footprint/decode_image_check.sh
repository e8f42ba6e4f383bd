#!/usr/bin/env bash
# The sampler child alone (diescope-cupti sample --timing) beside FFMA on every SM, at each interval
# given, for a few seconds each: samples received against those expected, gaps, overflow, the
# decode image and hardware buffer it chose, its stage totals and its CPU and RSS (/proc). Checks the
# decode image rule (docs/footprint.md#the-decode-image) on a GPU machine.
#
#   bench/footprint/decode_image_check.sh OUT_DIR [SECONDS] [INTERVAL_MS ...]   (default 5 s; 1 0.1)
#   BUILD=build/release (diescope, diescope-cupti, diescope-workload in $BUILD/bin; or BIN=folder)
#
# Writes OUT_DIR/decode_image_check.txt, one line per interval.
set -euo pipefail
out_dir=${1:?usage: bench/footprint/decode_image_check.sh OUT_DIR [SECONDS] [INTERVAL_MS ...]}
seconds=${2:-5}
shift $(( $# >= 2 ? 2 : 1 ))
intervals=("$@")
[ ${#intervals[@]} -gt 0 ] || intervals=(1 0.1)
mkdir -p "$out_dir"
out="$(cd "$out_dir" && pwd)/decode_image_check.txt"
cd "$(dirname "$0")/../.."
bin=${BIN:-${BUILD:-build/release}/bin}
for f in diescope diescope-cupti diescope-workload; do
  [ -x "$bin/$f" ] || { echo "decode_image_check.sh: no $bin/$f; build the target $f first" >&2; exit 2; }
done
metrics=$("$bin/diescope" units | awk '/^[^ ]/ {on = ($1 == "hopper-gh100")} on && /__/ {for (i = 1; i <= NF; i++) if ($i ~ /__/) {print $i; break}}' | paste -sd,)
work=$(mktemp -d)
"$bin/diescope-workload" ffma --seconds $(( seconds * ${#intervals[@]} + 10 )) > /dev/null 2>&1 &
load=$!
trap 'kill "$load" 2> /dev/null || true' EXIT
sleep 3
: > "$out"
for iv in "${intervals[@]}"; do
  raw="$work/sample-$iv.txt"
  (sleep "$seconds") | "$bin/diescope-cupti" sample --device 0 --interval-ms "$iv" --drain-ms 1000 --timing \
    --metrics "$metrics" > "$raw" 2> "$work/sample-$iv.err" &
  sleep 1.5  # past the setup: the CPU is read over the steady part
  pid=$(pgrep -n -x diescope-cupti || true)
  c0=$(awk '{print $14 + $15}' "/proc/$pid/stat" 2> /dev/null || echo 0); t0=$(date +%s%N)
  sleep "$(awk -v s="$seconds" 'BEGIN {print s - 2.5}')"
  c1=$(awk '{print $14 + $15}' "/proc/$pid/stat" 2> /dev/null || echo 0); t1=$(date +%s%N)
  rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2> /dev/null || echo 0)
  cpu=$(awk -v a="$c0" -v b="$c1" -v t0="$t0" -v t1="$t1" -v tck="$(getconf CLK_TCK)" 'BEGIN {printf "%.2f", 100 * (b - a) / tck / ((t1 - t0) / 1e9)}')
  wait
  awk -v iv="$iv" -v cpu="$cpu" -v rss="$rss" '
    $1 == "s" { n++; if (n == 1) next; if (first == "") first = $2; last = $3 }
    $1 == "gap" { gaps++; gap_ns += $3 - $2 }
    $1 == "overflow" { over++ }
    $1 == "note" && $2 == "timing-total" { $1 = ""; $2 = ""; timing = $0 }
    $1 == "note" && /decode image holds/ { $1 = ""; $2 = ""; image = $0 }
    END {
      expected = (last - first) / (iv * 1e6)
      printf "interval_ms=%s samples_after_first=%d expected=%.0f gaps=%d gap_ms=%.3f overflow=%d cpu_pct_steady=%s rss_mb=%.1f |%s |%s\n",
        iv, n - 1, expected, gaps, gap_ns / 1e6, over, cpu, rss / 1024, image, timing
    }' "$raw" >> "$out"
done
cat "$out"
echo "decode_image_check.sh: raw outputs in $work" >&2
