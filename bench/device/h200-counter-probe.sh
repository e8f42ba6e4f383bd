#!/usr/bin/env bash
# Two counter questions, answered with Nsight Compute (kernel replay, unmodified clocks) on one launch:
#  1. Load/store on GH100. The table reads l1tex__data_pipe_lsu_wavefronts, which read 94.5% on a
#     cuBLAS wgmma GEMM. Does it count the tensor core's shared-memory operand reads? Every L1 data-pipe
#     and LSU counter CUPTI lists for GH100, on the GEMM, a STREAM copy, a triad and FFMA.
#  2. The bench harness's counter replay pass beside ncu on the same metrics and the same copy kernel
#     (examples/counter_replay): the pass's four default metrics plus DRAM bytes, asked of both.
# Run from the repository root on the GPU machine; binaries in $BIN, the examples in $EXAMPLES.
# Usage: bench/device/h200-counter-probe.sh [lsu] [replay]   (both by default)
set -u
BIN=${BIN:-$PWD/build/lead-carry}
EXAMPLES=${EXAMPLES:-$PWD/build/lead-carry/examples}
OUT=${OUT:-/tmp/counter-probe-out}
W=/tmp/counter-probe-work
rm -rf "$W" && mkdir -p "$W" "$OUT"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}
{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit --format=csv
  ncu --version | tail -1
} > "$W/env.txt" 2>&1

P=.avg.pct_of_peak_sustained_elapsed
LSU=""
for c in l1tex__data_pipe_lsu_wavefronts l1tex__data_pipe_lsu_wavefronts_mem_lgds l1tex__data_pipe_lsu_wavefronts_mem_shared \
         l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st \
         l1tex__data_pipe_lsu_wavefronts_mem_shared_op_misc l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom \
         l1tex__lsu_writeback_active l1tex__lsu_writeback_active_mem_lgds l1tex__lsu_writeback_active_mem_shared \
         sm__inst_executed_pipe_lsu sm__mio_pq_read_cycles_active_pipe_lsu sm__pipe_shared_cycles_active \
         l1tex__data_bank_reads l1tex__data_bank_writes l1tex__m_xbar2l1tex_read_sectors \
         sm__pipe_tensor_cycles_active sm__inst_executed_pipe_fma sm__pipe_fp64_cycles_active; do
  LSU="$LSU${LSU:+,}$c$P"
done
LSU="$LSU,l1tex__data_pipe_lsu_wavefronts.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_lgds.sum,sm__cycles_elapsed.avg.per_second"

ncu_one() {
  local name=$1; shift
  timeout 120 ncu --clock-control none --launch-skip 3 --launch-count 1 --csv --metrics "$LSU" "$@" \
    > "$W/ncu-lsu-$name.csv" 2> "$W/ncu-lsu-$name.stderr"
  echo "ncu lsu $name rc=$?" >> "$W/summary.txt"
}
steps=${*:-lsu replay}
if [[ " $steps " == *" lsu "* ]]; then
  ncu_one gemm "$BIN/diescope-workload" gemm --seconds 1
  ncu_one copy "$BIN/diescope-workload" stream --kernel copy --seconds 1
  ncu_one triad "$BIN/diescope-workload" stream --kernel triad --seconds 1
  ncu_one ffma "$BIN/diescope-workload" ffma --seconds 1
fi

# 2. The replay pass and ncu on the same metrics. The pass's set is the harness default plus DRAM
#    bytes; ncu profiles the 6th launch of the same copy kernel in a run without the pass.
REPLAY="sm__throughput$P,lts__throughput$P,dram__throughput$P,sm__inst_executed_pipe_tensor.avg.pct_of_peak_sustained_active,dram__bytes.sum.pct_of_peak_sustained_elapsed"
if [[ " $steps " == *" replay "* ]]; then
  for k in copy fma; do
    for n in 1 10; do
      timeout 120 "$EXAMPLES/counter_replay" --metrics "$REPLAY" --pass-launches $n --filter "^${k}_with_counters\$" \
        --json "$W/replay-$k-x$n.json" > "$W/replay-$k-x$n.txt" 2>&1
      echo "replay $k x$n rc=$?" >> "$W/summary.txt"
    done
    timeout 120 ncu --clock-control none --kernel-name "regex:${k}_kernel" --launch-skip 5 --launch-count 3 --csv --metrics "$REPLAY,gpu__time_duration.sum" \
      "$EXAMPLES/counter_replay" --filter "^${k}\$" --min-samples 10 --max-samples 20 > "$W/ncu-replay-$k.csv" 2> "$W/ncu-replay-$k.stderr"
    echo "ncu replay $k rc=$?" >> "$W/summary.txt"
  done
fi
tar czf "$OUT/counter-probe.tgz" -C "$W" .
cat "$W/summary.txt"
