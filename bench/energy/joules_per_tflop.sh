#!/usr/bin/env bash
# Joules per TFLOP where the FLOPs are known (docs/energy.md#joules-per-tflop), on a GPU machine: the
# bundled FFMA and bf16 GEMM workloads (each a steady window of SECONDS, default 15)
#   1. under `diescope run --window markers`: the workload prints its window's FLOPs
#      (`diescope: measure flops N`), the report gives the window's J/TFLOP;
#   2. under `diescope roofline profile --profiler sampled`: the row's energy over its kernel windows,
#      its FLOPs (every kernel the workload ran, from its parameters) given by --flop on a second,
#      --skip-profile pass over the same recording;
# each with NVML's energy counter read by a program of its own (nvml_energy_log.py) around the run.
# compare_jtflop.py table OUT_DIR then sets diescope's figures beside the hand count.
#
#   bench/energy/joules_per_tflop.sh BIN OUT_DIR
#     BIN holds diescope, diescope-cupti, diescope-workload and libdiescope-range.so (ci or release preset)
# Clocks and the power limit are read (env.txt), never set.
set -uo pipefail
# shellcheck source=bench/common.sh
. "$(dirname "$0")/../common.sh"  # bench_bin_dir
here=$(cd "$(dirname "$0")" && pwd)
bench_bin_dir joules_per_tflop.sh "${1:-}" "${2:-}" diescope diescope-cupti diescope-workload libdiescope-range.so
export DIESCOPE_CUPTI="$bin/diescope-cupti"
seconds=${SECONDS_EACH:-15}
ds="$bin/diescope"
lib="$bin/libdiescope-range.so"
logger=
log_start() {
  python3 "$here/nvml_energy_log.py" "$1" &
  logger=$!
  sleep 0.3
}
log_stop() {
  sleep 0.3
  kill -TERM "$logger"
  wait "$logger"
}
for w in ffma gemm; do
  log_start "$out/$w-run.nvml.txt"
  rc=0
  timeout -k 5 90 "$ds" run --window markers --output "$work/$w-run" -- "$bin/diescope-workload" "$w" \
    --seconds "$seconds" > "$out/$w-run.stdout" 2> "$out/$w-run.stderr" || rc=$?
  log_stop
  echo "run $w: exit $rc" >> "$out/env.txt"
  "$ds" report "$work/$w-run/gpu0.dsrec" --output "$out/$w-report" --format terminal,json \
    > "$out/$w-report.txt" 2>&1 || echo "report $w: exit $?" >> "$out/env.txt"

  log_start "$out/$w-roofline.nvml.txt"
  rc=0
  timeout -k 5 90 "$ds" roofline profile --profiler sampled -O lib="$lib" --output "$work/$w-roofline" \
    --timeout 80 -- "$bin/diescope-workload" "$w" --seconds "$seconds" > "$out/$w-roofline-profile.txt" 2>&1 || rc=$?
  log_stop
  echo "roofline $w: exit $rc" >> "$out/env.txt"
  flop=$(python3 "$here/compare_jtflop.py" hand-flops "$work/$w-roofline/diescope-workload.sampled.log")
  "$ds" roofline profile --profiler sampled -O lib="$lib" --skip-profile --flop "diescope-workload=$flop" \
    --output "$work/$w-roofline" -- "$bin/diescope-workload" "$w" --seconds "$seconds" \
    > "$out/$w-roofline.txt" 2>&1 || echo "roofline $w --skip-profile: exit $?" >> "$out/env.txt"
  cp "$work/$w-roofline/roofline.csv" "$out/$w-roofline.csv"
  mkdir -p "$out/$w-roofline"
  cp "$work/$w-roofline/"*.sampled-windows.tsv "$work/$w-roofline/"*.sampled.log "$out/$w-roofline/"
  cp "$work/$w-roofline/roofline.html" "$out/$w-roofline/" 2>/dev/null
done
nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,power.limit --format=csv >> "$out/env.txt" 2>&1 || true
python3 "$here/compare_jtflop.py" table "$out"
