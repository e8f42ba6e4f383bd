#!/usr/bin/env bash
# Issue 5 on the GPU machine: `diescope calibrate --quick`, then a full `diescope calibrate`, then a
# `diescope run` whose report looks the calibration up in the default folder. Everything goes to
# $OUT; the counter recordings and the kernels' own lines are kept (--keep) and packed into one tar.
# Run from the repository root with the binaries in $BIN (default build/h-calib-carry).
set -u
BIN=${BIN:-$PWD/build/h-calib-carry}
OUT=${OUT:-/tmp/calibrate-out}
export PATH=$BIN:$PATH
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
export XDG_DATA_HOME=$OUT/data   # calibrate writes to $XDG_DATA_HOME/diescope/calibrations
export TMPDIR=$OUT/scratch       # --keep leaves the recordings here
mkdir -p "$OUT/data" "$OUT/scratch"
R=$OUT/results
mkdir -p "$R"
{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,power.limit,persistence_mode --format=csv
  nvidia-smi -q | grep -iE "L2|Product Name|Compute Mode|Clocks Event|Applications Clocks" | head -20
  diescope --version
} > "$R/env.txt" 2>&1

step() {  # step NAME TIMEOUT CMD...: stdout, stderr, wall time and exit code of one command
  local name=$1 limit=$2; shift 2
  local t0=$(date +%s.%N)
  timeout "$limit" "$@" > "$R/$name.stdout" 2> "$R/$name.stderr" < /dev/null
  local rc=$?
  echo "$name rc=$rc wall_s=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}') cmd: $*" >> "$R/summary.txt"
}

step help 10 diescope calibrate --help
step quick 80 diescope calibrate --quick --keep
step full 185 diescope calibrate --keep
# A run whose report finds the full calibration in the default folder (and says which file).
step run-ffma 30 diescope run --window markers --report "$OUT/run-ffma" -- diescope workload ffma --seconds 3
# A bad file named with --calibration: the run goes on and its report says why the file was not taken.
FULL=$(ls "$OUT"/data/diescope/calibrations/*-full.json 2>/dev/null | head -1)
if [ -n "$FULL" ]; then
  head -c 554 "$FULL" > "$OUT/truncated.json"
  step run-truncated 30 diescope run --window markers --calibration "$OUT/truncated.json" --report "$OUT/run-truncated" -- diescope workload ffma --seconds 2
  cp "$OUT/run-truncated"/*.report/report.json "$R/run-truncated-report.json" 2>/dev/null
fi
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >> "$R/env.txt" 2>&1
cp -r "$OUT/data/diescope/calibrations" "$R/calibrations" 2>/dev/null
cp "$OUT/run-ffma"/*.report/report.json "$R/run-ffma-report.json" 2>/dev/null
cp "$OUT/run-ffma"/gpu*.dsrec "$R/" 2>/dev/null
# The kept scratch folders: each run's recording and the kernels' JSON lines.
for d in "$OUT"/scratch/diescope-calibrate-*; do
  [ -d "$d" ] || continue
  b=$(basename "$d")
  mkdir -p "$R/scratch/$b"
  cp "$d/workload.jsonl" "$d/plan.json" "$R/scratch/$b/" 2>/dev/null
  cp "$d"/run/gpu*.dsrec "$R/scratch/$b/" 2>/dev/null
done
cat "$R/summary.txt"
tar -C "$OUT" -czf "$OUT/../calibrate-results.tar.gz" results && mv "$OUT/../calibrate-results.tar.gz" "${RESULT_TAR:-$OUT/calibrate-results.tar.gz}"
ls -la "${RESULT_TAR:-$OUT/calibrate-results.tar.gz}"
