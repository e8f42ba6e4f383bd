#!/usr/bin/env bash
# `diescope calibrate` on a GPU: the quick check, then a full calibration (every unit's counter judged
# against kernels whose work is known, and the device model: STREAM, cache capacity, issue rate,
# launch fill), then a `diescope run` whose report must find the full calibration in the default
# folder, and a run given a calibration file cut at byte 554, whose report must say why it was not
# taken. Runs on a GPU machine; clocks, limits and modes are left as they are. Writes into OUT_DIR:
# env.txt, summary.txt (each command's exit code and wall time), quick.txt and full.txt (their
# printed tables), calibration-full.json (the file calibrate wrote), stream-forms.csv (each STREAM
# kernel's best time in each form, bench/calibrate/stream_table.py) and run-lookup.txt (what the two
# runs' reports and headlines say about the calibration, bench/calibrate/lookup_summary.py, and the
# FFMA workload's own line). The kept scratch
# folders (counter recordings, the kernels' own lines) and the runs' reports stay in WORK.
#
#   bench/calibrate/full_calibration.sh OUT_DIR     BUILD=build/release (diescope, diescope-cupti, diescope-workload)
set -euo pipefail
out_dir=${1:?usage: bench/calibrate/full_calibration.sh OUT_DIR   (BUILD=build folder, default build/release)}
cd "$(dirname "$0")/../.."
. bench/common.sh
bench_bin diescope diescope-cupti diescope-workload
bench_out "$out_dir"
bench_work calibrate
export XDG_DATA_HOME=$WORK/data   # calibrate writes to $XDG_DATA_HOME/diescope/calibrations
mkdir -p "$WORK/data" "$WORK/scratch"
{
  bench_gpu_env
  nvidia-smi -q | grep -iE "L2|Product Name|Compute Mode|Clocks Event|Applications Clocks" | head -20 || true
} > "$OUT/env.txt" 2>&1
: > "$OUT/summary.txt"

# step NAME TIMEOUT CMD...: stdout, stderr, exit code and wall time of one command.
step() {
  local name=$1 limit=$2 rc=0 t0; shift 2
  t0=$(date +%s.%N)
  timeout "$limit" "$@" > "$WORK/$name.stdout" 2> "$WORK/$name.stderr" < /dev/null || rc=$?
  echo "$name rc=$rc wall_s=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}') cmd: $*" >> "$OUT/summary.txt"
}

# --keep leaves each calibration's recording and the kernels' lines in a folder under TMPDIR.
TMPDIR=$WORK/scratch step quick 80 diescope calibrate --quick --keep
TMPDIR=$WORK/scratch step full 185 diescope calibrate --keep
step run-ffma 30 diescope run --window markers --report "$WORK/run-ffma" -- diescope workload ffma --seconds 3
full=$(find "$WORK/data/diescope/calibrations" -name '*-full.json' 2>/dev/null | head -1)
if [ -n "$full" ]; then
  head -c 554 "$full" > "$WORK/truncated.json"
  step run-truncated 30 diescope run --window markers --calibration "$WORK/truncated.json" --report "$WORK/run-truncated" \
    -- diescope workload ffma --seconds 2
  cp "$full" "$OUT/calibration-full.json"
fi
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >> "$OUT/env.txt" 2>&1 || true
cp "$WORK/quick.stdout" "$OUT/quick.txt"
cp "$WORK/full.stdout" "$OUT/full.txt"
for d in "$WORK"/scratch/diescope-calibrate-*; do
  if [ -f "$d/workload.jsonl" ] && ! grep -q '"quick": *true' "$d/plan.json"; then
    python3 bench/calibrate/stream_table.py "$d/workload.jsonl" ${full:+"$full"} > "$OUT/stream-forms.csv"
  fi
done
reports=()
for r in run-ffma run-truncated; do
  for f in "$WORK/$r"/*.report/report.json; do [ -f "$f" ] && reports+=("$r=$f"); done
done
{
  [ ${#reports[@]} -eq 0 ] || python3 bench/calibrate/lookup_summary.py "${reports[@]}"
  for r in run-ffma run-truncated; do
    [ -f "$WORK/$r.stdout" ] && cat "$WORK/$r.stdout" "$WORK/$r.stderr" |
      sed -n "s/^/$r: /; /^$r: \(  calibration\|diescope-workload:\)/p"
  done
} > "$OUT/run-lookup.txt"
cat "$OUT/summary.txt" "$OUT/full.txt"
