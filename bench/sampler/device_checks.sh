#!/usr/bin/env bash
# The CUPTI sampler child (`diescope-cupti sample`) on a real GPU: whether its sample times line up
# with the host clock, what its counters read against a load that counts its own work
# (sampler_gpu_load: FFMA and copy phases, synchronising with the host every 4 launches), its CPU cost
# at 10 ms and 1 ms and on an idle GPU, what happens at 1, 0.5, 0.25 and 0.1 ms (untimed samples,
# gaps, overflow), what happens when Nsight Compute holds the counters (either order), and its errors
# (no such device, unknown metric, not root). Runs on a GPU machine (ncu on PATH for the ncu step).
# Writes into OUT_DIR: env.txt, summary.txt (one line per experiment), analysis.txt
# (bench/sampler/protocol_analysis.py over the raw outputs) and clock-notes.txt (each run's clock
# mapping lines); the raw sampler outputs stay in WORK.
#
#   bench/sampler/device_checks.sh OUT_DIR [phases] [cost] [intervals] [ncu] [errors]     (all by default)
#   BUILD=build/release (diescope-cupti, sampler_gpu_load)
set -euo pipefail
out_dir=${1:?usage: bench/sampler/device_checks.sh OUT_DIR [phases] [cost] [intervals] [ncu] [errors]   (BUILD=build folder)}
shift
cd "$(dirname "$0")/../.."
. bench/common.sh
bench_bin diescope-cupti sampler_gpu_load
bench_out "$out_dir"
bench_work sampler-checks
SAMPLER=$BIN/diescope-cupti
LOAD=$BIN/sampler_gpu_load
W=$WORK
TICK=$(getconf CLK_TCK)
steps=${*:-phases cost intervals ncu errors}
: > "$OUT/summary.txt"

# The first GH100 set, 12 counters in one pass (FMA pipe and its halves, tensor, FP64, ALU, warps,
# L1 fill, L2, DRAM, GR active); the six plain names as the fallback.
P=.avg.pct_of_peak_sustained_elapsed
M12="TPC.TriageCompute.sm__inst_executed_pipe_fma_realtime$P,TPC.TriageCompute.sm__inst_executed_pipe_fmaheavy_realtime$P,TPC.TriageCompute.sm__inst_executed_pipe_fmalite_realtime$P,TPC.TriageCompute.sm__pipe_tensor_cycles_active_realtime$P,TPC.TriageCompute.sm__pipe_fp64_cycles_active_realtime$P,TPC.TriageCompute.sm__inst_executed_pipe_alu_realtime$P,TPC.TriageCompute.tpc__warps_active_realtime$P,SM_A.TriageCompute.l1tex__m_xbar2l1tex_read_sectors_realtime$P,lts__t_bytes.sum.pct_of_peak_sustained_elapsed,dram__bytes.sum.pct_of_peak_sustained_elapsed,dram__bytes.sum,gr__cycles_active$P"
M6="gr__cycles_active$P,sm__inst_executed_pipe_fma$P,sm__pipe_tensor_cycles_active_realtime$P,dram__bytes.sum.pct_of_peak_sustained_elapsed,dram__bytes.sum,lts__t_bytes.sum.pct_of_peak_sustained_elapsed"
METRICS=$M12

{
  bench_gpu_env
  nvidia-smi -q -d CLOCK,PERFORMANCE | sed -n 1,60p
  uname -a; nproc
  find /usr/local/cuda/lib64/ /usr/local/cuda/extras/CUPTI/lib64/ -maxdepth 1 -name 'libcupti*' 2>&1 | head
  grep -i profil /proc/driver/nvidia/params 2>/dev/null
} > "$OUT/env.txt" 2>&1 || true

cpu_ticks() { awk '{print $14+$15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
count() { grep -c "$1" "$2" || true; }

# start_sampler NAME INTERVAL DRAIN [extra...]: runs the sampler in the background, stdin held open.
start_sampler() {
  local name=$1 interval=$2 drain=$3; shift 3
  "$SAMPLER" sample --device 0 --interval-ms "$interval" --drain-ms "$drain" --metrics "$METRICS" "$@" < <(sleep 100000) \
    > "$W/$name.out" 2> "$W/$name.err" &
  SPID=$!
  for _ in $(seq 1 200); do
    grep -q '^on \|^error ' "$W/$name.out" 2>/dev/null && break
    sleep 0.05
  done
  ON_TICKS=$(cpu_ticks "$SPID")
  ON_NS=$(date +%s%N)
}

stop_sampler() {
  local name=$1 rc=0
  local end_ticks; end_ticks=$(cpu_ticks "$SPID")
  local end_ns; end_ns=$(date +%s%N)
  kill -TERM "$SPID" 2>/dev/null || true
  wait "$SPID" || rc=$?
  local samples overflows gaps drains
  samples=$(count '^s ' "$W/$name.out"); overflows=$(count '^overflow ' "$W/$name.out")
  gaps=$(count '^gap ' "$W/$name.out"); drains=$( (grep '^drain ' "$W/$name.out" || true) | awk '{n++; s+=$4; if($4>m)m=$4} END{printf "%d drains, decode mean %.0f us, max %d us", n, n?s/n:0, m}')
  local secs; secs=$(awk -v a="$ON_NS" -v b="$end_ns" 'BEGIN{printf "%.2f", (b-a)/1e9}')
  local cpu; cpu=$(awk -v t=$((end_ticks-ON_TICKS)) -v hz="$TICK" -v s="$secs" 'BEGIN{printf "%.3f s CPU over %.2f s = %.2f%% of one core", t/hz, s, 100*t/hz/s}')
  local total; total=$(awk -v t="$end_ticks" -v hz="$TICK" 'BEGIN{printf "%.3f", t/hz}')
  echo "$name: rc=$rc samples=$samples overflow=$overflows gaps=$gaps; $drains; steady $cpu; total CPU incl. setup $total s; $(grep -m1 '^error ' "$W/$name.out" || true)" | tee -a "$OUT/summary.txt"
}

for step in $steps; do case $step in
phases)
  start_sampler phases10 10 1000
  if grep -q '^error metrics' "$W/phases10.out"; then
    echo "M12 refused: $(grep '^error' "$W/phases10.out")" | tee -a "$OUT/summary.txt"
    wait "$SPID" || true; METRICS=$M6; start_sampler phases10 10 1000
  fi
  # The sampler must not hold a CUDA context: no compute process should be listed while it runs.
  echo "phases10: compute processes while sampling (nvidia-smi): $(nvidia-smi --query-compute-apps=pid,process_name --format=csv,noheader 2>&1 | tr '\n' ' ')(sampler pid $SPID)" >> "$OUT/summary.txt"
  "$LOAD" phases > "$W/phases10.load" 2>&1 || true
  sleep 0.2
  stop_sampler phases10
  ;;
cost)
  for iv in 10 1; do
    start_sampler "cost$iv" $iv 1000
    "$LOAD" ffma 20 > "$W/cost$iv.load" 2>&1
    stop_sampler "cost$iv"
  done
  start_sampler idle10 10 1000; sleep 10; stop_sampler idle10
  ;;
intervals)
  start_sampler long1ms 1 1000
  "$LOAD" ffma 60 > "$W/long1ms.load" 2>&1
  stop_sampler long1ms
  for iv in 0.5 0.25 0.1; do
    start_sampler "short$iv" $iv 1000
    "$LOAD" ffma 8 > "$W/short$iv.load" 2>&1
    stop_sampler "short$iv"
  done
  ;;
ncu)
  NCU=$(command -v ncu || find /usr/local/cuda/bin /opt/nvidia/nsight-compute -name ncu -type f 2>/dev/null | head -1 || true)
  [ -n "$NCU" ] || { echo "device_checks: ncu not found; skipping the ncu step" | tee -a "$OUT/summary.txt"; continue; }
  echo "ncu: $NCU" >> "$OUT/summary.txt"
  # ncu holds the counters while it profiles; start the sampler in the middle.
  timeout 60 "$NCU" --clock-control none --metrics sm__cycles_active.avg "$LOAD" ffma 6 > "$W/ncu_first.ncu" 2>&1 &
  NPID=$!
  sleep 4
  start_sampler ncu_first 10 1000; sleep 1; stop_sampler ncu_first
  rc=0; wait "$NPID" || rc=$?; echo "ncu (first) rc=$rc" >> "$OUT/summary.txt"
  # The other order: the sampler holds the counters, ncu starts.
  start_sampler sampler_first 10 1000
  rc=0; timeout 60 "$NCU" --clock-control none --metrics sm__cycles_active.avg "$LOAD" ffma 1 > "$W/sampler_first.ncu" 2>&1 || rc=$?
  echo "ncu (second) rc=$rc: $(grep -m3 -i 'error\|==PROF==\|==WARNING==' "$W/sampler_first.ncu" | tr '\n' ' ')" >> "$OUT/summary.txt"
  stop_sampler sampler_first
  ;;
errors)
  rc=0; "$SAMPLER" sample --device 7 --metrics "$METRICS" < /dev/null > "$W/nodevice.out" 2>&1 || rc=$?
  echo "device 7: rc=$rc $(grep '^error' "$W/nodevice.out" || true)" >> "$OUT/summary.txt"
  rc=0; "$SAMPLER" sample --device 0 --metrics "bogus__metric.sum" < /dev/null > "$W/badmetric.out" 2>&1 || rc=$?
  echo "bad metric: rc=$rc $(grep '^error' "$W/badmetric.out" || true)" >> "$OUT/summary.txt"
  # As an ordinary user (nobody), from a copy others may run.
  if command -v setpriv >/dev/null; then
    cp "$SAMPLER" "$W/ds-sampler" && chmod 755 "$W" "$W/ds-sampler"
    rc=0; setpriv --reuid=65534 --regid=65534 --clear-groups "$W/ds-sampler" sample --device 0 --metrics "$METRICS" < /dev/null > "$W/nonroot.out" 2>&1 || rc=$?
    echo "non-root: rc=$rc $(grep '^error\|^on' "$W/nonroot.out" | head -2 | tr '\n' ' ')" >> "$OUT/summary.txt"
  fi
  ;;
esac; done

python3 bench/sampler/protocol_analysis.py "$W" > "$OUT/analysis.txt"
for f in "$W"/*.out; do
  grep '^clock \|^note clock' "$f" | sed "s#^#$(basename "$f" .out) #" || true
done > "$OUT/clock-notes.txt"
cat "$OUT/summary.txt"
