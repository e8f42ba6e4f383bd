#!/usr/bin/env bash
# `diescope run` end to end on a real GPU, and what it costs. Run from the repository root on the
# GPU machine with diescope, diescope-cupti, diescope-workload and sampler_gpu_load carried in
# build/sampler/carry. Writes to $OUT: env.txt, summary.txt, run.tgz (recordings, reports, logs).
set -u
OUT=${OUT:-/tmp/run-out}
mkdir -p "$OUT"
B=$PWD/build/sampler/carry
export PATH=$B:$PATH
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
W=/tmp/run-work
rm -rf "$W" && mkdir -p "$W"
TICK=$(getconf CLK_TCK)
{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit --format=csv
} > "$OUT/env.txt" 2>&1

ticks() { awk '{print $14+$15}' /proc/$1/stat 2>/dev/null || echo 0; }

# e2e NAME RUN-ARGS -- COMMAND: one diescope run, its output and report kept.
e2e() {
  local name=$1; shift
  timeout 60 diescope run --report "$W/$name" "$@" > "$W/$name.stdout" 2> "$W/$name.stderr" < /dev/null
  echo "$name: rc=$? $(grep -m1 -i 'DIE-Util' "$W/$name.stdout")" >> "$OUT/summary.txt"
}

# cost NAME INTERVAL SECONDS: diescope's own CPU (parent + sampler child, not the workload) per
# second of a steady FFMA run, read from /proc over the middle of the run.
cost() {
  local name=$1 iv=$2 secs=$3
  timeout 60 diescope run --interval-ms "$iv" --report "$W/$name" -- diescope workload ffma --seconds "$secs" \
    > "$W/$name.stdout" 2> "$W/$name.stderr" < /dev/null &
  local tpid=$!
  sleep 4
  local dpid; dpid=$(pgrep -P "$tpid" -x diescope | head -1)
  local spid; spid=$(pgrep -P "$dpid" -x diescope-cupti | head -1)
  local a0 b0 t0; a0=$(ticks "$dpid"); b0=$(ticks "$spid"); t0=$(date +%s%N)
  sleep $((secs - 6))
  local a1 b1 t1; a1=$(ticks "$dpid"); b1=$(ticks "$spid"); t1=$(date +%s%N)
  wait "$tpid"; local rc=$?
  awk -v a=$((a1 - a0)) -v b=$((b1 - b0)) -v hz="$TICK" -v ns=$((t1 - t0)) -v n="$name" -v rc=$rc 'BEGIN{
    s = ns / 1e9; printf "%s: rc=%d over %.1f s: diescope %.2f%%, sampler %.2f%%, together %.2f%% of one core\n",
    n, rc, s, 100*a/hz/s, 100*b/hz/s, 100*(a+b)/hz/s}' >> "$OUT/summary.txt"
}

e2e ffma --window markers -- diescope workload ffma --seconds 3
e2e stream --window markers -- diescope workload stream --kernel copy --seconds 3
e2e ffma66 --window markers -- diescope workload ffma --sms 66 --seconds 2
cost cost10 10 12
cost cost1 1 12
# Where the sampler's time goes at 10 ms under load (decode / evaluate / image init per drain).
P=.avg.pct_of_peak_sustained_elapsed
M12="TPC.TriageCompute.sm__inst_executed_pipe_fma_realtime$P,TPC.TriageCompute.sm__inst_executed_pipe_fmaheavy_realtime$P,TPC.TriageCompute.sm__inst_executed_pipe_fmalite_realtime$P,TPC.TriageCompute.sm__pipe_tensor_cycles_active_realtime$P,TPC.TriageCompute.sm__pipe_fp64_cycles_active_realtime$P,TPC.TriageCompute.sm__inst_executed_pipe_alu_realtime$P,TPC.TriageCompute.tpc__warps_active_realtime$P,SM_A.TriageCompute.l1tex__m_xbar2l1tex_read_sectors_realtime$P,lts__t_bytes.sum.pct_of_peak_sustained_elapsed,dram__bytes.sum.pct_of_peak_sustained_elapsed,dram__bytes.sum,gr__cycles_active$P"
# The sampler's stdin is a pipe from sleep: when sleep ends, the sampler stops (stderr of sleep
# goes to /dev/null so nothing holds this script's output open).
timeout 30 diescope-cupti sample --device 0 --interval-ms 10 --drain-ms 1000 --timing --metrics "$M12" \
  < <(sleep 8 2>/dev/null) > "$W/timing.out" 2>&1 &
sleep 1; sampler_gpu_load ffma 6 > "$W/timing.load" 2>&1; wait
grep '^note timing\|^drain' "$W/timing.out" | head -16 >> "$OUT/summary.txt"
# Counters held by Nsight Compute: the run goes on with GPU-Util only and says why.
timeout 40 ncu --clock-control none --metrics sm__cycles_active.avg sampler_gpu_load ffma 5 > "$W/ncu.log" 2>&1 &
NPID=$!
sleep 3
e2e held -- sleep 1
wait "$NPID"
grep -h "held by another profiler\|warning" "$W/held.stderr" | head -3 >> "$OUT/summary.txt"

for n in ffma stream ffma66 held; do { echo "== $n"; cat "$W/$n.stdout"; cat "$W/$n.stderr"; } >> "$OUT/runs.txt"; done
tar czf "$OUT/run.tgz" -C "$W" --exclude='*.csv' .
cat "$OUT/summary.txt"
