#!/usr/bin/env bash
# The harness's counter replay pass beside Nsight Compute on the same metrics and the same kernels
# (examples/counter_replay: a 1 GiB copy and an FMA kernel). The pass reads its four default metrics
# plus DRAM bytes, once with one kernel launch inside its range (--pass-launches 1) and once with ten;
# ncu (kernel replay, clocks left as they are) reads launches 6 to 8 of the same kernels in a run
# without the pass. Shows what the pass's range holds beside the kernel. Runs on a GPU machine with
# ncu. Writes into OUT_DIR: env.txt, summary.txt (exit codes), replay.txt (the pass's console output
# per kernel and launch count) and ncu.csv (bench/ncu_table.py); the JSON files stay in WORK.
#
#   bench/harness/replay_vs_ncu.sh OUT_DIR     BUILD=build/release (the examples are in $BUILD/examples)
set -euo pipefail
out_dir=${1:?usage: bench/harness/replay_vs_ncu.sh OUT_DIR   (BUILD=build folder, default build/release)}
cd "$(dirname "$0")/../.."
. bench/common.sh
# shellcheck disable=SC2119  # no binary from bin/ is needed, only the CUDA library path
bench_bin
example=$(cd "${BUILD:-build/release}/examples" && pwd)/counter_replay
[ -x "$example" ] || { echo "replay_vs_ncu: no $example; build the counter_replay target (CUDA) first" >&2; exit 2; }
command -v ncu >/dev/null || { echo "replay_vs_ncu: ncu (Nsight Compute) not on PATH" >&2; exit 2; }
bench_out "$out_dir"
bench_work replay-vs-ncu
{ bench_gpu_env; ncu --version | tail -1; } > "$OUT/env.txt" 2>&1
: > "$OUT/summary.txt"
: > "$OUT/replay.txt"
P=.avg.pct_of_peak_sustained_elapsed
metrics="sm__throughput$P,lts__throughput$P,dram__throughput$P,sm__inst_executed_pipe_tensor.avg.pct_of_peak_sustained_active,dram__bytes.sum.pct_of_peak_sustained_elapsed"
tables=()
for k in copy fma; do
  for n in 1 10; do
    rc=0
    timeout 120 "$example" --metrics "$metrics" --pass-launches "$n" --filter "^${k}_with_counters\$" \
      --json "$WORK/replay-$k-x$n.json" > "$WORK/replay-$k-x$n.txt" 2>&1 || rc=$?
    echo "replay $k x$n rc=$rc" >> "$OUT/summary.txt"
    { echo "== $k, $n launch(es) in the pass's range"; cat "$WORK/replay-$k-x$n.txt"; } >> "$OUT/replay.txt"
  done
  rc=0
  timeout 120 ncu --clock-control none --kernel-name "regex:${k}_kernel" --launch-skip 5 --launch-count 3 --csv \
    --metrics "$metrics,gpu__time_duration.sum" "$example" --filter "^${k}\$" --min-samples 10 --max-samples 20 \
    > "$WORK/ncu-replay-$k.csv" 2> "$WORK/ncu-replay-$k.stderr" || rc=$?
  echo "ncu replay $k rc=$rc" >> "$OUT/summary.txt"
  tables+=("$k=$WORK/ncu-replay-$k.csv")
done
python3 bench/ncu_table.py "${tables[@]}" > "$OUT/ncu.csv"
cat "$OUT/summary.txt"
