#!/usr/bin/env bash
# FP64 on a kernel that loads it: the calibration's DFMA step (bench/device/plans/dfma.json) under
# `diescope run`, whose FP64 unit reads the group-qualified TPC.TriageCompute form, and one launch of
# the same kernel under Nsight Compute's plain counters. Binaries in $BIN; writes $OUT/fp64.tgz.
set -u
BIN=${BIN:-$PWD/build/lead-carry}
OUT=${OUT:-/tmp/fp64-out}
W=/tmp/fp64-work
rm -rf "$W" && mkdir -p "$W/run" "$OUT"
export PATH=$BIN:$PATH
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}
PLAN=$PWD/bench/device/plans/dfma.json
diescope run --report "$W/run" -- diescope-workload calibrate --plan "$PLAN" > "$W/run/stdout.txt" 2> "$W/run/stderr.txt"
echo "run rc=$?" >> "$W/summary.txt"
P=.avg.pct_of_peak_sustained_elapsed
timeout 120 ncu --clock-control none --kernel-name regex:dfma --launch-skip 3 --launch-count 1 --csv \
  --metrics "sm__pipe_fp64_cycles_active$P,sm__inst_executed_pipe_fp64$P,sm__pipe_tensor_cycles_active$P,sm__inst_executed_pipe_fma$P,sm__cycles_elapsed.avg.per_second" \
  diescope-workload calibrate --plan "$PLAN" > "$W/ncu-dfma.csv" 2> "$W/ncu-dfma.stderr"
echo "ncu rc=$?" >> "$W/summary.txt"
find "$W" -name samples.csv -o -name '*.html' -o -name '*trace*' | xargs rm -f
tar czf "$OUT/fp64.tgz" -C "$W" .
cat "$W/summary.txt"; grep -i "fp64\|FP64" "$W/run/stdout.txt" | head -5; grep fp64 "$W/ncu-dfma.csv" | cut -c1-300
