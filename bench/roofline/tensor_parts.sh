#!/usr/bin/env bash
# The range backend's fp16 and int8 tensor totals, added from their one-pass parts
# (docs/roofline.md#the-range-profiler), against ncu's two-pass totals and each region's own count, on
# a GPU machine: range_regions --only hgemm (cuBLAS fp16, the warpgroup path), --only hmma (mma.sync
# fp16, fp32 accumulators) and --only imma (mma.sync int8), two launches each, through
# `diescope roofline profile --profiler ncu --aggregate sum` and `--profiler range`.
#
#   bench/roofline/tensor_parts.sh BIN OUT_DIR
#     BIN holds diescope, libdiescope-range.so and range_regions
#     (nvcc -O3 -arch=sm_90 bench/roofline/range_regions.cu -lcublas).
# Writes OUT_DIR/<region>-{ncu,range}.csv, <region>-{ncu,range}.txt (each run's output), env.txt, and
# prints one CSV line per region: region, precision, known work, ncu, range, range/ncu.
set -uo pipefail
# shellcheck source=bench/common.sh
. "$(dirname "$0")/../common.sh"  # bench_bin_dir, bench_step
bench_bin_dir tensor_parts.sh "${1:-}" "${2:-}" diescope libdiescope-range.so range_regions
cp "$bin/range_regions" "$work/regions"
echo "region,precision,known,ncu,range,range/ncu"
for region in hgemm hmma imma; do
  timeout 120 "$bin/diescope" roofline profile --profiler ncu --aggregate sum --output "$work/$region-ncu" --timeout 100 \
    -- "$work/regions" --only "$region" --reps 2 > "$out/$region-ncu.txt" 2>&1
  timeout 120 "$bin/diescope" roofline profile --profiler range -O lib="$bin/libdiescope-range.so" \
    --output "$work/$region-range" --timeout 100 -- "$work/regions" --only "$region" --reps 2 > "$out/$region-range.txt" 2>&1
  cp "$work/$region-ncu/roofline.csv" "$out/$region-ncu.csv" 2>/dev/null
  cp "$work/$region-range/roofline.csv" "$out/$region-range.csv" 2>/dev/null
  python3 - "$out" "$region" <<'PY'
import csv, os, sys
out, region = sys.argv[1], sys.argv[2]
col = "work tensor int8 [OP]" if region == "imma" else "work tensor fp16 [FLOP]"
def value(backend):
    path = os.path.join(out, f"{region}-{backend}.csv")
    if not os.path.exists(path):
        return None
    rows = [r for r in csv.DictReader(open(path)) if r["region"] == region]
    return float(rows[0][col]) if rows and rows[0][col] not in ("", None) else None
# Each region's own count over its two launches (range_regions.cu): hgemm 2 M N K with M = N = K = 4096;
# hmma 2 x 16 x 8 x 16 and imma 2 x 16 x 8 x 32 per warp instruction, 20,000 per warp, 132 x 4 warps.
known = {"hgemm": 2 * 2 * 4096**3, "hmma": 2 * 4096 * 20000 * 528, "imma": 2 * 8192 * 20000 * 528}[region]
n, r = value("ncu"), value("range")
fmt = lambda v: "" if v is None else f"{v:.6g}"
print(f"{region},{col},{fmt(known)},{fmt(n)},{fmt(r)},{'' if not n or r is None else f'{r / n:.6f}'}")
PY
done
rm -rf "$work"
