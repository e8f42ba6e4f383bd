#!/usr/bin/env bash
# GPM against PM sampling on steady kernels (docs/method.md#gpm-as-a-second-chip-source), on a Hopper
# GPU machine:
#   1. trace: gpm_probe trace at 5 ms (the driver's refresh times, and each refresh's value) beside
#      `diescope run --source pm` over FFMA on 66 SMs: both sources over the same run;
#   2. runs: `diescope run --source pm` and `--source gpm` with window markers over FFMA on 66 SMs,
#      DFMA (bench/run/jit_fma.py), STREAM copy and the bf16 GEMM, each recording and report kept.
#
#   bench/run/gpm_edges.sh BIN OUT_DIR
#     BIN holds diescope, diescope-cupti, diescope-workload and gpm_probe.
# Writes OUT_DIR/env.txt, trace/ (trace.csv, the PM run's recording and report, the workload's own
# figures) and runs/NAME-{pm,gpm}/ (recording, report.json, stdout and stderr tails).
set -uo pipefail
# shellcheck source=bench/common.sh
. "$(dirname "$0")/../common.sh"  # bench_bin_dir
bench_bin_dir gpm_edges.sh "${1:-}" "${2:-}" diescope diescope-cupti diescope-workload gpm_probe
repo=$(cd "$(dirname "$0")/../.." && pwd)
export PATH="$bin:$PATH"
keep() {  # keep DIR DEST: the recording and report of one run
  mkdir -p "$2"
  find "$1" -maxdepth 2 \( -name '*.dsrec' -o -name 'report.json' \) -exec cp {} "$2/" \;
}
mkdir -p "$out/trace" "$out/runs"
gpm_probe trace --interval-ms 5 --seconds 7 > "$out/trace/trace.csv" 2> "$out/trace/trace.err" &
tr=$!
sleep 1.5
diescope run --source pm --window markers --output "$work/trace-pm" -- diescope workload ffma --sms 66 --seconds 3 \
  > "$work/trace-pm.out" 2> "$work/trace-pm.err" < /dev/null
wait "$tr"
keep "$work/trace-pm" "$out/trace/pm"
{ grep -v '^{' "$work/trace-pm.out" | tail -12; tail -4 "$work/trace-pm.err"; } > "$out/trace/pm-run.txt"
declare -A cmds=(
  [ffma66]="diescope workload ffma --sms 66 --seconds 4"
  [dfma]="python3 $repo/bench/run/jit_fma.py --dtype float64 --seconds 4"
  [stream_copy]="diescope workload stream --seconds 4"
  [gemm_bf16]="diescope workload gemm --seconds 4"
)
for name in ffma66 dfma stream_copy gemm_bf16; do
  for source in pm gpm; do
    # shellcheck disable=SC2086  # the command is words
    timeout 60 diescope run --source "$source" --window markers --output "$work/$name-$source" -- ${cmds[$name]} \
      > "$work/$name-$source.out" 2> "$work/$name-$source.err" < /dev/null
    keep "$work/$name-$source" "$out/runs/$name-$source"
    { grep -v '^{' "$work/$name-$source.out" | tail -12; tail -6 "$work/$name-$source.err"; } > "$out/runs/$name-$source/run.txt"
  done
done
du -sh "$out"
rm -rf "$work"
