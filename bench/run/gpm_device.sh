#!/usr/bin/env bash
# NVML GPM as a second chip source, on a Hopper GPU, in one batch (docs/method.md#gpm-as-a-second-chip-source,
# docs/agent.md#beside-other-profilers):
#   1. gpm/       GPM's shortest sound interval (gpm_probe intervals over a steady FFMA load) and its own
#                 CPU time per second at 100 ms (gpm_probe serve);
#   2. vs-pm/     `diescope run --source pm` and `--source gpm` on FFMA over 132, 66 and 33 SMs, DFMA
#                 (bench/run/jit_fma.py), STREAM copy, a cuBLAS bf16 GEMM and ResNet-50 AMP training, and
#                 the table of their windows (bench/run/gpm_vs_pm_table.py);
#   3. beside-ncu/ `diescope agent --source auto` running while Nsight Compute profiles another process
#                 (its NDJSON records: PM sampling, GPM while ncu runs, PM sampling after), and in the middle
#                 `diescope run --source pm` and `--source auto`, each with its headline and warnings;
#   4. cost/      bench/agent/cost_events.py: interleaved rounds with the counters (PM at 10 and 1 ms, GPM) on
#                 and off on FFMA, STREAM copy and a cuBLAS GEMM, timed by CUDA events.
# Each part runs under its own time limit; a part that fails leaves its error in its folder and the
# others still run.
#
#   bench/run/gpm_device.sh OUT_DIR     BUILD=build folder with diescope, diescope-cupti, diescope-workload
#                                       and gpm_probe in bin/; COST_BUDGET_S (default 150)
set -uo pipefail
out_dir=${1:?usage: bench/run/gpm_device.sh OUT_DIR   (BUILD=build folder)}
cd "$(dirname "$0")/../.."
. bench/common.sh
bench_bin diescope diescope-cupti diescope-workload gpm_probe
bench_out "$out_dir"
bench_work gpm
repo=$(pwd)
mkdir -p "$OUT/gpm" "$OUT/vs-pm" "$OUT/beside-ncu" "$OUT/cost"
bench_gpu_env > "$OUT/machine.txt" 2>&1
python3 -c 'import torch; print("torch", torch.__version__)' >> "$OUT/machine.txt" 2>&1
start=$(date +%s)
stamp() { echo "[$(( $(date +%s) - start )) s] $*"; }

# ---- 1. GPM's interval and CPU cost ----
stamp "1. gpm_probe intervals over FFMA on every SM"
diescope workload ffma --seconds 20 > "$WORK/ffma-bg.txt" 2>&1 &
bg=$!
sleep 3
timeout 40 gpm_probe intervals --ms 1,2,5,10,20,50,100,200,500,1000 --seconds-each 1.5 \
  > "$OUT/gpm/intervals.csv" 2> "$OUT/gpm/intervals.err"
echo "rc $?" >> "$OUT/gpm/intervals.err"
wait "$bg"
grep -v '^{' "$WORK/ffma-bg.txt" | tail -2 > "$OUT/gpm/ffma-load.txt"
stamp "1b. gpm_probe serve at 100 ms, idle, 5 s"
timeout 20 gpm_probe serve --interval-ms 100 > "$OUT/gpm/serve-idle.txt" 2>&1 &
p=$!; sleep 5; kill -TERM "$p"; wait "$p"
stamp "1c. gpm_probe serve at 100 ms beside FFMA, 5 s"
diescope workload ffma --seconds 7 > /dev/null 2>&1 &
bg=$!; sleep 1
timeout 20 gpm_probe serve --interval-ms 100 > "$OUT/gpm/serve-ffma.txt" 2>&1 &
p=$!; sleep 5; kill -TERM "$p"; wait "$p"; wait "$bg"

# ---- 2. GPM vs PM sampling ----
declare -A cmds=(
  [ffma132]="diescope workload ffma --seconds 3"
  [ffma66]="diescope workload ffma --sms 66 --seconds 3"
  [ffma33]="diescope workload ffma --sms 33 --seconds 3"
  [dfma]="python3 $repo/bench/run/jit_fma.py --dtype float64 --seconds 3"
  [stream_copy]="diescope workload stream --seconds 3"
  [gemm_bf16]="diescope workload gemm --seconds 3"
  [resnet50]="python3 $repo/workloads/pytorch/resnet50_amp.py --seconds 5 --warmup 10"
)
names="ffma132 ffma66 ffma33 dfma stream_copy gemm_bf16 resnet50"
for name in $names; do
  # shellcheck disable=SC2086  # the command is words
  pm_and_gpm_runs "$name" 15 ${cmds[$name]}
done
python3 bench/run/gpm_vs_pm_table.py "$WORK" $names > "$OUT/vs-pm/table.md" 2>&1
for name in ffma66 gemm_bf16; do
  cp "$WORK/$name-gpm/gpu0.dsrec.report/report.json" "$OUT/vs-pm/$name-gpm-report.json" 2>/dev/null
done

# ---- 3. The agent and run beside Nsight Compute ----
stamp "3. agent --source auto, then ncu, then run --source pm and auto"
diescope workload ffma --sms 66 --seconds 48 > /dev/null 2>&1 &
load=$!
diescope agent --source auto --interval-ms 10 --duty-on-ms 6000 --duty-period-ms 6000 --drain-ms 500 \
  --ndjson --no-db --no-listen > "$WORK/agent.ndjson" 2> "$OUT/beside-ncu/agent.log" &
agent=$!
sleep 9
stamp "3. ncu starts"
timeout 32 ncu --clock-control none --metrics sm__cycles_elapsed.avg diescope workload ffma --sms 33 --seconds 20 \
  > "$WORK/ncu.txt" 2>&1 &
ncu_pid=$!
sleep 7
for source in pm auto; do
  stamp "3. run --source $source beside ncu"
  timeout 60 diescope run --source "$source" --window markers --output "$WORK/ncu-$source" -- \
    diescope workload ffma --sms 66 --seconds 3 > "$WORK/ncu-$source.stdout" 2> "$WORK/ncu-$source.stderr" < /dev/null
  echo "rc $?" >> "$WORK/ncu-$source.stderr"
  { echo "## diescope run --source $source --window markers -- diescope workload ffma --sms 66 --seconds 3   (ncu profiling another process)";
    grep -v '^{' "$WORK/ncu-$source.stdout"; echo "### stderr"; cat "$WORK/ncu-$source.stderr"; } > "$OUT/beside-ncu/run-$source.txt"
done
wait "$ncu_pid"
echo "ncu rc $? (124: stopped by its 32 s timeout)" > "$OUT/beside-ncu/ncu-tail.txt"
stamp "3. ncu ended"
tail -6 "$WORK/ncu.txt" >> "$OUT/beside-ncu/ncu-tail.txt"
grep -c "==PROF==\|==ERROR==\|==WARNING==" "$WORK/ncu.txt" >> "$OUT/beside-ncu/ncu-tail.txt"
grep "==ERROR==\|==WARNING==" "$WORK/ncu.txt" | sort | uniq -c | head -10 >> "$OUT/beside-ncu/ncu-tail.txt"
sleep 12
kill -TERM "$agent"; wait "$agent"
kill "$load" 2>/dev/null; wait "$load" 2>/dev/null
cp "$WORK/agent.ndjson" "$OUT/beside-ncu/agent.ndjson"
stamp "3. agent stopped"

# ---- 4. The cost of always-on counters ----
stamp "4. cost rounds"
diescope units --counters hopper-gh100 > "$WORK/metrics.txt"
timeout $(( ${COST_BUDGET_S:-150} + 90 )) python3 bench/agent/cost_events.py --cupti "$BIN/diescope-cupti" \
  --gpm-probe "$BIN/gpm_probe" --metrics-file "$WORK/metrics.txt" --out "$OUT/cost" \
  --budget-s "${COST_BUDGET_S:-150}" > "$OUT/cost/log.txt" 2>&1
echo "rc $?" >> "$OUT/cost/log.txt"
stamp "done"
