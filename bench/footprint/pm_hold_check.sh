#!/usr/bin/env bash
# Does 0.1 ms hold for a minute with nothing lost, and what is the shortest interval that holds, in
# one call on a GPU machine (docs/footprint.md#the-decode-image):
#   1. the held-out checks under `diescope run` at 0.1 ms (footprint.sh's heldout section: FFMA on
#      132, 66 and 33 SMs, a STREAM copy and an L2-resident copy, PM_HELDOUT_SECONDS each);
#   2. the sampler child alone (diescope-cupti sample --timing) beside FFMA on every SM at 0.1 and
#      0.2 ms for PM_SECONDS each, and at 10 ms for 10 s for its memory: samples received against
#      expected, holes, overflow, each thread's CPU (the child's own clocks and /proc), RSS, and how
#      late its decodes were (each drain's late_us and gap_us, from its timing notes);
#   3. CUPTI alone (pm_minimal) beside FFMA at 0.1 ms for PM_SECONDS, decoding only, with the
#      child's decode period, image and hardware buffer: the same work as the child's decoding
#      thread, with nothing of diescope.
#
#   bench/footprint/pm_hold_check.sh OUT_DIR
#   BIN=folder with diescope, diescope-cupti, diescope-workload, pm_minimal, nvml_poll, bare_cuda
#   PM_SECONDS=60  PM_HELDOUT_SECONDS=12 (0: none)  PM_INTERVALS="0.1 0.2"
#
# Writes OUT_DIR/env.txt, the heldout section's tables (loss.tsv, stages.tsv, heldout_*.tsv),
# recording-notes.txt, child.tsv (one line per child run), child_threads.tsv, lateness.tsv (the
# distribution of each child run's decode gaps and lateness), late_drains.tsv (the 20 latest drains
# of each run) and minimal.txt. Reads clocks and limits, never sets them.
set -euo pipefail
out_dir=${1:?usage: bench/footprint/pm_hold_check.sh OUT_DIR}
mkdir -p "$out_dir"
out=$(cd "$out_dir" && pwd)
cd "$(dirname "$0")/../.."
# shellcheck source=bench/footprint/pm_common.sh
source bench/footprint/pm_common.sh
pm_check_settings

# 1. The held-out checks at 0.1 ms under diescope run (PM_HELDOUT_SECONDS=0 leaves them out).
[ "${PM_HELDOUT_SECONDS:-12}" = 0 ] || FOOTPRINT_HELDOUT=0.1:100:${PM_HELDOUT_SECONDS:-12} BIN=$bin WORK=$work \
  bash bench/footprint/footprint.sh "$out" heldout
held_out_notes "$work" "$out"

metrics=$(hopper_metrics "$bin")
load=
trap '[ -n "$load" ] && kill "$load" 2> /dev/null || true' EXIT
ffma() {  # FFMA on every SM for $1 s, in the background
  "$bin/diescope-workload" ffma --seconds "$1" > /dev/null 2>&1 &
  load=$!
  sleep 3
}
ffma_end() {
  kill "$load" 2> /dev/null || true
  wait "$load" 2> /dev/null || true
  load=
}

# 2. The child alone beside FFMA.
printf 'interval_ms\tseconds\tsamples\texpected\tholes\thole_ms\tlost_pct\toverflow\tcpu_pct_steady\trss_mb\thwm_mb\tdecode_cpu_pct\tevaluate_cpu_pct\tsampler_note\n' > "$out/child.tsv"
printf 'interval_ms\ttid\tname\tcpu_s\n' > "$out/child_threads.tsv"
printf 'interval_ms\tdrains\tgap_p50_ms\tgap_p99_ms\tgap_p999_ms\tgap_max_ms\tlate_p50_ms\tlate_p99_ms\tlate_max_ms\tdrains_gap_over_1.1_period\tdrains_over_image\tdecode_ms_max\tinit_ms_max\tmulti_pass_drains\n' > "$out/lateness.tsv"
printf 'interval_ms\tdrain\tlate_ms\tgap_ms\tdecode_ms\tinit_ms\twait_ms\tpasses\tsamples\n' > "$out/late_drains.tsv"
child() {  # the child at $1 ms for $2 s
  local iv=$1 secs=$2 raw="$work/child-$1.txt"
  (sleep "$secs") | "$bin/diescope-cupti" sample --device 0 --interval-ms "$iv" --drain-ms 1000 --timing \
    --metrics "$metrics" > "$raw" 2> "$work/child-$iv.err" &
  sleep 2  # past the setup: the CPU is read over the steady part
  local pid
  pid=$(pgrep -n -x diescope-cupti || true)
  local c0 t0 c1 t1 rss hwm cpu
  c0=$(awk '{print $14 + $15}' "/proc/$pid/stat" 2> /dev/null || echo 0); t0=$(date +%s%N)
  sleep "$(awk -v s="$secs" 'BEGIN {print s - 3}')"
  c1=$(awk '{print $14 + $15}' "/proc/$pid/stat" 2> /dev/null || echo 0); t1=$(date +%s%N)
  rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2> /dev/null || echo 0)
  hwm=$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status" 2> /dev/null || echo 0)
  for task in /proc/"$pid"/task/*; do
    [ -r "$task/stat" ] || continue
    # Fields after the name: utime and stime are the 12th and 13th after the closing parenthesis.
    awk -v iv="$iv" -v tck="$(getconf CLK_TCK)" -v main="$pid" '{
      name = $0; sub(/^[0-9]+ \(/, "", name); sub(/\).*/, "", name)
      rest = $0; sub(/^.*\) /, "", rest); split(rest, f, " ")
      role = ($1 == main) ? "decoding (main)" : name
      printf "%s\t%s\t%s\t%.3f\n", iv, $1, role, (f[12] + f[13]) / tck
    }' "$task/stat" >> "$out/child_threads.tsv" 2> /dev/null || true
  done
  cpu=$(awk -v a="$c0" -v b="$c1" -v t0="$t0" -v t1="$t1" -v tck="$(getconf CLK_TCK)" 'BEGIN {printf "%.2f", 100 * (b - a) / tck / ((t1 - t0) / 1e9)}')
  wait
  awk -v iv="$iv" -v secs="$secs" -v cpu="$cpu" -v rss="$rss" -v hwm="$hwm" '
    $1 == "s" { n++; if (n == 1) next; if (first == "") first = $2; if (last != "" && $2 - last > iv * 5e5) { holes++; hole_ns += $2 - last } last = $3 }
    $1 == "overflow" { over++ }
    $1 == "note" && $2 == "timing-total" { for (i = 3; i < NF; i += 2) kv[$i] = $(i + 1) }
    $1 == "note" && /decode image holds/ { $1 = ""; $2 = ""; image = $0 }
    END {
      span = last - first
      expected = span / (iv * 1e6)
      printf "%s\t%s\t%d\t%.0f\t%d\t%.3f\t%.4f\t%d\t%s\t%.1f\t%.1f\t%.2f\t%.2f\t%s\n", iv, secs, n - 1, expected,
        holes, hole_ns / 1e6, (span > 0 ? 100 * hole_ns / span : 0), over, cpu, rss / 1024, hwm / 1024,
        kv["decode_cpu_us"] / 1e4 / secs, kv["evaluate_cpu_us"] / 1e4 / secs, image
    }' "$raw" >> "$out/child.tsv"
  # Each drain's timing note: how late it began and the gap since the previous drain's first decode.
  awk '$1 == "note" && $2 == "timing" { d++; for (i = 3; i < NF; i += 2) kv[$i] = $(i + 1)
         printf "%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%s\t%s\n", d, kv["late_us"] / 1e3, kv["gap_us"] / 1e3,
           kv["decode_us"] / 1e3, kv["init_us"] / 1e3, kv["wait_us"] / 1e3, kv["passes"], kv["samples"] }' \
    "$raw" > "$work/drains-$iv.tsv"
  local period image_ms
  period=$(awk '/decode image holds/ {for (i = 1; i <= NF; i++) if ($i == "every") print $(i + 1)}' "$raw" | head -1)
  image_ms=$(awk -v iv="$iv" '/decode image holds/ {for (i = 1; i <= NF; i++) if ($i == "holds") print ($(i + 1) - 4) * iv}' "$raw" | head -1)
  python3 - "$iv" "${period:-0}" "${image_ms:-0}" "$work/drains-$iv.tsv" >> "$out/lateness.tsv" << 'PY'
import sys
iv, period, image_ms, path = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
rows = [line.split("\t") for line in open(path) if line.strip()]
late = sorted(float(r[1]) for r in rows)
gap = sorted(float(r[2]) for r in rows[1:])  # the first drain has no gap
q = lambda a, p: a[min(len(a) - 1, int((len(a) - 1) * p + 0.5))] if a else float("nan")
print("\t".join([iv, str(len(rows))] + ["%.3f" % x for x in (q(gap, 0.5), q(gap, 0.99), q(gap, 0.999), q(gap, 1),
      q(late, 0.5), q(late, 0.99), q(late, 1))] +
      [str(sum(1 for g in gap if g > 1.1 * period)), str(sum(1 for g in gap if g > image_ms)),
       "%.3f" % max((float(r[3]) for r in rows), default=float("nan")),
       "%.3f" % max((float(r[4]) for r in rows), default=float("nan")), str(sum(1 for r in rows if int(r[6]) > 1))]))
PY
  sort -t$'\t' -k3,3 -g -r "$work/drains-$iv.tsv" | awk -v iv="$iv" 'NR <= 20 {print iv "\t" $0}' >> "$out/late_drains.tsv"
}
intervals=${PM_INTERVALS:-0.1 0.2}
n=0
for iv in $intervals; do n=$((n + 1)); done
ffma $((seconds * n + 20 + n * 5))
for iv in $intervals; do child "$iv" "$seconds"; done
child 10 10
ffma_end

# 3. CUPTI alone at 0.1 ms, decoding only, with the child's period, slack and hardware buffer.
hw_mb=$(awk -F'\t' '$1 == "0.1" {for (i = 1; i <= NF; i++) if ($i ~ /hardware buffer/) {s = $i; sub(/.*hardware buffer /, "", s); sub(/ MiB.*/, "", s); print s}}' "$out/child.tsv" | head -1)
ffma $((seconds + 10))
{
  echo "pm_minimal --interval-ms 0.1 --drain-ms 20 --slack-ms 30 --hw-buffer-mb ${hw_mb:-41} --seconds $seconds (decoding only)"
  "$bin/pm_minimal" --metrics "$metrics" --interval-ms 0.1 --drain-ms 20 --slack-ms 30 --hw-buffer-mb "${hw_mb:-41}" \
    --seconds "$seconds" 2>&1 || true
} > "$out/minimal.txt"
ffma_end
echo "pm_hold_check.sh: tables in $out; raw outputs in $work" >&2
