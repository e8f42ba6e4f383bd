#!/usr/bin/env bash
# `diescope run` while Nsight Compute holds the performance counters for another process: the run
# must say why it has no chip samples and still give GPU-Util (from NVML) over the run and the
# window, and name the other process count in its headline (docs/method.md#gpu-util-without-chip-samples,
# docs/method.md#shared-gpus-in-the-headline). Runs on a GPU machine with ncu on PATH.
# Writes OUT_DIR/run.txt: the commands, diescope's headline and warnings, and the end of ncu's output.
#
#   bench/run/beside_ncu.sh OUT_DIR     BUILD=build folder with diescope and diescope-workload
set -euo pipefail
out_dir=${1:?usage: bench/run/beside_ncu.sh OUT_DIR   (BUILD=build folder)}
cd "$(dirname "$0")/../.."
. bench/common.sh
bench_bin diescope diescope-cupti diescope-workload
bench_out "$out_dir"
bench_work beside-ncu
command -v ncu >/dev/null || { echo "beside_ncu: ncu is not on PATH; install Nsight Compute" >&2; exit 2; }

# ncu profiles a 25 s FFMA in the background; 8 s later, once it holds the counters, diescope runs.
ncu --clock-control none --metrics sm__cycles_elapsed.avg diescope workload ffma --seconds 25 \
  > "$WORK/ncu.txt" 2>&1 &
ncu_pid=$!
sleep 8
rc=0
diescope run --window markers --output "$WORK/run" -- diescope workload ffma --sms 66 --seconds 5 \
  > "$WORK/run.stdout" 2> "$WORK/run.stderr" < /dev/null || rc=$?
wait "$ncu_pid" || true
{
  echo "## diescope run while ncu profiles another process"
  echo "\$ ncu --clock-control none --metrics sm__cycles_elapsed.avg diescope workload ffma --seconds 25 &   (8 s later:)"
  echo "\$ diescope run --window markers --output OUT -- diescope workload ffma --sms 66 --seconds 5"
  echo "exit $rc"
  echo "### stdout (the workload's JSON line left out)"
  grep -v '^{' "$WORK/run.stdout"
  echo "### stderr"
  cat "$WORK/run.stderr"
  echo "### ncu (tail)"
  tail -4 "$WORK/ncu.txt"
} > "$OUT/run.txt"
cat "$OUT/run.txt"
