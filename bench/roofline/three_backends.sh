#!/usr/bin/env bash
# The roofline backends side by side on a GPU machine (docs/roofline.md#the-range-profiler): the
# range profiler and Nsight Compute on range_regions (FFMA, triad and a cuBLAS bf16 GEMM, each in its
# own NVTX region, each knowing its own work), the injection library's cost (the workload's own time
# by CUDA events with and without it, counters off), and bad input (no NVTX region, a region never
# closed, a program that crashes inside a region, the library missing). Every step has a timeout.
#
#   bench/roofline/three_backends.sh BIN OUT_DIR
#     BIN holds diescope, libdiescope-range.so and range_regions (nvcc -O3 -arch=sm_90
#     bench/roofline/range_regions.cu -lcublas); OUT_DIR gets the tables and logs.
#     ResNet-50 training through every backend: resnet50_backends.sh.
set -uo pipefail
# shellcheck source=bench/common.sh
. "$(dirname "$0")/../common.sh"  # bench_bin_dir, bench_step
bench_bin_dir three_backends.sh "${1:-}" "${2:-}" diescope libdiescope-range.so range_regions
reps=${REPS:-3}
prog="$bin/range_regions"
ds="$bin/diescope"
lib="$bin/libdiescope-range.so"

# 1. The range profiler.
bench_step range 120 "$ds" roofline profile --profiler range -O lib="$lib" --output "$work/range" -- "$prog" --reps "$reps"
cp "$work/range/roofline.csv" "$out/range.csv" 2>/dev/null
cat "$work/range"/*.range.*.txt > "$out/range-files.txt" 2>/dev/null
cat "$work/range"/*.range.*.log > "$out/range-logs.txt" 2>/dev/null

# 2. Nsight Compute on the same program, launches added per region.
bench_step ncu 300 "$ds" roofline profile --profiler ncu --aggregate sum --output "$work/ncu" -- "$prog" --reps "$reps"
cp "$work/ncu/roofline.csv" "$out/ncu.csv" 2>/dev/null
cp "$work/ncu/roofline-launches.csv" "$out/ncu-launches.csv" 2>/dev/null


# 3. Both on one plot.
bench_step plot 60 "$ds" roofline plot --from-csv "$out/range.csv" "$out/ncu.csv" --output "$work/plot"
cp "$work/plot/roofline.svg" "$out/both.svg" 2>/dev/null

# 4. The injection library's cost: the workload's own time, plain and with the library (timestamps
#    only: regions followed, no counters), alternating, three times each.
for i in 1 2 3; do
  timeout 60 "$prog" --reps 10 > "$out/cost-plain-$i.txt" 2>&1
  DIESCOPE_RANGE_OUTPUT="$work/cost-$i.txt" DIESCOPE_RANGE_MODE=timestamps CUDA_INJECTION64_PATH="$lib" \
    NVTX_INJECTION64_PATH="$lib" timeout 60 "$prog" --reps 10 > "$out/cost-lib-$i.txt" 2>&1
done
cp "$work/cost-1.txt" "$out/cost-timestamps-file.txt" 2>/dev/null

# 5. Bad input.
bench_step bad-no-nvtx 120 "$ds" roofline profile --profiler range -O lib="$lib" --output "$work/b1" -- "$prog" --reps 1 --only triad --no-nvtx
bench_step bad-unclosed 120 "$ds" roofline profile --profiler range -O lib="$lib" --output "$work/b2" -- "$prog" --reps 1 --only ffma --unclosed
bench_step bad-crash 120 "$ds" roofline profile --profiler range -O lib="$lib" --output "$work/b3" -- "$prog" --reps 1 --crash
bench_step bad-no-lib 30 "$ds" roofline profile --profiler range -O lib=/nonexistent/libdiescope-range.so --output "$work/b4" -- "$prog"
cp "$work/b1/roofline.csv" "$out/bad-no-nvtx.csv" 2>/dev/null
cp "$work/b3/roofline.csv" "$out/bad-crash.csv" 2>/dev/null
rm -rf "$work"
