#!/usr/bin/env bash
# The harness's GPU examples on a GPU: memory_bound (device-to-device copy, cold and batch, beside
# cudaMemcpyAsync), custom_metric, cublas_gemm and counter_replay (timing with and without the
# counter replay pass), each run as `EXAMPLE --json EXAMPLE.json`; then Nsight Compute (kernel replay,
# clocks left as they are) on the copy kernel of counter_replay with the pass's default metrics.
# Runs on a GPU machine with ncu. Writes into OUT_DIR: env.txt, summary.txt (exit codes), each
# example's console output EXAMPLE.txt, and ncu-counter_replay.csv (bench/ncu_table.py); the JSON
# files (one entry per sample, up to hundreds of MB) stay in WORK.
#
#   bench/harness/examples.sh OUT_DIR     BUILD=build/release (the examples are in $BUILD/examples)
set -euo pipefail
out_dir=${1:?usage: bench/harness/examples.sh OUT_DIR   (BUILD=build folder, default build/release)}
cd "$(dirname "$0")/../.."
. bench/common.sh
# shellcheck disable=SC2119  # no binary from bin/ is needed, only the CUDA library path
bench_bin
examples=$(cd "${BUILD:-build/release}/examples" && pwd)
for e in memory_bound custom_metric cublas_gemm counter_replay; do
  [ -x "$examples/$e" ] || { echo "examples: no $examples/$e; build the $e target (CUDA) first" >&2; exit 2; }
done
command -v ncu >/dev/null || { echo "examples: ncu (Nsight Compute) not on PATH" >&2; exit 2; }
bench_out "$out_dir"
bench_work harness-examples
bench_gpu_env > "$OUT/env.txt"
: > "$OUT/summary.txt"
for e in memory_bound custom_metric cublas_gemm counter_replay; do
  rc=0
  "$examples/$e" --json "$WORK/$e.json" > "$OUT/$e.txt" 2>&1 || rc=$?
  echo "$e rc=$rc" >> "$OUT/summary.txt"
done
P=.avg.pct_of_peak_sustained_elapsed
rc=0
ncu --clock-control none --kernel-name regex:copy_kernel --launch-skip 5 --launch-count 1 --csv \
  --metrics "sm__throughput$P,lts__t_bytes.sum.pct_of_peak_sustained_elapsed,dram__bytes.sum.pct_of_peak_sustained_elapsed,sm__pipe_tensor_cycles_active$P" \
  "$examples/counter_replay" --filter '^copy$' > "$WORK/ncu-counter_replay.txt" 2>&1 || rc=$?
echo "ncu rc=$rc" >> "$OUT/summary.txt"
python3 bench/ncu_table.py counter_replay="$WORK/ncu-counter_replay.txt" > "$OUT/ncu-counter_replay.csv"
cat "$OUT/summary.txt"
