#!/usr/bin/env bash
# `diescope roofline profile` on the bundled workloads (FFMA, STREAM triad, the calibration's DFMA
# step, a cuBLAS bf16 GEMM) as one batch, on a GPU machine: the batch's wall time, each workload's
# FLOPs and bytes from Nsight Compute beside the work it counts itself (known_work.py), each one's
# distance to its roof, `plot` on a 10,000-row table, and bad input tried as a new user would (ncu
# missing, a crashing target, a hanging one, an unknown metric, a truncated table, an export of
# another GPU). Writes into OUT_DIR: known-work.csv, roofline.csv (one row per workload: its main
# kernel, launches added), bad-inputs.txt, timing.txt, env.txt; the reports, exports, logs and plots stay
# in WORK.
#
#   bench/roofline/bundled_workloads.sh OUT_DIR    BUILD=build/release (diescope, diescope-workload)
#   CALIBRATION=FILE   the calibration file for the measured ceilings (default: the H200's in
#                      bench/results/calibrate/2026-11-29-h200-wgmma/)
set -euo pipefail
out_dir=${1:?usage: bench/roofline/bundled_workloads.sh OUT_DIR   (BUILD=build folder, default build/release)}
cd "$(dirname "$0")/../.."
. bench/common.sh
bench_bin diescope diescope-workload
bench_out "$out_dir"
bench_work roofline
calibration=${CALIBRATION:-bench/results/calibrate/2026-11-29-h200-wgmma/calibration-full.json}
bench_gpu_env > "$OUT/env.txt" 2>&1
ncu --version >> "$OUT/env.txt" 2>&1

# One executable per workload (the profile command takes executables, or one command after --).
mkdir -p "$WORK/targets"
target() { printf '#!/bin/sh\nexec %s\n' "$2" > "$WORK/targets/$1"; chmod +x "$WORK/targets/$1"; }
target ffma "$BIN/diescope-workload ffma --seconds 0.05"
target triad "$BIN/diescope-workload stream --kernel triad --seconds 0.05"
# 10240 = 32 tiles of 320 rows: no padded tile, so the tensor path does exactly 2·M·N·K.
target gemm "$BIN/diescope-workload gemm --m 10240 --n 10240 --k 10240 --seconds 0.05"
cat > "$WORK/dfma-plan.json" <<'PLAN'
{"quick":true,"steps":[{"index":1,"unit":"fp64","name":"dfma 132/132 SMs","workload":"dfma","loaded_sms":132,"seconds":0.1}],"stream":{"elements":1048576,"repeats":1},"working_set":null,"issue":null,"launch":null}
PLAN
target dfma "$BIN/diescope-workload calibrate --plan $WORK/dfma-plan.json"

t0=$(date +%s.%N)
diescope roofline profile --output "$WORK/bundled" --calibration "$calibration" --timeout 300 \
  "$WORK/targets/ffma" "$WORK/targets/triad" "$WORK/targets/dfma" "$WORK/targets/gemm" > "$WORK/profile.txt" 2>&1
t1=$(date +%s.%N)
python3 - "$t0" "$t1" > "$OUT/timing.txt" <<'PY'
import sys; print(f"profile batch of 4 bundled workloads: {float(sys.argv[2]) - float(sys.argv[1]):.1f} s wall")
PY
grep "targets profiled in\|profiled in" "$WORK/profile.txt" >> "$OUT/timing.txt" || true
python3 bench/roofline/known_work.py "$WORK/bundled" > "$OUT/known-work.csv"
# Each workload's main kernel (the DFMA target also runs the calibration's STREAM forms and L2 flushes).
diescope roofline plot --from-csv "$WORK/bundled/roofline-launches.csv" --aggregate dominant \
  --kernel 'ffma_kernel|stream_triad_kernel|nvjet|dfma_kernel' --output "$WORK/bundled-dominant" > "$WORK/plot-dominant.txt" 2>&1
python3 bench/roofline/table_columns.py "$WORK/bundled-dominant/roofline.csv" > "$OUT/roofline-columns.csv"

# plot on a 10,000-row table: the batch's launches repeated with fresh launch IDs
python3 - "$WORK/bundled/roofline-launches.csv" "$WORK/big.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
head, body = rows[0], rows[1:]
launch = head.index("launch [id]")
with open(sys.argv[2], "w", newline="") as f:
    w = csv.writer(f, lineterminator="\n")
    w.writerow(head)
    for i in range(10000):
        r = list(body[i % len(body)])
        r[launch] = str(i)
        w.writerow(r)
PY
t0=$(date +%s.%N)
diescope roofline plot --from-csv "$WORK/big.csv" --output "$WORK/big" > /dev/null 2>&1
t1=$(date +%s.%N)
python3 - "$t0" "$t1" >> "$OUT/timing.txt" <<'PY'
import sys; print(f"plot of a 10,000-row table (csv, svg, html): {float(sys.argv[2]) - float(sys.argv[1]):.2f} s wall")
PY
wc -c "$WORK"/big/* | sed "s|$WORK/||" >> "$OUT/timing.txt"

# Bad input, each as a new user would meet it.
printf '#!/bin/sh\n%s --sms 1 --seconds 0.02\nkill -SEGV $$\n' "$BIN/diescope-workload ffma" > "$WORK/targets/crash"
printf '#!/bin/sh\nexec sleep 600\n' > "$WORK/targets/hang"
chmod +x "$WORK/targets/crash" "$WORK/targets/hang"
bad() {
  echo "\$ $1"
  local rc=0
  # the messages only (stderr): the per-launch summary on stdout is the same as a good run's
  (eval "$1") 2> "$WORK/bad.out" > /dev/null || rc=$?
  grep -v "warning: .*no launch is inside" "$WORK/bad.out" | sed "s|$WORK|WORK|g; s|$BIN|BIN|g" | cut -c1-400
  echo "# exit code $rc"
  echo
}
{
  bad "PATH=/nonexistent $BIN/diescope roofline profile --output $WORK/bad1 $WORK/targets/ffma"
  bad "diescope roofline profile --timeout 20 --output $WORK/bad2 $WORK/targets/crash $WORK/targets/hang $WORK/targets/ffma"
  bad "diescope roofline profile --output $WORK/bad3 -O metrics=sm__no_such_counter.sum $WORK/targets/ffma"
  bad "diescope roofline profile --output $WORK/bad4 -O sections=all $WORK/targets/ffma"
  head -c 3000 "$WORK/bundled/roofline-launches.csv" > "$WORK/truncated.csv"
  bad "diescope roofline plot --from-csv $WORK/truncated.csv --output $WORK/bad5"
  sed 's/"NVIDIA H200"/"NVIDIA A100-SXM4-80GB"/' "$WORK/bundled/ffma.raw.csv" > "$WORK/other-gpu.raw.csv"
  bad "diescope roofline plot --from-export ffma=$WORK/other-gpu.raw.csv --calibration $calibration --output $WORK/bad6"
} > "$OUT/bad-inputs.txt" 2>&1
echo "done: $OUT"
