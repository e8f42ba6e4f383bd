#!/usr/bin/env bash
# Packed half precision in the roofline's FLOPs (docs/roofline.md#packed-half-precision), on a GPU
# machine: half_kernels (bench/roofline/half_kernels.cu: packed __half2 HFMA2, scalar __half FMA,
# HADD2 and HMUL2, each in its own NVTX range, each with its FLOPs counted by hand) through
# `diescope roofline profile --profiler ncu` and `--profiler range`, and each row's fp16 FLOPs against
# the program's own count.
#
#   bench/roofline/packed_half.sh BIN OUT_DIR
#     BIN holds diescope, libdiescope-range.so and half_kernels
#     (nvcc -O3 -arch=sm_90 -o half_kernels bench/roofline/half_kernels.cu).
# Writes OUT_DIR/env.txt, tools.txt (which SASS disassembler the machine has), hand.csv (the program's
# own counts), half_kernels.sass (cuobjdump -sass, where there is one), {ncu,range}.csv (the
# roofline tables), {ncu,range}.txt (their runs' messages), ncu.raw.csv and range-*.txt (the backends'
# inputs, to replay on the CPU), and check.csv: per kernel and backend, fp16 FLOPs, the hand count
# and their ratio.
set -uo pipefail
# shellcheck source=bench/common.sh
. "$(dirname "$0")/../common.sh"  # bench_bin_dir
bench_bin_dir packed_half.sh "${1:-}" "${2:-}" diescope libdiescope-range.so half_kernels
{
  for t in cuobjdump nvdisasm; do
    echo "$t: $(command -v "$t" || ls /usr/local/cuda/bin/$t 2>/dev/null || echo absent)"
  done
} > "$out/tools.txt"
cp "$bin/half_kernels" "$work/half_kernels"
"$work/half_kernels" > "$out/hand.csv" 2>&1
dis=$(command -v cuobjdump || ls /usr/local/cuda/bin/cuobjdump 2>/dev/null)
[ -n "$dis" ] && "$dis" -sass "$work/half_kernels" > "$out/half_kernels.sass" 2>&1
timeout 200 "$bin/diescope" roofline profile --profiler ncu --output "$work/ncu" --timeout 180 \
  -- "$work/half_kernels" > "$out/ncu.txt" 2>&1
timeout 200 "$bin/diescope" roofline profile --profiler range -O lib="$bin/libdiescope-range.so" \
  --output "$work/range" --timeout 180 -- "$work/half_kernels" > "$out/range.txt" 2>&1
cp "$work/ncu/roofline-launches.csv" "$out/ncu.csv" 2>/dev/null
cp "$work/range/roofline-launches.csv" "$out/range.csv" 2>/dev/null
cp "$work/ncu/half_kernels.raw.csv" "$out/ncu.raw.csv" 2>/dev/null
for f in "$work"/range/*; do
  case "$f" in *.csv|*.svg|*.html) ;; *) [ -f "$f" ] && cp "$f" "$out/range-$(basename "$f").txt" ;; esac
done
python3 - "$out" > "$out/check.csv" <<'PY'
import csv, os, sys
out = sys.argv[1]
hand = {r["kernel"]: float(r["total_flop"]) for r in csv.DictReader(open(os.path.join(out, "hand.csv")))}
print("backend,kernel,fp16 [FLOP],fp16 high [FLOP],hand [FLOP],ratio")
for backend in ("ncu", "range"):
    path = os.path.join(out, f"{backend}.csv")
    if not os.path.exists(path):
        print(f"{backend},(no table),,,,")
        continue
    for r in csv.DictReader(open(path)):
        name = r["region"] or r["kernel"].split("(")[0]
        key = next((k for k in hand if name == k or name.endswith(" " + k) or name.startswith(k + "(")), None)
        if key is None:
            continue
        v = r.get("work fp16 [FLOP]", "")
        hi = r.get("work fp16 high [FLOP]", "")
        ratio = f"{float(v) / hand[key]:.6f}" if v else ""
        print(f"{backend},{key},{v},{hi},{hand[key]:.0f},{ratio}")
PY
cat "$out/check.csv"
# Each op's counter per thread and iteration (the slope between two iteration counts, so the code
# around the loop drops out), beside the SASS's own instructions per iteration; and ncu's
# per-instruction counts (SourceCounters) of the hadd2 and hfma2 kernels.
counters=smsp__sass_thread_inst_executed_op_hadd_pred_on.sum,smsp__sass_thread_inst_executed_op_hmul_pred_on.sum,smsp__sass_thread_inst_executed_op_hfma_pred_on.sum,smsp__sass_inst_executed_op_hadd_pred_on.sum,smsp__inst_executed_pipe_fma_type_fp16.sum,smsp__inst_executed_pipe_fma.sum
for iters in 64 128; do
  timeout 60 ncu --clock-control none --metrics "$counters" --csv "$work/half_kernels" "$iters" > "$out/slope-$iters.csv" 2>&1
done
timeout 60 ncu --clock-control none -k regex:'hadd2|hfma2' --section SourceCounters -o "$work/source" "$work/half_kernels" 64 > /dev/null 2>&1
timeout 60 ncu --import "$work/source.ncu-rep" --page source --csv --print-source sass > "$out/source-sass.csv" 2>&1
rm -rf "$work"
