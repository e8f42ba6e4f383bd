#!/usr/bin/env bash
# The power-limited bf16 GEMM of range_regions --long (M = N = K = 22528, about 25 ms a launch) under
# the sampled backend, the range profiler and ncu, with the SM clock each run ran at: whether the
# sampled backend's longer GEMM is the kernel windows or the clock (docs/roofline.md#the-sampled-backend).
#   1. the sampled backend, two-point (-O iterations=5), with nvidia-smi reading the SM clock, power and
#      the software power cap every 10 ms beside it;
#   2. the range profiler on the same launch pattern: --reps 1 and --reps 5 (the two-point difference
#      computed by gemm_power_clock.py), its SM clock from the counters;
#   3. ncu on --reps 2 (each launch replayed alone).
# Writes into OUT_DIR: sampled.csv, range-1.csv, range-5.csv, ncu.csv, smi.csv (the clock trace),
# sampled.txt (the region times), each step's output and env.txt. Then: gemm_power_clock.py OUT_DIR.
#
#   bench/roofline/gemm_power_clock.sh BIN OUT_DIR    BIN holds diescope, diescope-cupti,
#                                                     libdiescope-range.so and range_regions
set -uo pipefail
# shellcheck source=bench/common.sh
. "$(dirname "$0")/../common.sh"  # bench_bin_dir, bench_step
bench_bin_dir gemm_power_clock.sh "${1:-}" "${2:-}" diescope diescope-cupti libdiescope-range.so range_regions
ds="$bin/diescope"
lib="$bin/libdiescope-range.so"
cp "$bin/range_regions" "$work/regions"  # rows of "regions", as in sampled_backend.sh
flop=(--flop "regions\\[gemm\\]=$(python3 -c 'print(2*22528**3)')@tensor-bf16")

# 1. The sampled backend with the clock trace beside it (read, never set).
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,clocks_event_reasons.sw_power_cap --format=csv,nounits \
  -lms 10 > "$out/smi.csv" 2>&1 &
smi=$!
bench_step sampled 90 "$ds" roofline profile --profiler sampled -O lib="$lib" -O iterations=5 "${flop[@]}" \
  --output "$work/sampled" --timeout 50 -- "$work/regions" --long --only gemm --reps '{iterations}'
kill "$smi" 2>/dev/null
wait "$smi" 2>/dev/null
cp "$work/sampled/roofline.csv" "$out/sampled.csv" 2>/dev/null
cp "$work/sampled/"*.sampled.txt "$out/" 2>/dev/null
cp "$work/sampled/"*.sampled-windows.tsv "$out/" 2>/dev/null

# 2. The range profiler on one and five back-to-back launches.
for reps in 1 5; do
  bench_step "range-$reps" 120 "$ds" roofline profile --profiler range -O lib="$lib" --output "$work/range-$reps" \
    --timeout 100 -- "$work/regions" --long --only gemm --reps "$reps"
  cp "$work/range-$reps/roofline.csv" "$out/range-$reps.csv" 2>/dev/null
done

# 3. ncu, each launch alone.
bench_step ncu 120 "$ds" roofline profile --profiler ncu --aggregate sum --output "$work/ncu" --timeout 100 \
  -- "$work/regions" --long --only gemm --reps 2
cp "$work/ncu/roofline.csv" "$out/ncu.csv" 2>/dev/null
rm -rf "$work"
