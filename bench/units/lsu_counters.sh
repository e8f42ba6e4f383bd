#!/usr/bin/env bash
# What GH100's L1 data-pipe and LSU counters count: every one CUPTI lists for GH100 (whole pipe, the
# local/global/distributed-shared part, the shared-memory part by operation, writeback, LSU
# instructions), beside the tensor, FMA and FP64 pipes, read by Nsight Compute (kernel replay, clocks
# left as they are, one launch after 3 skipped) on a cuBLAS bf16 GEMM (wgmma), STREAM copy, STREAM
# triad and FFMA. Shows whether Load/store's counter takes in the tensor core's shared-memory operand
# reads. Runs on a GPU machine with ncu. Writes OUT_DIR/env.txt and OUT_DIR/ncu-lsu.csv
# (bench/ncu_table.py: workload, launch, kernel, metric, unit, value); ncu's full output stays in WORK.
#
#   bench/units/lsu_counters.sh OUT_DIR     BUILD=build/release (diescope, diescope-workload)
set -euo pipefail
out_dir=${1:?usage: bench/units/lsu_counters.sh OUT_DIR   (BUILD=build folder, default build/release)}
cd "$(dirname "$0")/../.."
. bench/common.sh
bench_bin diescope diescope-workload
command -v ncu >/dev/null || { echo "lsu_counters: ncu (Nsight Compute) not on PATH" >&2; exit 2; }
bench_out "$out_dir"
bench_work lsu-counters
{ bench_gpu_env; ncu --version | tail -1; } > "$OUT/env.txt" 2>&1
P=.avg.pct_of_peak_sustained_elapsed
metrics=""
for c in l1tex__data_pipe_lsu_wavefronts l1tex__data_pipe_lsu_wavefronts_mem_lgds l1tex__data_pipe_lsu_wavefronts_mem_shared \
         l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st \
         l1tex__data_pipe_lsu_wavefronts_mem_shared_op_misc l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom \
         l1tex__lsu_writeback_active l1tex__lsu_writeback_active_mem_lgds l1tex__lsu_writeback_active_mem_shared \
         sm__inst_executed_pipe_lsu sm__mio_pq_read_cycles_active_pipe_lsu sm__pipe_shared_cycles_active \
         l1tex__data_bank_reads l1tex__data_bank_writes l1tex__m_xbar2l1tex_read_sectors \
         sm__pipe_tensor_cycles_active sm__inst_executed_pipe_fma sm__pipe_fp64_cycles_active; do
  metrics="$metrics${metrics:+,}$c$P"
done
metrics="$metrics,l1tex__data_pipe_lsu_wavefronts.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_lgds.sum,sm__cycles_elapsed.avg.per_second"
# one NAME WORKLOAD...: ncu on the 4th launch of the workload's kernels.
one() {
  local name=$1; shift
  timeout 120 ncu --clock-control none --launch-skip 3 --launch-count 1 --csv --metrics "$metrics" \
    diescope-workload "$@" > "$WORK/ncu-lsu-$name.csv" 2> "$WORK/ncu-lsu-$name.stderr"
}
one gemm gemm --seconds 1
one copy stream --kernel copy --seconds 1
one triad stream --kernel triad --seconds 1
one ffma ffma --seconds 1
python3 bench/ncu_table.py gemm="$WORK/ncu-lsu-gemm.csv" copy="$WORK/ncu-lsu-copy.csv" \
  triad="$WORK/ncu-lsu-triad.csv" ffma="$WORK/ncu-lsu-ffma.csv" > "$OUT/ncu-lsu.csv"
