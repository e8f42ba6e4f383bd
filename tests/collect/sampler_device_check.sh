#!/usr/bin/env bash
# Checks the CUPTI sampler child on a real GPU and measures what it costs. Run from the repository
# root on the GPU machine with the binaries carried in build/sampler/bin; writes to $OUT:
#   env.txt     GPU, driver, clocks, date
#   summary.txt one line per experiment (samples, overflows, gaps, CPU time)
#   raw.tgz     every sampler's protocol output and every load's phase times
# Usage: tests/collect/sampler_device_check.sh [phases] [cost] [intervals] [ncu] [errors]
set -u
OUT=${OUT:-/tmp/sampler-out}
mkdir -p "$OUT"
B=${SAMPLER_BIN:-$PWD/build/sampler/bin}
SAMPLER=${SAMPLER:-$B/diescope-cupti}
LOAD=$B/sampler_gpu_load
W=/tmp/sampler-work
rm -rf "$W" && mkdir -p "$W"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}
TICK=$(getconf CLK_TCK)
steps=${*:-phases cost intervals ncu errors}

# The GH100 one-pass set from shared/DESIGN.md; the probe's six as the fallback.
P=.avg.pct_of_peak_sustained_elapsed
M12="TPC.TriageCompute.sm__inst_executed_pipe_fma_realtime$P,TPC.TriageCompute.sm__inst_executed_pipe_fmaheavy_realtime$P,TPC.TriageCompute.sm__inst_executed_pipe_fmalite_realtime$P,TPC.TriageCompute.sm__pipe_tensor_cycles_active_realtime$P,TPC.TriageCompute.sm__pipe_fp64_cycles_active_realtime$P,TPC.TriageCompute.sm__inst_executed_pipe_alu_realtime$P,TPC.TriageCompute.tpc__warps_active_realtime$P,SM_A.TriageCompute.l1tex__m_xbar2l1tex_read_sectors_realtime$P,lts__t_bytes.sum.pct_of_peak_sustained_elapsed,dram__bytes.sum.pct_of_peak_sustained_elapsed,dram__bytes.sum,gr__cycles_active$P"
M6="gr__cycles_active$P,sm__inst_executed_pipe_fma$P,sm__pipe_tensor_cycles_active_realtime$P,dram__bytes.sum.pct_of_peak_sustained_elapsed,dram__bytes.sum,lts__t_bytes.sum.pct_of_peak_sustained_elapsed"
METRICS=$M12

{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,pci.bus_id,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,power.limit,persistence_mode --format=csv
  nvidia-smi -q -d CLOCK,PERFORMANCE | sed -n 1,60p
  uname -a; nproc
  ls -la /usr/local/cuda/lib64/libcupti* /usr/local/cuda/extras/CUPTI/lib64/libcupti* 2>&1 | head
  cat /proc/driver/nvidia/params 2>/dev/null | grep -i profil
} > "$OUT/env.txt" 2>&1

cpu_ticks() { awk '{print $14+$15}' /proc/$1/stat 2>/dev/null || echo 0; }

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
  ON_TICKS=$(cpu_ticks $SPID)
  ON_NS=$(date +%s%N)
}

stop_sampler() {
  local name=$1
  local end_ticks; end_ticks=$(cpu_ticks $SPID)
  local end_ns; end_ns=$(date +%s%N)
  kill -TERM $SPID 2>/dev/null
  wait $SPID; local rc=$?
  local samples overflows gaps drains
  samples=$(grep -c '^s ' "$W/$name.out"); overflows=$(grep -c '^overflow ' "$W/$name.out")
  gaps=$(grep -c '^gap ' "$W/$name.out"); drains=$(grep '^drain ' "$W/$name.out" | awk '{n++; s+=$4; if($4>m)m=$4} END{printf "%d drains, decode mean %.0f us, max %d us", n, n?s/n:0, m}')
  local secs; secs=$(awk -v a="$ON_NS" -v b="$end_ns" 'BEGIN{printf "%.2f", (b-a)/1e9}')
  local cpu; cpu=$(awk -v t=$((end_ticks-ON_TICKS)) -v hz="$TICK" -v s="$secs" 'BEGIN{printf "%.3f s CPU over %.2f s = %.2f%% of one core", t/hz, s, 100*t/hz/s}')
  local total; total=$(awk -v t="$end_ticks" -v hz="$TICK" 'BEGIN{printf "%.3f", t/hz}')
  echo "$name: rc=$rc samples=$samples overflow=$overflows gaps=$gaps; $drains; steady $cpu; total CPU incl. setup $total s; $(grep -m1 '^error ' "$W/$name.out")" | tee -a "$OUT/summary.txt"
}

for step in $steps; do case $step in
phases)
  start_sampler phases10 10 1000
  if grep -q '^error metrics' "$W/phases10.out"; then
    echo "M12 refused: $(grep '^error' "$W/phases10.out")" | tee -a "$OUT/summary.txt"
    wait $SPID; METRICS=$M6; start_sampler phases10 10 1000
  fi
  nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv > "$W/apps_while_sampling.txt" 2>&1
  echo "sampler pid $SPID" >> "$W/apps_while_sampling.txt"
  "$LOAD" phases > "$W/phases10.load" 2>&1
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
  NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
  echo "ncu: $NCU" >> "$OUT/summary.txt"
  # ncu holds the counters while it profiles; start the sampler in the middle.
  timeout 60 "$NCU" --clock-control none --metrics sm__cycles_active.avg "$LOAD" ffma 6 > "$W/ncu_first.ncu" 2>&1 &
  NPID=$!
  sleep 4
  start_sampler ncu_first 10 1000; sleep 1; stop_sampler ncu_first
  wait $NPID; echo "ncu (first) rc=$?" >> "$OUT/summary.txt"
  # The other order: the sampler holds the counters, ncu starts.
  start_sampler sampler_first 10 1000
  timeout 60 "$NCU" --clock-control none --metrics sm__cycles_active.avg "$LOAD" ffma 1 > "$W/sampler_first.ncu" 2>&1
  echo "ncu (second) rc=$?: $(grep -m3 -i 'error\|==PROF==\|==WARNING==' "$W/sampler_first.ncu" | tr '\n' ' ')" >> "$OUT/summary.txt"
  stop_sampler sampler_first
  ;;
errors)
  "$SAMPLER" sample --device 7 --metrics "$METRICS" < /dev/null > "$W/nodevice.out" 2>&1; echo "device 7: rc=$? $(grep '^error' "$W/nodevice.out")" >> "$OUT/summary.txt"
  "$SAMPLER" sample --device 0 --metrics "bogus__metric.sum" < /dev/null > "$W/badmetric.out" 2>&1; echo "bad metric: rc=$? $(grep '^error' "$W/badmetric.out")" >> "$OUT/summary.txt"
  cp "$SAMPLER" /tmp/ds-sampler && chmod 755 /tmp/ds-sampler
  if command -v setpriv >/dev/null; then
    setpriv --reuid=65534 --regid=65534 --clear-groups /tmp/ds-sampler sample --device 0 --metrics "$METRICS" < /dev/null > "$W/nonroot.out" 2>&1
    echo "non-root: rc=$? $(grep '^error\|^on' "$W/nonroot.out" | head -2 | tr '\n' ' ')" >> "$OUT/summary.txt"
  fi
  ;;
esac; done

cp "$OUT/summary.txt" "$W/" 2>/dev/null
tar czf "$OUT/raw.tgz" -C "$W" .
cat "$OUT/summary.txt"
