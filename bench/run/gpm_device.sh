#!/usr/bin/env bash
# NVML GPM as a second chip source, on a Hopper GPU, in one device call
# (docs/method.md#gpm-as-a-second-chip-source, docs/agent.md#beside-other-profilers). GPM_PARTS names the
# parts, run in that order (default "gpm vs-pm beside-ncu cost", the first batch):
#   gpm             gpm/: GPM's shortest sound interval (gpm_probe intervals over a steady FFMA load) and
#                   its own CPU time per second at 100 ms (gpm_probe serve);
#   vs-pm           vs-pm/: `diescope run --source pm` and `--source gpm` on the workloads VS_PM names
#                   (default: FFMA over 132, 66 and 33 SMs, DFMA (bench/run/jit_fma.py), STREAM copy, a
#                   cuBLAS bf16 GEMM and ResNet-50 AMP training for RESNET_SECONDS, default 5), and the
#                   table of their windows (bench/run/gpm_vs_pm_table.py);
#   beside-ncu      beside-ncu/: `diescope agent --source auto` running while Nsight Compute profiles
#                   another process (its NDJSON records: PM sampling, GPM while ncu runs, PM sampling
#                   after), and in the middle `diescope run --source pm` and `--source auto`;
#   beside-ncu-top  beside-ncu/: while Nsight Compute profiles another process, `diescope top --once`
#                   (which chip source its screen names) and `diescope run --source auto` (a GPM-backed
#                   report whose headline names the other process with its pid);
#   host            (when HOST_OUT is set) bench/host/host_probes.sh with PARTS, KERNEL and ENOUGH as
#                   given, into HOST_OUT;
#   cost            cost/: bench/agent/cost_events.py, interleaved rounds with the counters (PM at 10 and
#                   1 ms, GPM) on and off, timed by CUDA events: on FFMA, STREAM copy and a cuBLAS GEMM,
#                   or with COST_GEMM_ONLY=1 on the largest bf16 GEMM that stays under the power limit
#                   (bench/agent/gemm_power_probe.py picks it).
# Each part runs under its own time limit; a part that fails leaves its error in its folder and the
# others still run. bench/run/gpm_cost_rerun.sh is this script with the second batch's parts.
#
#   bench/run/gpm_device.sh OUT_DIR     BUILD=build folder with diescope, diescope-cupti, diescope-workload
#                                       and gpm_probe in bin/; COST_BUDGET_S (default 150);
#                                       PACK_TO=FILE.tgz packs OUT_DIR at the end
set -uo pipefail
out_dir=${1:?usage: bench/run/gpm_device.sh OUT_DIR   (BUILD=build folder)}
cd "$(dirname "$0")/../.."
. bench/common.sh
bench_bin diescope diescope-cupti diescope-workload gpm_probe
bench_out "$out_dir"
bench_work "${WORK_NAME:-gpm}"
repo=$(pwd)
bench_gpu_env > "$OUT/machine.txt" 2>&1
python3 -c 'import torch; print("torch", torch.__version__)' >> "$OUT/machine.txt" 2>&1
start=$(date +%s)
stamp() { echo "[$(( $(date +%s) - start )) s] $*"; }

# run_beside_ncu SOURCE LIMIT_S SECONDS: `diescope run --source SOURCE` on FFMA over 66 SMs for SECONDS
# while ncu profiles another process; its headline, warnings and exit status to beside-ncu/run-SOURCE.txt.
run_beside_ncu() {
  local source=$1 limit=$2 seconds=$3
  timeout "$limit" diescope run --source "$source" --window markers --output "$WORK/ncu-$source" -- \
    diescope workload ffma --sms 66 --seconds "$seconds" > "$WORK/ncu-$source.stdout" 2> "$WORK/ncu-$source.stderr" < /dev/null
  echo "rc $?" >> "$WORK/ncu-$source.stderr"
  { echo "## diescope run --source $source --window markers -- diescope workload ffma --sms 66 --seconds $seconds   (ncu profiling another process)";
    grep -v '^{' "$WORK/ncu-$source.stdout"; echo "### stderr"; cat "$WORK/ncu-$source.stderr"; } > "$OUT/beside-ncu/run-$source.txt"
}

part_gpm() {
  mkdir -p "$OUT/gpm"
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
}

part_vs_pm() {
  mkdir -p "$OUT/vs-pm"
  declare -A cmds=(
    [ffma132]="diescope workload ffma --seconds 3"
    [ffma66]="diescope workload ffma --sms 66 --seconds 3"
    [ffma33]="diescope workload ffma --sms 33 --seconds 3"
    [dfma]="python3 $repo/bench/run/jit_fma.py --dtype float64 --seconds 3"
    [stream_copy]="diescope workload stream --seconds 3"
    [gemm_bf16]="diescope workload gemm --seconds 3"
    [resnet50]="python3 $repo/workloads/pytorch/resnet50_amp.py --seconds ${RESNET_SECONDS:-5} --warmup 10"
  )
  local names=${VS_PM-ffma132 ffma66 ffma33 dfma stream_copy gemm_bf16 resnet50} name  # VS_PM="" skips it
  [ -n "$names" ] || return 0
  for name in $names; do
    # shellcheck disable=SC2086  # the command is words
    pm_and_gpm_runs "$name" "${VS_PM_TAIL:-15}" ${cmds[$name]}
  done
  # shellcheck disable=SC2086  # the names are words
  python3 bench/run/gpm_vs_pm_table.py "$WORK" $names > "$OUT/vs-pm/table.md" 2>&1
  for name in ffma66 gemm_bf16; do
    cp "$WORK/$name-gpm/gpu0.dsrec.report/report.json" "$OUT/vs-pm/$name-gpm-report.json" 2>/dev/null
  done
}

part_beside_ncu() {
  mkdir -p "$OUT/beside-ncu"
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
    run_beside_ncu "$source" 60 3
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
}

part_beside_ncu_top() {
  mkdir -p "$OUT/beside-ncu"
  stamp "1. ncu profiles an FFMA over 33 SMs"
  timeout 30 ncu --clock-control none --metrics sm__cycles_elapsed.avg diescope workload ffma --sms 33 --seconds 12 \
    > "$WORK/ncu.txt" 2>&1 &
  ncu_pid=$!
  sleep 4
  stamp "1. top --once"
  timeout 20 diescope top --once > "$OUT/beside-ncu/top-once.txt" 2>&1
  echo "rc $?" >> "$OUT/beside-ncu/top-once.txt"
  stamp "1. run --source auto"
  run_beside_ncu auto 30 2
  cp "$WORK/ncu-auto/gpu0.dsrec.report/report.json" "$OUT/beside-ncu/run-auto-report.json" 2>/dev/null
  grep -h '^holder' "$WORK/ncu-auto/gpu0.dsrec" > "$OUT/beside-ncu/run-auto-holders.txt" 2>/dev/null
  wait "$ncu_pid"
  echo "ncu rc $?" > "$OUT/beside-ncu/ncu-tail.txt"
  tail -4 "$WORK/ncu.txt" >> "$OUT/beside-ncu/ncu-tail.txt"
  grep "==ERROR==" "$WORK/ncu.txt" | sort | uniq -c | head -5 >> "$OUT/beside-ncu/ncu-tail.txt"
}

part_host() {
  [ -n "${HOST_OUT:-}" ] || return 0
  stamp "host probes: PARTS=${PARTS:-} KERNEL=${KERNEL:-} ENOUGH=${ENOUGH:-}"
  DIESCOPE="$BIN/diescope" bash bench/host/host_probes.sh "$HOST_OUT" workloads/pytorch
}

part_cost() {
  mkdir -p "$OUT/cost"
  local budget=${COST_BUDGET_S:-150} only=() n
  if [ "${COST_GEMM_ONLY:-0}" = 1 ]; then
    stamp "cost: GEMM sizes against the power limit"
    timeout 40 python3 bench/agent/gemm_power_probe.py --sizes 8192,4096,2048 > "$OUT/cost/gemm-power.csv" 2> "$OUT/cost/gemm-power.err"
    n=$(sed -n 's/^pick //p' "$OUT/cost/gemm-power.csv")
    only=(--workloads gemm_bf16 --gemm-n "${n:-4096}" --min-rounds 8 --max-rounds 60)
  fi
  stamp "cost rounds ${only[*]}"
  diescope units --counters hopper-gh100 > "$WORK/metrics.txt"
  timeout $(( budget + ${COST_SLACK_S:-90} )) python3 bench/agent/cost_events.py --cupti "$BIN/diescope-cupti" \
    --gpm-probe "$BIN/gpm_probe" --metrics-file "$WORK/metrics.txt" --out "$OUT/cost" "${only[@]}" \
    --budget-s "$budget" > "$OUT/cost/log.txt" 2>&1
  echo "rc $?" >> "$OUT/cost/log.txt"
}

for part in ${GPM_PARTS:-gpm vs-pm beside-ncu cost}; do
  case $part in
    gpm) part_gpm ;;
    vs-pm) part_vs_pm ;;
    beside-ncu) part_beside_ncu ;;
    beside-ncu-top) part_beside_ncu_top ;;
    host) part_host ;;
    cost) part_cost ;;
    *) echo "gpm_device: unknown part '$part'; fix: GPM_PARTS takes gpm, vs-pm, beside-ncu, beside-ncu-top, host, cost" >&2; exit 2 ;;
  esac
done
stamp "done"
# PACK_TO: the whole output folder in one archive (a device call brings back few files).
if [ -n "${PACK_TO:-}" ]; then tar -C "$OUT" -czf "$PACK_TO" .; fi
