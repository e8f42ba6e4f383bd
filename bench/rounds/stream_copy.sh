#!/usr/bin/env bash
# Repeated rounds of `diescope run` on one workload's steady window: `diescope bench --rounds N
# --workload stream -- --kernel copy --seconds 2`, to show how much DIE-Util, GPU-Util and each unit
# move between rounds (mean, spread, 95% interval) and which rounds are left out. Runs on a GPU
# machine. Writes OUT_DIR/stdout.txt (the table of rounds and statistics) and OUT_DIR/stderr.txt
# (progress and each round's own line); bench.json and the rounds' reports stay in WORK.
#
#   bench/rounds/stream_copy.sh OUT_DIR [ROUNDS]     (default 5)   BUILD=build/release (diescope, diescope-cupti, diescope-workload)
set -euo pipefail
out_dir=${1:?usage: bench/rounds/stream_copy.sh OUT_DIR [ROUNDS]   (BUILD=build folder, default build/release)}
rounds=${2:-5}
cd "$(dirname "$0")/../.."
. bench/common.sh
bench_bin diescope diescope-cupti diescope-workload
bench_out "$out_dir"
bench_work rounds
rc=0
timeout 300 diescope bench --rounds "$rounds" --report "$WORK/bench-stream" --workload stream -- --kernel copy --seconds 2 \
  > "$OUT/stdout.txt" 2> "$OUT/stderr.txt" < /dev/null || rc=$?
find "$WORK/bench-stream" -name samples.csv -delete
echo "diescope bench rc=$rc"
cat "$OUT/stdout.txt"
exit "$rc"
