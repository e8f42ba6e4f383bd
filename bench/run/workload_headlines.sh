#!/usr/bin/env bash
# `diescope run`'s headline on every bundled workload and on real training: FFMA on 132, 66 and 33
# SMs, STREAM copy and triad, a cuBLAS bf16 GEMM, a 50/100 ms duty cycle, and a PyTorch ResNet-50 AMP
# training loop, each recorded with `--window markers`; then Nsight Compute's plain counters (kernel
# replay, clocks left as they are, one launch after 3 skipped) on the FFMA, copy and GEMM kernels.
# These recordings are the bundled fixtures of data/recordings/h200/. Runs on a GPU machine with ncu
# and PyTorch. Writes into OUT_DIR: env.txt, summary.txt (exit codes), headlines.txt (each run's
# printed headline, the workload's own result line and stderr), report-figures.csv
# (bench/run/report_figures.py) and ncu.csv (bench/ncu_table.py); recordings and reports stay in WORK.
#
#   bench/run/workload_headlines.sh OUT_DIR     BUILD=build/release (diescope, diescope-cupti, diescope-workload)
set -euo pipefail
out_dir=${1:?usage: bench/run/workload_headlines.sh OUT_DIR   (BUILD=build folder, default build/release)}
cd "$(dirname "$0")/../.."
. bench/common.sh
bench_bin diescope diescope-cupti diescope-workload
command -v ncu >/dev/null || { echo "workload_headlines: ncu (Nsight Compute) not on PATH" >&2; exit 2; }
bench_out "$out_dir"
bench_work headlines
bench_gpu_env > "$OUT/env.txt"
: > "$OUT/summary.txt"
: > "$OUT/headlines.txt"
runs=()
# rec NAME -- CMD...: one measured run; its headline goes to headlines.txt, the recording and report
# stay in WORK.
rec() {
  local name=$1 rc=0; shift 2
  local dir="$WORK/$name"
  mkdir -p "$dir"
  timeout 120 diescope run --window markers --report "$dir" -- "$@" > "$dir/stdout.txt" 2> "$dir/stderr.txt" < /dev/null || rc=$?
  echo "$name rc=$rc" >> "$OUT/summary.txt"
  { echo "== $name: $*"; cat "$dir/stdout.txt" "$dir/stderr.txt"; } >> "$OUT/headlines.txt"
  rm -f "$dir"/*.report/samples.csv "$dir"/*.report/*.html "$dir"/*.report/*trace*
  runs+=("$name=$dir/gpu0.dsrec.report/report.json")
}
rec ffma132 -- diescope workload ffma --sms 132 --seconds 3
rec ffma66 -- diescope workload ffma --sms 66 --seconds 3
rec ffma33 -- diescope workload ffma --sms 33 --seconds 3
rec copy -- diescope workload stream --kernel copy --seconds 3
rec triad -- diescope workload stream --kernel triad --seconds 3
rec gemm -- diescope workload gemm --seconds 3
rec duty -- diescope workload duty --on-ms 50 --period-ms 100 --seconds 3
rec resnet50 -- python3 workloads/pytorch/resnet50_amp.py --seconds 8 --warmup 10
python3 bench/run/report_figures.py "${runs[@]}" > "$OUT/report-figures.csv"

P=.avg.pct_of_peak_sustained_elapsed
metrics="sm__inst_executed_pipe_fma$P,sm__inst_executed_pipe_fmaheavy$P,sm__inst_executed_pipe_fmalite$P,sm__pipe_tensor_cycles_active$P,sm__pipe_fp64_cycles_active$P,l1tex__data_pipe_lsu_wavefronts$P,lts__t_bytes.sum.pct_of_peak_sustained_elapsed,dram__bytes.sum.pct_of_peak_sustained_elapsed,dram__bytes.sum.per_second,sm__cycles_active$P,sm__warps_active.avg.pct_of_peak_sustained_active,gr__cycles_active$P,sm__cycles_elapsed.avg.per_second"
tables=()
ncu_one() {
  local name=$1 rc=0; shift
  timeout 90 ncu --clock-control none --launch-skip 3 --launch-count 1 --csv --metrics "$metrics" "$@" \
    > "$WORK/ncu-$name.csv" 2> "$WORK/ncu-$name.stderr" || rc=$?
  echo "ncu $name rc=$rc" >> "$OUT/summary.txt"
  tables+=("$name=$WORK/ncu-$name.csv")
}
ncu_one ffma132 diescope-workload ffma --sms 132 --seconds 1
ncu_one ffma33 diescope-workload ffma --sms 33 --seconds 1
ncu_one copy diescope-workload stream --kernel copy --seconds 1
ncu_one gemm diescope-workload gemm --seconds 1
python3 bench/ncu_table.py "${tables[@]}" > "$OUT/ncu.csv"
cat "$OUT/summary.txt"
