#!/usr/bin/env bash
# Where the PM sampler's CPU time goes, and which setting changes it. Runs the sampler child
# (`diescope-cupti sample --timing`) beside `diescope-workload ffma` (every SM, kernels queued
# ahead), one variant at a time: interval, drain period, hardware-buffer size, append mode, and which
# counters it reads. For each it records the sampler's user and system CPU over a steady ~4 s stretch
# (/proc), the time inside `cuptiPmSamplingDecodeData` per drain, and each thread's CPU at the start
# and the end of the stretch; with gdb on the machine, a few stack samples too. Runs on a GPU machine.
# Appends to OUT_DIR/summary.txt (one line per variant) and OUT_DIR/threads.txt, and writes
# OUT_DIR/env.txt; each variant's protocol (without the samples) stays in WORK.
#
#   bench/sampler/cpu_cost_variants.sh OUT_DIR [VARIANT...]     BUILD=build/release (diescope-cupti, diescope-workload)
#
# Variants (default: idle base hw64 drain100 drain250 drain3000 latest int100 m2 int1):
#   idle, base      the 12-counter GH100 set at 10 ms, 1 s drains, on an idle GPU and under FFMA
#   hw64            a 64 MiB hardware buffer          drain100, drain250, drain3000: drain period
#   latest          keep-latest append mode           int100, int1: 100 ms and 1 ms intervals
#   m2              two counters only                 table: the Hopper unit table's 13 counters
#   nohalves, noactive: the table without the FMA halves, without SM active and occupancy
#   halves, tpcfma, smact, warps, l1fill, mem, tensor: gr__cycles_active plus that part of the table
set -euo pipefail
out_dir=${1:?usage: bench/sampler/cpu_cost_variants.sh OUT_DIR [VARIANT...]   (BUILD=build folder, default build/release)}
shift
cd "$(dirname "$0")/../.."
. bench/common.sh
bench_bin diescope-cupti diescope-workload
bench_out "$out_dir"
bench_work sampler-cost
SAMPLER=$BIN/diescope-cupti
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
  bench_gpu_env
  nproc; uname -r
  command -v gdb perf strace || echo "no gdb/perf/strace"
} > "$OUT/env.txt" 2>&1

stat_ticks() { awk '{print $14, $15}' "/proc/$1/stat" 2>/dev/null || echo "0 0"; }
# threads WHEN PID: each thread's id, name, user and system ticks.
threads() { for t in /proc/"$2"/task/*; do echo "$1 $(basename "$t") $(awk '{print $2, $14, $15}' "$t/stat" 2>/dev/null)"; done; }

# variant NAME LOADED(0|1) SAMPLER-ARGS...
variant() {
  local name=$1 loaded=$2 lpid="" spid u0 s0 u1 s1 t0 t1 i; shift 2
  if [ "$loaded" = 1 ]; then
    diescope-workload ffma --seconds 11 > "$WORK/$name.load" 2>&1 &
    lpid=$!
    sleep 1.5
  fi
  "$SAMPLER" sample --device 0 --timing "$@" < <(sleep 100000) > "$WORK/$name.out" 2> "$WORK/$name.err" &
  spid=$!
  for _ in $(seq 1 100); do grep -q '^on \|^error ' "$WORK/$name.out" 2>/dev/null && break; sleep 0.05; done
  sleep 1.5
  read -r u0 s0 < <(stat_ticks "$spid")
  t0=$(date +%s%N)
  threads start "$spid" > "$WORK/$name.threads"
  if command -v gdb >/dev/null; then
    for i in 1 2 3; do
      sleep 1
      timeout 10 gdb -p "$spid" -batch -ex "thread apply all bt 12" > "$WORK/$name.gdb$i" 2>&1 || true
    done
    sleep 1
  else
    sleep 4
  fi
  read -r u1 s1 < <(stat_ticks "$spid")
  t1=$(date +%s%N)
  threads end "$spid" >> "$WORK/$name.threads"
  kill -TERM "$spid" 2>/dev/null || true
  local stop_ns off_ms; stop_ns=$(date +%s%N)
  wait "$spid" || true
  off_ms=$(( ($(date +%s%N) - stop_ns) / 1000000 ))
  [ -n "$lpid" ] && { wait "$lpid" || true; }
  {
    awk -v n="$name" -v u=$((u1-u0)) -v s=$((s1-s0)) -v hz="$TICK" -v a="$t0" -v b="$t1" -v off="$off_ms" 'BEGIN{
        secs=(b-a)/1e9; printf "%s: user %.1f%% sys %.1f%% of one core over %.1f s; stop-to-exit %d ms; ", n, 100*u/hz/secs, 100*s/hz/secs, secs, off }'
    grep '^note timing' "$WORK/$name.out" | awk '{for(i=1;i<=NF;i++){if($i=="decode_us")d+=$(i+1); if($i=="cpu_us")c+=$(i+1); if($i=="passes")p+=$(i+1)} n++}
        END{ if(n) printf "drains %d, decode %.1f ms/drain, drain thread CPU %.1f ms/drain, passes %.1f/drain; ", n, d/n/1000, c/n/1000, p/n }'
    echo "samples $(grep -c '^s ' "$WORK/$name.out" || true) gaps $(grep -c '^gap ' "$WORK/$name.out" || true) overflow $(grep -c '^overflow ' "$WORK/$name.out" || true) $(grep -m1 '^error' "$WORK/$name.out" || true)"
  } >> "$OUT/summary.txt"
  { echo "== $name"; cat "$WORK/$name.threads"; } >> "$OUT/threads.txt"
  # Keep the protocol without the samples themselves (they are large).
  grep -v '^s ' "$WORK/$name.out" > "$WORK/$name.protocol" || true
  rm -f "$WORK/$name.out"
}

variants=("$@")
[ ${#variants[@]} -gt 0 ] || variants=(idle base hw64 drain100 drain250 drain3000 latest int100 m2 int1)
echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) variants: ${variants[*]}" >> "$OUT/summary.txt"
for v in "${variants[@]}"; do case $v in
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
  *) echo "cpu_cost_variants: unknown variant $v" >&2; exit 2 ;;
esac; done
cat "$OUT/summary.txt"
