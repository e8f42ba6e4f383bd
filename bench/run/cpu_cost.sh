#!/usr/bin/env bash
# diescope run's own CPU cost under a GPU workload: the `diescope run` process and its sampler child,
# from /proc/PID/task/*/schedstat (nanoseconds, every thread), over the steady middle of a run of a
# bundled workload, plus what each recording shows: gaps, overflows, and how long after the command
# ended the counters went off. Runs on a GPU machine. Writes into OUT_DIR: env.txt, summary.txt (one
# CPU line and one recording line per case), recordings.csv (bench/run/recording_counts.py) and
# report-figures.csv (bench/run/report_figures.py); the recordings and reports stay in WORK.
#
#   bench/run/cpu_cost.sh OUT_DIR [CASE...]     BUILD=build/release (diescope, diescope-cupti, diescope-workload)
#
# Cases (default: ffma10 ffma1 gemm10 copy10), each `diescope run --interval-ms N --window markers --
# diescope workload ...`, measured from SKIP s after the start for SPAN s:
#   ffma10      FFMA on every SM, 10 ms, 14 s run, measured 4-12 s
#   ffma10mid   FFMA, 10 ms, 20 s run, measured 4-18 s
#   ffma10long  FFMA, 10 ms, 34 s run, measured 4-32 s
#   ffma1       FFMA, 1 ms, 62 s run, measured 5-55 s (the shortest-interval check)
#   gemm10      cuBLAS bf16 GEMM, 10 ms, 5 s run, measured 2-4 s
#   copy10      STREAM copy, 10 ms, 4 s run, measured 2-3 s
set -euo pipefail
out_dir=${1:?usage: bench/run/cpu_cost.sh OUT_DIR [CASE...]   (BUILD=build folder, default build/release)}
shift
cd "$(dirname "$0")/../.."
. bench/common.sh
bench_bin diescope diescope-cupti diescope-workload
bench_out "$out_dir"
bench_work run-cost
bench_gpu_env > "$OUT/env.txt"
: > "$OUT/summary.txt"
# CPU time of every thread of a process, in ns (schedstat: no 10 ms tick rounding).
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%d", s }'; }
# measure NAME INTERVAL_MS SKIP_S SPAN_S -- WORKLOAD...
measure() {
  local name=$1 iv=$2 skip=$3 span=$4 rc=0; shift 5
  mkdir -p "$WORK/$name"
  diescope run --interval-ms "$iv" --window markers --report "$WORK/$name" -- diescope workload "$@" \
    > "$WORK/$name/stdout.txt" 2> "$WORK/$name/stderr.txt" &
  local rp=$!
  sleep "$skip"
  local sp p0 c0 t0 p1 c1 t1
  sp=$(pgrep -P "$rp" -f diescope-cupti | head -1)
  p0=$(cpu_ns "$rp"); c0=$(cpu_ns "$sp"); t0=$(date +%s%N)
  sleep "$span"
  p1=$(cpu_ns "$rp"); c1=$(cpu_ns "$sp"); t1=$(date +%s%N)
  wait "$rp" || rc=$?
  awk -v n="$name" -v iv="$iv" -v p=$((p1 - p0)) -v c=$((c1 - c0)) -v a="$t0" -v b="$t1" -v rc="$rc" 'BEGIN{
    s = (b - a) / 1e9
    printf "%s (%s ms, rc=%d): over %.1f s, diescope run %.2f%% of one core, sampler child %.2f%%, together %.2f%%\n",
      n, iv, rc, s, 100*p/1e9/s, 100*c/1e9/s, 100*(p+c)/1e9/s }' | tee -a "$OUT/summary.txt"
  python3 bench/run/recording_counts.py "$name=$WORK/$name/gpu0.dsrec" | tail -1 | awk -F, '{
    printf "%s: counters off %s ms after the command ended; chip samples %s, without values %s; gap notes %s, overflow notes %s\n",
      $1, $9, $2, $3, $6, $7 }' | tee -a "$OUT/summary.txt"
  grep -i "gap\|overflow\|lost" "$WORK/$name/stdout.txt" | head -5 >> "$OUT/summary.txt" || true
}
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(ffma10 ffma1 gemm10 copy10)
for c in "${cases[@]}"; do case $c in
  ffma10) measure ffma10 10 4 8 -- ffma --seconds 14 ;;
  ffma10mid) measure ffma10mid 10 4 14 -- ffma --seconds 20 ;;
  ffma10long) measure ffma10long 10 4 28 -- ffma --seconds 34 ;;
  ffma1) measure ffma1 1 5 50 -- ffma --seconds 62 ;;
  gemm10) measure gemm10 10 2 2 -- gemm --seconds 5 ;;
  copy10) measure copy10 10 2 1 -- stream --kernel copy --seconds 4 ;;
  *) echo "cpu_cost: unknown case $c (ffma10 ffma10mid ffma10long ffma1 gemm10 copy10)" >&2; exit 2 ;;
esac; done
recordings=() reports=()
for c in "${cases[@]}"; do
  recordings+=("$c=$WORK/$c/gpu0.dsrec")
  reports+=("$c=$WORK/$c/gpu0.dsrec.report/report.json")
done
python3 bench/run/recording_counts.py "${recordings[@]}" > "$OUT/recordings.csv"
python3 bench/run/report_figures.py "${reports[@]}" > "$OUT/report-figures.csv"
