#!/usr/bin/env bash
# After a change to the collectors' plumbing (child processes, signals, clocks, CUPTI calls): the
# gpu-labelled tests, `diescope run` on FFMA over 66 SMs and STREAM copy beside the workloads' own
# counted figures, the same recordings re-rendered by a BEFORE build (every output byte for byte,
# scripts/compare-reports.sh), and a `diescope run` stopped by SIGINT and by SIGTERM: its exit code,
# and whether the measured command and the sampler child are gone afterwards. Runs on a GPU machine.
# Writes into OUT_DIR one file, checks.txt: the machine, the tests, the headlines, the comparison and
# the signal runs, each under a '## ' heading.
#
#   bench/run/gpu_regression.sh OUT_DIR   BUILD=build folder with diescope, diescope-cupti,
#                                         diescope-workload and the gpu test binaries under tests/
#                                         BEFORE=an older diescope to compare reports with (optional)
set -euo pipefail
out_dir=${1:?usage: bench/run/gpu_regression.sh OUT_DIR   (BUILD=build folder, BEFORE=older diescope)}
cd "$(dirname "$0")/../.."
. bench/common.sh
bench_bin diescope diescope-cupti diescope-workload
bench_out "$out_dir"
bench_work gpu-regression
checks="$OUT/checks.txt"
{ echo '## machine'; bench_gpu_env; } > "$checks"
build=$(cd "$BIN/.." && pwd)

# The gpu-labelled tests, each binary run directly (a carried build has no CTest files), told where
# its binaries are now: the paths compiled into them are the build machine's.
echo '## gpu-labelled tests' >> "$checks"
export DIESCOPE_TEST_BIN_DIR="$BIN" DIESCOPE_WORKLOAD_BIN="$BIN/diescope-workload"
for t in collect/nvml_gpu_test collect/sampler_gpu_test workloads/workloads_gpu_test \
         harness/harness_cuda_gpu_test calibrate/calibrate_gpu_test; do
  rc=0
  timeout 300 "$build/tests/$t" --gtest_brief=1 > "$WORK/$(basename "$t").txt" 2>&1 || rc=$?
  { echo "== $t rc=$rc"; grep -E '^\[ *(PASSED|FAILED|SKIPPED) *\]|^\[  FAILED|tests? ran|Failure|skipped' "$WORK/$(basename "$t").txt" || true; } >> "$checks"
done

# Headlines beside the work the kernels counted themselves.
echo '## headlines' >> "$checks"
for spec in "ffma66:ffma --sms 66 --seconds 3" "copy:stream --kernel copy --seconds 3"; do
  name=${spec%%:*}; args=${spec#*:}; rc=0
  # shellcheck disable=SC2086  # args is a word list on purpose
  timeout 120 diescope run --window markers --report "$WORK/$name" -- diescope workload $args \
    > "$WORK/$name.stdout" 2> "$WORK/$name.stderr" < /dev/null || rc=$?
  { echo "== $name: diescope workload $args (rc=$rc)"; cat "$WORK/$name.stdout"; grep -v '^\s*$' "$WORK/$name.stderr" | tail -5; } >> "$checks"
done

# The same recordings through the older build: every output byte for byte.
if [ -n "${BEFORE:-}" ]; then
  bash scripts/compare-reports.sh "$BEFORE" "$BIN/diescope" "$WORK"/ffma66/*.dsrec "$WORK"/copy/*.dsrec \
    > "$WORK/compare-reports.txt" 2>&1 || true
  { echo '## reports of the new recordings, before and after'; cat "$WORK/compare-reports.txt"; } >> "$checks"
fi

# Stopped by a signal: diescope run's exit code, and no measured command or sampler left behind.
echo '## stopped by a signal' >> "$checks"
for sig in INT TERM; do
  marker="diescope-regression-$sig-$$"
  diescope run --report "$WORK/signal-$sig" -- bash -c "exec -a $marker sleep 60" \
    > "$WORK/signal-$sig.stdout" 2> "$WORK/signal-$sig.stderr" < /dev/null &
  pid=$!
  sleep 4
  kill -s "$sig" "$pid"
  rc=0; wait "$pid" || rc=$?
  sleep 1
  left=$(pgrep -f "$marker" | wc -l || true)
  samplers=$(pgrep -f 'diescope-cupti' | wc -l || true)
  { echo "SIG$sig: diescope run exit $rc; measured commands left $left; diescope-cupti processes left $samplers"
    # sed, not grep | head: under pipefail, head closing the pipe early would end the script.
    sed -n '/[^[:space:]]/p' "$WORK/signal-$sig.stdout" "$WORK/signal-$sig.stderr" | sed -n 1,3p; } >> "$checks"
done
cat "$checks"
