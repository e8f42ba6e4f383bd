#!/usr/bin/env bash
# Where the PM sampler's CPU time goes, and which setting changes it. Runs the sampler child
# (`diescope-cupti sample --timing`) beside `diescope-workload ffma`, which queues its kernels ahead
# (the load under which the first session measured 93% of a core at 10 ms), one variant at a time:
# interval, drain period, hardware-buffer size, append mode and metric count. For each it records the
# sampler's user and system CPU time over a steady stretch and the per-drain decode time, and takes a
# few stack samples of the sampler with gdb where the machine has it.
# Run from the repository root on the GPU machine with the binaries in $BIN; writes $OUT/summary.txt
# and $OUT/sampler-cost.tgz. Usage: bench/device/h200-sampler-cost.sh [VARIANT...]
set -u
BIN=${BIN:-$PWD/build/lead-carry}
OUT=${OUT:-/tmp/sampler-cost-out}
W=/tmp/sampler-cost-work
rm -rf "$W" && mkdir -p "$W" "$OUT"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}
SAMPLER=$BIN/diescope-cupti
LOAD="$BIN/diescope-workload ffma"
TICK=$(getconf CLK_TCK)
P=.avg.pct_of_peak_sustained_elapsed
M12="TPC.TriageCompute.sm__inst_executed_pipe_fma_realtime$P,TPC.TriageCompute.sm__inst_executed_pipe_fmaheavy_realtime$P,TPC.TriageCompute.sm__inst_executed_pipe_fmalite_realtime$P,TPC.TriageCompute.sm__pipe_tensor_cycles_active_realtime$P,TPC.TriageCompute.sm__pipe_fp64_cycles_active_realtime$P,TPC.TriageCompute.sm__inst_executed_pipe_alu_realtime$P,TPC.TriageCompute.tpc__warps_active_realtime$P,SM_A.TriageCompute.l1tex__m_xbar2l1tex_read_sectors_realtime$P,lts__t_bytes.sum.pct_of_peak_sustained_elapsed,dram__bytes.sum.pct_of_peak_sustained_elapsed,dram__bytes.sum,gr__cycles_active$P"
M2="gr__cycles_active$P,dram__bytes.sum"
# The Hopper unit table's own set (docs/units.json), and parts of it, to find which counters cost.
T_FMA="TPC.TriageCompute.sm__inst_executed_pipe_fma_realtime$P"
T_TENSOR="sm__pipe_tensor_cycles_active_realtime$P"
T_FP64="TPC.TriageCompute.sm__pipe_fp64_cycles_active_realtime$P"
T_LDST="l1tex__data_pipe_lsu_wavefronts_mem_lgds$P"
T_L1="SM_A.TriageCompute.l1tex__m_xbar2l1tex_read_sectors_realtime$P"
T_MEM="lts__t_bytes$P,dram__bytes.sum.pct_of_peak_sustained_elapsed,dram__throughput$P,dram__bytes.sum"
T_SMACT="sm__cycles_active$P"
T_WARPS="sm__warps_active_realtime$P"
T_HALVES="sm__inst_executed_pipe_fmaheavy$P,sm__inst_executed_pipe_fmalite$P"
TABLE="$T_FMA,$T_TENSOR,$T_FP64,$T_LDST,$T_L1,$T_MEM,$T_SMACT,$T_WARPS,$T_HALVES"
G="gr__cycles_active$P"
{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit --format=csv
  nproc; uname -r
  command -v gdb perf strace || echo "no gdb/perf/strace"
} > "$OUT/env.txt" 2>&1

stat_ticks() { awk '{print $14, $15}' /proc/$1/stat 2>/dev/null || echo "0 0"; }

# variant NAME LOADED(0|1) SAMPLER-ARGS...
variant() {
  local name=$1 loaded=$2; shift 2
  local lpid=""
  if [ "$loaded" = 1 ]; then
    $LOAD --seconds 11 > "$W/$name.load" 2>&1 &
    lpid=$!
    sleep 1.5
  fi
  "$SAMPLER" sample --device 0 --timing "$@" < <(sleep 100000) > "$W/$name.out" 2> "$W/$name.err" &
  local spid=$!
  for _ in $(seq 1 100); do grep -q '^on \|^error ' "$W/$name.out" 2>/dev/null && break; sleep 0.05; done
  sleep 1.5
  read -r u0 s0 < <(stat_ticks $spid)
  local t0; t0=$(date +%s%N)
  # Per-thread CPU at the start and the end of the stretch, and a few stack samples in between.
  for t in /proc/$spid/task/*; do echo "start $(basename $t) $(awk '{print $2, $14, $15}' $t/stat)"; done > "$W/$name.threads"
  if command -v gdb >/dev/null; then
    for i in 1 2 3; do
      sleep 1
      timeout 10 gdb -p $spid -batch -ex "thread apply all bt 12" > "$W/$name.gdb$i" 2>&1
    done
    sleep 1
  else
    for i in 1 2 3 4 5 6 7 8; do
      sleep 0.5
      for t in /proc/$spid/task/*; do echo "$i $(basename $t) $(cat $t/wchan 2>/dev/null) $(cut -d' ' -f1 $t/syscall 2>/dev/null)"; done
    done > "$W/$name.wchan"
  fi
  read -r u1 s1 < <(stat_ticks $spid)
  local t1; t1=$(date +%s%N)
  for t in /proc/$spid/task/*; do echo "end $(basename $t) $(awk '{print $2, $14, $15}' $t/stat)"; done >> "$W/$name.threads"
  kill -TERM $spid 2>/dev/null
  local stop_ns; stop_ns=$(date +%s%N)
  wait $spid
  local off_ms; off_ms=$(( ($(date +%s%N) - stop_ns) / 1000000 ))
  [ -n "$lpid" ] && wait $lpid
  awk -v n="$name" -v u=$((u1-u0)) -v s=$((s1-s0)) -v hz=$TICK -v a=$t0 -v b=$t1 -v off=$off_ms 'BEGIN{
      secs=(b-a)/1e9; printf "%s: user %.1f%% sys %.1f%% of one core over %.1f s; stop-to-exit %d ms; ", n, 100*u/hz/secs, 100*s/hz/secs, secs, off }' >> "$OUT/summary.txt"
  grep '^note timing' "$W/$name.out" | awk '{for(i=1;i<=NF;i++){if($i=="decode_us")d+=$(i+1); if($i=="cpu_us")c+=$(i+1); if($i=="passes")p+=$(i+1)} n++}
      END{ if(n) printf "drains %d, decode %.1f ms/drain, drain thread CPU %.1f ms/drain, passes %.1f/drain; ", n, d/n/1000, c/n/1000, p/n }' >> "$OUT/summary.txt"
  echo "samples $(grep -c '^s ' "$W/$name.out") gaps $(grep -c '^gap ' "$W/$name.out") overflow $(grep -c '^overflow ' "$W/$name.out") $(grep -m1 '^error' "$W/$name.out")" >> "$OUT/summary.txt"
  # Keep the protocol without the samples themselves (they are large).
  grep -v '^s ' "$W/$name.out" > "$W/$name.protocol"; rm -f "$W/$name.out"
}

all="idle base hw64 drain100 drain250 drain3000 latest int100 m2 int1"
for v in ${*:-$all}; do case $v in
  idle)      variant idle 0 --interval-ms 10 --drain-ms 1000 --metrics "$M12" ;;
  base)      variant base 1 --interval-ms 10 --drain-ms 1000 --metrics "$M12" ;;
  hw64)      variant hw64 1 --interval-ms 10 --drain-ms 1000 --hw-buffer-mb 64 --metrics "$M12" ;;
  drain100)  variant drain100 1 --interval-ms 10 --drain-ms 100 --metrics "$M12" ;;
  drain250)  variant drain250 1 --interval-ms 10 --drain-ms 250 --metrics "$M12" ;;
  drain3000) variant drain3000 1 --interval-ms 10 --drain-ms 3000 --metrics "$M12" ;;
  latest)    variant latest 1 --interval-ms 10 --drain-ms 1000 --keep-latest --metrics "$M12" ;;
  int100)    variant int100 1 --interval-ms 100 --drain-ms 1000 --metrics "$M12" ;;
  m2)        variant m2 1 --interval-ms 10 --drain-ms 1000 --metrics "$M2" ;;
  int1)      variant int1 1 --interval-ms 1 --drain-ms 1000 --metrics "$M12" ;;
  table)     variant table 1 --interval-ms 10 --drain-ms 1000 --metrics "$TABLE" ;;
  nohalves)  variant nohalves 1 --interval-ms 10 --drain-ms 1000 --metrics "$T_FMA,$T_TENSOR,$T_FP64,$T_LDST,$T_L1,$T_MEM,$T_SMACT,$T_WARPS" ;;
  noactive)  variant noactive 1 --interval-ms 10 --drain-ms 1000 --metrics "$T_FMA,$T_TENSOR,$T_FP64,$T_LDST,$T_L1,$T_MEM,$T_HALVES" ;;
  halves)    variant halves 1 --interval-ms 10 --drain-ms 1000 --metrics "$G,$T_HALVES" ;;
  tpcfma)    variant tpcfma 1 --interval-ms 10 --drain-ms 1000 --metrics "$G,$T_FMA" ;;
  smact)     variant smact 1 --interval-ms 10 --drain-ms 1000 --metrics "$G,$T_SMACT" ;;
  warps)     variant warps 1 --interval-ms 10 --drain-ms 1000 --metrics "$G,$T_WARPS" ;;
  l1fill)    variant l1fill 1 --interval-ms 10 --drain-ms 1000 --metrics "$G,$T_L1" ;;
  mem)       variant mem 1 --interval-ms 10 --drain-ms 1000 --metrics "$G,$T_MEM" ;;
  tensor)    variant tensor 1 --interval-ms 10 --drain-ms 1000 --metrics "$G,$T_TENSOR,$T_FP64,$T_LDST" ;;
esac; done
cp "$OUT/summary.txt" "$W/"
tar czf "$OUT/sampler-cost.tgz" -C "$W" .
cat "$OUT/summary.txt"
