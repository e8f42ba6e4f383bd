#!/usr/bin/env bash
# diescope's ncu backend with and without ncu's cache flush, beside the range profiler, on a GPU
# machine (docs/roofline.md#dram-bytes-and-the-cache-flush):
#   1. range_regions --only triad --reps 2 (a streaming kernel) under `--profiler ncu`, as it runs by
#      default and with -O ncu-arg=--cache-control=none;
#   2. ResNet-50 training (resnet50_steps.py, 2 warm-up steps and 1 step, batch 32) under `--profiler
#      ncu -O ncu-arg=--cache-control=none` (the last step, all the table's metrics) and under
#      `--profiler range` (every step, one row per region occurrence);
#   3. `plot --from-csv` of the ResNet-50 tables (both kept: no warning expected) and of the flushed
#      triad table with the range table (mixed: the warning).
# Writes into OUT_DIR: triad-flushed.csv, triad-kept.csv, resnet-ncu-kept.csv, resnet-range.csv, each
# step's output (NAME.txt) and env.txt. Then: ncu_cache_control.py OUT_DIR.
#
#   bench/roofline/ncu_cache_control.sh BIN OUT_DIR    BIN holds diescope, libdiescope-range.so and
#                                                      range_regions
set -uo pipefail
# shellcheck source=bench/common.sh
. "$(dirname "$0")/../common.sh"  # bench_bin_dir, bench_step
bench_bin_dir ncu_cache_control.sh "${1:-}" "${2:-}" diescope libdiescope-range.so range_regions
ds="$bin/diescope"
lib="$bin/libdiescope-range.so"
here=$(cd "$(dirname "$0")" && pwd)
cp "$bin/range_regions" "$work/regions"
steps=(python3 "$here/resnet50_steps.py" --warmup 2 --steps 1 --batch 32)

# 1. The triad, flushed and kept.
bench_step triad-flushed 90 "$ds" roofline profile --profiler ncu --aggregate sum --output "$work/tf" \
  --timeout 80 -- "$work/regions" --only triad --reps 2
cp "$work/tf/roofline.csv" "$out/triad-flushed.csv" 2>/dev/null
bench_step triad-kept 90 "$ds" roofline profile --profiler ncu --aggregate sum -O ncu-arg=--cache-control=none \
  --output "$work/tk" --timeout 80 -- "$work/regions" --only triad --reps 2
cp "$work/tk/roofline.csv" "$out/triad-kept.csv" 2>/dev/null

# 2. ResNet-50: ncu without the flush, and the range profiler.
bench_step resnet-ncu-kept 300 "$ds" roofline profile --profiler ncu --aggregate sum \
  -O ncu-arg=--profile-from-start=off -O ncu-arg=--cache-control=none --output "$work/rn" --timeout 290 -- "${steps[@]}"
cp "$work/rn/roofline.csv" "$out/resnet-ncu-kept.csv" 2>/dev/null
bench_step resnet-range 150 "$ds" roofline profile --profiler range -O lib="$lib" \
  --output "$work/rr" --timeout 140 -- "${steps[@]}"
cp "$work/rr/roofline.csv" "$out/resnet-range.csv" 2>/dev/null

# 3. The plots: kept with kept, then flushed with kept.
bench_step plot-kept 60 "$ds" roofline plot --from-csv "$out/resnet-ncu-kept.csv" "$out/resnet-range.csv" \
  --output "$work/p1"
bench_step plot-mixed 60 "$ds" roofline plot --from-csv "$out/triad-flushed.csv" "$out/resnet-range.csv" \
  --output "$work/p2"
rm -rf "$work"
