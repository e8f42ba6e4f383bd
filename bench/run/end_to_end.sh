#!/usr/bin/env bash
# `diescope run` end to end on a GPU, and what it costs. Measures: the readings over each bundled
# workload's marked window against the work the workload counted itself (FFMA on every SM and on 66,
# STREAM copy); diescope's own CPU (the run process and its sampler child, from /proc over the middle
# of a 12 s FFMA run) at 10 ms and at 1 ms; where the sampler's time goes per drain (decode, evaluate,
# image re-initialisation, with `diescope-cupti sample --timing` beside sampler_gpu_load); and a run
# while Nsight Compute holds the counters. Runs on a GPU machine (ncu on PATH for the last step).
# Writes into OUT_DIR: env.txt, summary.txt (one line per step), runs.txt (the printed headlines),
# analysis.txt (bench/run/window_vs_known_work.py), recordings.csv (bench/run/recording_counts.py) and
# report-figures.csv (bench/run/report_figures.py); recordings and reports stay in WORK.
#
#   bench/run/end_to_end.sh OUT_DIR     BUILD=build/release (diescope, diescope-cupti, diescope-workload, sampler_gpu_load)
set -euo pipefail
out_dir=${1:?usage: bench/run/end_to_end.sh OUT_DIR   (BUILD=build folder, default build/release)}
cd "$(dirname "$0")/../.."
. bench/common.sh
bench_bin diescope diescope-cupti diescope-workload sampler_gpu_load
bench_out "$out_dir"
bench_work end-to-end
TICK=$(getconf CLK_TCK)
bench_gpu_env > "$OUT/env.txt"
: > "$OUT/summary.txt"

ticks() { awk '{print $14+$15}' "/proc/$1/stat" 2>/dev/null || echo 0; }

# e2e NAME RUN-ARGS -- COMMAND: one diescope run, its output and report kept in WORK.
e2e() {
  local name=$1 rc=0; shift
  mkdir -p "$WORK/$name"
  timeout 60 diescope run --report "$WORK/$name" "$@" > "$WORK/$name/$name.stdout" 2> "$WORK/$name/$name.stderr" < /dev/null || rc=$?
  echo "$name: rc=$rc $(grep -m1 -i 'DIE-Util' "$WORK/$name/$name.stdout" || true)" >> "$OUT/summary.txt"
}

# cost NAME INTERVAL SECONDS: diescope's own CPU (run process + sampler child, not the workload) per
# second of a steady FFMA run, read from /proc over the middle of the run.
cost() {
  local name=$1 iv=$2 secs=$3 rc=0
  mkdir -p "$WORK/$name"
  timeout 60 diescope run --interval-ms "$iv" --report "$WORK/$name" -- diescope workload ffma --seconds "$secs" \
    > "$WORK/$name/$name.stdout" 2> "$WORK/$name/$name.stderr" < /dev/null &
  local tpid=$!
  sleep 4
  local dpid spid
  dpid=$(pgrep -P "$tpid" -x diescope | head -1)
  spid=$(pgrep -P "$dpid" -x diescope-cupti | head -1)
  local a0 b0 t0 a1 b1 t1
  a0=$(ticks "$dpid"); b0=$(ticks "$spid"); t0=$(date +%s%N)
  sleep $((secs - 6))
  a1=$(ticks "$dpid"); b1=$(ticks "$spid"); t1=$(date +%s%N)
  wait "$tpid" || rc=$?
  awk -v a=$((a1 - a0)) -v b=$((b1 - b0)) -v hz="$TICK" -v ns=$((t1 - t0)) -v n="$name" -v rc=$rc 'BEGIN{
    s = ns / 1e9; printf "%s: rc=%d over %.1f s: diescope %.2f%%, sampler %.2f%%, together %.2f%% of one core\n",
    n, rc, s, 100*a/hz/s, 100*b/hz/s, 100*(a+b)/hz/s}' >> "$OUT/summary.txt"
}

e2e ffma --window markers -- diescope workload ffma --seconds 3
e2e stream --window markers -- diescope workload stream --kernel copy --seconds 3
e2e ffma66 --window markers -- diescope workload ffma --sms 66 --seconds 2
cost cost10 10 12
cost cost1 1 12
# Where the sampler's time goes at 10 ms under load (decode / evaluate / image init per drain), with
# the 12-counter GH100 set the first table read. The sampler stops when its stdin (sleep) ends.
P=.avg.pct_of_peak_sustained_elapsed
M12="TPC.TriageCompute.sm__inst_executed_pipe_fma_realtime$P,TPC.TriageCompute.sm__inst_executed_pipe_fmaheavy_realtime$P,TPC.TriageCompute.sm__inst_executed_pipe_fmalite_realtime$P,TPC.TriageCompute.sm__pipe_tensor_cycles_active_realtime$P,TPC.TriageCompute.sm__pipe_fp64_cycles_active_realtime$P,TPC.TriageCompute.sm__inst_executed_pipe_alu_realtime$P,TPC.TriageCompute.tpc__warps_active_realtime$P,SM_A.TriageCompute.l1tex__m_xbar2l1tex_read_sectors_realtime$P,lts__t_bytes.sum.pct_of_peak_sustained_elapsed,dram__bytes.sum.pct_of_peak_sustained_elapsed,dram__bytes.sum,gr__cycles_active$P"
timeout 30 diescope-cupti sample --device 0 --interval-ms 10 --drain-ms 1000 --timing --metrics "$M12" \
  < <(sleep 8 2>/dev/null) > "$WORK/timing.out" 2>&1 &
sleep 1; sampler_gpu_load ffma 6 > "$WORK/timing.load" 2>&1 || true; wait || true
grep '^note timing\|^drain' "$WORK/timing.out" | head -16 >> "$OUT/summary.txt" || true
# Counters held by Nsight Compute: the run goes on with GPU-Util only and says why.
timeout 40 ncu --clock-control none --metrics sm__cycles_active.avg "$BIN/sampler_gpu_load" ffma 5 > "$WORK/ncu.log" 2>&1 &
npid=$!
sleep 3
e2e held -- sleep 1
wait "$npid" || true
grep -h "held by another profiler\|warning" "$WORK/held/held.stderr" | head -3 >> "$OUT/summary.txt" || true

for n in ffma stream ffma66 held; do { echo "== $n"; cat "$WORK/$n/$n.stdout" "$WORK/$n/$n.stderr"; } >> "$OUT/runs.txt"; done
python3 bench/run/window_vs_known_work.py "$WORK" > "$OUT/analysis.txt"
recordings=() reports=()
for n in ffma stream ffma66 cost10 cost1 held; do
  recordings+=("$n=$WORK/$n/gpu0.dsrec")
  reports+=("$n=$WORK/$n/gpu0.dsrec.report/report.json")
done
python3 bench/run/recording_counts.py "${recordings[@]}" > "$OUT/recordings.csv"
python3 bench/run/report_figures.py "${reports[@]}" > "$OUT/report-figures.csv"
cat "$OUT/summary.txt"
