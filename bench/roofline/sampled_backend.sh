#!/usr/bin/env bash
# The sampled backend beside ncu and the range profiler on a GPU machine
# (docs/roofline.md#the-sampled-backend): range_regions --long (FFMA, triad and a cuBLAS bf16 GEMM,
# every launch 20 ms or more, each region knowing its own work) under
#   1. the sampler's interval check: the sampled backend at 1, 0.5 and 0.25 ms on the FFMA region;
#   2. the sampled backend, two-point (-O iterations=5: a one-iteration .ref run and a 5-iteration run,
#      the program getting N through --reps {iterations}), FLOPs from --flop rules;
#   3. ncu (--aggregate sum) and the range profiler on --reps 2 of the same launches;
#   4. bad input: no NVTX region (with a --flop rule that matches nothing), a region never closed, a
#      crash inside a region;
#   5. (SGEMM=1) the same three backends on an fp32 GEMM of 20 ms a launch under the power limit
#      (SGEMM=only: step 5 alone).
# ResNet-50 training through every backend is resnet50_backends.sh.
# Every step has a timeout. Writes into OUT_DIR: each step's output (NAME.txt), the tables
# (sampled.csv, ncu.csv, range.csv), the windows of each sampled run (*.sampled-windows.tsv: the
# calibration data of the constants), the recordings gzipped (for --skip-profile with other constants).
#
#   bench/roofline/sampled_backend.sh BIN OUT_DIR
#     BIN holds diescope, diescope-cupti, libdiescope-range.so and range_regions
#     (nvcc -O3 -arch=sm_90 bench/roofline/range_regions.cu -lcublas).
set -uo pipefail
# shellcheck source=bench/common.sh
. "$(dirname "$0")/../common.sh"  # bench_bin_dir, bench_step
bench_bin_dir sampled_backend.sh "${1:-}" "${2:-}" diescope diescope-cupti libdiescope-range.so range_regions
prog="$bin/range_regions"
ds="$bin/diescope"
lib="$bin/libdiescope-range.so"

# The analytic work of one launch of each region (range_regions.cu): FFMA 2 x 4 x 655,360 per thread
# over 1056 x 256 threads; the triad 2 FLOPs per element per sweep, 24 sweeps of 2^28; the GEMM 2 M N K.
flops=(--flop "regions\\[ffma\\]=$(python3 -c 'print(2*4*655360*1056*256)')"
       --flop "regions\\[triad\\]=$(python3 -c 'print(2*(1<<28)*24)')"
       --flop "regions\\[gemm\\]=$(python3 -c 'print(2*22528**3)')@tensor-bf16")
cp "$prog" "$work/regions"  # the target is named for its file: rows of "regions"

if [ "${SGEMM:-}" != only ]; then  # SGEMM=only runs step 5 alone
# 1. The sampler's interval: what it sustains (median interval, coverage, holes) on the FFMA region.
for iv in 1 0.5 0.25; do
  bench_step "interval-$iv" 60 "$ds" roofline profile --profiler sampled -O lib="$lib" -O interval-ms="$iv" \
    "${flops[@]}" --output "$work/iv-$iv" --timeout 40 -- "$work/regions" --long --reps 2 --only ffma
  cp "$work/iv-$iv/regions.sampled-windows.tsv" "$out/interval-$iv.windows.tsv" 2>/dev/null
done

# 2. The sampled backend, two-point, at 0.5 ms.
bench_step sampled 120 "$ds" roofline profile --profiler sampled -O lib="$lib" -O iterations=5 "${flops[@]}" \
  --output "$work/sampled" --timeout 50 -- "$work/regions" --long --reps '{iterations}'
cp "$work/sampled/roofline.csv" "$out/sampled.csv" 2>/dev/null
cp "$work/sampled/"*.sampled-windows.tsv "$out/" 2>/dev/null
for r in "$work/sampled/"*.sampled; do
  [ -e "$r/gpu0.dsrec" ] && gzip -c "$r/gpu0.dsrec" > "$out/$(basename "$r").dsrec.gz"
done
cp "$work/sampled/"*.sampled.txt "$out/" 2>/dev/null

# 3. ncu (launches added per region) and the range profiler on the same launches, two of each.
bench_step ncu 150 "$ds" roofline profile --profiler ncu --aggregate sum --output "$work/ncu" --timeout 110 \
  -- "$work/regions" --long --reps 2
cp "$work/ncu/roofline.csv" "$out/ncu.csv" 2>/dev/null
bench_step range 120 "$ds" roofline profile --profiler range -O lib="$lib" --output "$work/range" --timeout 50 \
  -- "$work/regions" --long --reps 2
cp "$work/range/roofline.csv" "$out/range.csv" 2>/dev/null
bench_step plot 60 "$ds" roofline plot --from-csv "$out/ncu.csv" "$out/range.csv" "$out/sampled.csv" --output "$work/plot"
cp "$work/plot/roofline.svg" "$out/three.svg" 2>/dev/null

# 4. Bad input.
cp "$prog" "$work/plain"
bench_step bad-no-nvtx 60 "$ds" roofline profile --profiler sampled -O lib="$lib" --flop 'nomatch=1' \
  --output "$work/b1" --timeout 40 -- "$work/plain" --long --reps 1 --only triad --no-nvtx
bench_step bad-unclosed 60 "$ds" roofline profile --profiler sampled -O lib="$lib" "${flops[@]}" \
  --output "$work/b2" --timeout 40 -- "$work/regions" --long --reps 1 --only ffma --unclosed
bench_step bad-crash 60 "$ds" roofline profile --profiler sampled -O lib="$lib" "${flops[@]}" \
  --output "$work/b3" --timeout 40 -- "$work/regions" --long --reps 1 --crash
cp "$work/b1/roofline.csv" "$out/bad-no-nvtx.csv" 2>/dev/null
cp "$work/b3/roofline.csv" "$out/bad-crash.csv" 2>/dev/null

fi  # SGEMM=only
# 5. (SGEMM=1) an fp32 GEMM of 20 ms a launch that stays under the power limit, through the sampled
#    backend (two-point), ncu and the range profiler: the duration check on a GEMM whose clock does not
#    follow the power limit. Tables: sampled-sgemm.csv, ncu-sgemm.csv, range-sgemm.csv.
if [ -n "${SGEMM:-}" ]; then
  sg=(--flop "regions\\[sgemm\\]=$(python3 -c 'print(2*8192**3)')")
  bench_step sgemm-sampled 90 "$ds" roofline profile --profiler sampled -O lib="$lib" -O iterations=5 "${sg[@]}" \
    --output "$work/sg-sampled" --timeout 40 -- "$work/regions" --long --only sgemm --reps '{iterations}'
  cp "$work/sg-sampled/roofline.csv" "$out/sampled-sgemm.csv" 2>/dev/null
  bench_step sgemm-ncu 90 "$ds" roofline profile --profiler ncu --aggregate sum --output "$work/sg-ncu" --timeout 80 \
    -- "$work/regions" --long --only sgemm --reps 2
  cp "$work/sg-ncu/roofline.csv" "$out/ncu-sgemm.csv" 2>/dev/null
  bench_step sgemm-range 60 "$ds" roofline profile --profiler range -O lib="$lib" --output "$work/sg-range" --timeout 40 \
    -- "$work/regions" --long --only sgemm --reps 2
  cp "$work/sg-range/roofline.csv" "$out/range-sgemm.csv" 2>/dev/null
  nvidia-smi --query-gpu=clocks.sm,power.draw,clocks_event_reasons.sw_power_cap --format=csv >> "$out/env.txt" 2>&1
fi
rm -rf "$work"
