#!/usr/bin/env bash
# A unit's counter on a kernel that loads it, beside Nsight Compute's plain counter on the same kernel:
# one calibrate step (a plan under bench/units/plans/) runs under `diescope run`, and each unit's mean
# over the step's own measured window is taken from the recording (bench/units/window_means.py); then
# ncu (kernel replay, clocks left as they are, one launch after 3 skipped) reads the same kernel.
#   dfma    FP64: 132 SMs of DFMA (plans/dfma.json)
#   wgmma   Tensor: bf16 wgmma m64n256k16 on 132 and 33 SMs (plans/wgmma.json)
# Runs on a GPU machine with ncu. Writes into OUT_DIR: window-means.csv, ncu.csv (bench/ncu_table.py)
# and steps.jsonl (the workload's step lines without their launch lists); the recording, report and
# full outputs stay in WORK.
#
#   bench/units/step_vs_ncu.sh OUT_DIR dfma|wgmma     BUILD=build/release (diescope, diescope-cupti, diescope-workload)
set -euo pipefail
out_dir=${1:?usage: bench/units/step_vs_ncu.sh OUT_DIR dfma|wgmma   (BUILD=build folder, default build/release)}
step=${2:?usage: bench/units/step_vs_ncu.sh OUT_DIR dfma|wgmma}
cd "$(dirname "$0")/../.."
. bench/common.sh
P=.avg.pct_of_peak_sustained_elapsed
case $step in
  dfma) kernel=dfma
        metrics="sm__pipe_fp64_cycles_active$P,sm__inst_executed_pipe_fp64$P,sm__pipe_tensor_cycles_active$P,sm__inst_executed_pipe_fma$P,sm__cycles_elapsed.avg.per_second" ;;
  wgmma) kernel=wgmma
        metrics="sm__pipe_tensor_cycles_active$P,sm__pipe_tensor_op_hmma_cycles_active$P,sm__inst_executed_pipe_tensor.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_gmma.sum,sm__cycles_elapsed.avg.per_second,gpu__time_duration.sum" ;;
  *) echo "step_vs_ncu: unknown step $step (dfma or wgmma)" >&2; exit 2 ;;
esac
plan=$PWD/bench/units/plans/$step.json
bench_bin diescope diescope-cupti diescope-workload
command -v ncu >/dev/null || { echo "step_vs_ncu: ncu (Nsight Compute) not on PATH" >&2; exit 2; }
bench_out "$out_dir"
bench_work "step-$step"
mkdir -p "$WORK/run"
timeout 120 diescope run --report "$WORK/run" -- diescope-workload calibrate --plan "$plan" \
  > "$WORK/run/stdout.txt" 2> "$WORK/run/stderr.txt"
timeout 120 ncu --clock-control none --kernel-name "regex:$kernel" --launch-skip 3 --launch-count 1 --csv \
  --metrics "$metrics" diescope-workload calibrate --plan "$plan" > "$WORK/ncu.csv" 2> "$WORK/ncu.stderr"
python3 bench/units/window_means.py "$step=$WORK/run/gpu0.dsrec@$WORK/run/stdout.txt" > "$OUT/window-means.csv"
python3 bench/ncu_table.py "$step=$WORK/ncu.csv" > "$OUT/ncu.csv"
python3 -c '
import json, sys
for line in open(sys.argv[1]):
    if line.startswith("{") and "\"calibrate\":\"step\"" in line:
        step = json.loads(line)
        step.pop("launches", None)
        print(json.dumps(step, sort_keys=True))' "$WORK/run/stdout.txt" > "$OUT/steps.jsonl"
cat "$OUT/window-means.csv" "$OUT/ncu.csv"
