#!/usr/bin/env bash
# What the first GPM batch (bench/run/gpm_device.sh) left open, in one short device call
# (docs/method.md#gpm-as-a-second-chip-source, docs/agent.md#duty-cycles-and-records):
#   1. beside-ncu/ while Nsight Compute profiles another process: `diescope top --once` (which chip
#                  source its screen names) and `diescope run --source auto` (a GPM-backed report whose
#                  headline names the other process with its pid);
#   2. vs-pm/      DFMA and ResNet-50 AMP under `diescope run --source pm` and `--source gpm`, with the
#                  fixed GpmSampler, and their window table (bench/run/gpm_vs_pm_table.py);
#   3. cost/       the cuBLAS GEMM's cost of always-on counters: bench/agent/gemm_power_probe.py picks
#                  the largest bf16 GEMM size that does not run into the power limit, then
#                  bench/agent/cost_events.py runs interleaved rounds at PM 10 ms, PM 1 ms and GPM.
#   4. host/       (run second) when HOST_OUT is set: bench/host/host_probes.sh with PARTS, KERNEL and ENOUGH as given
#                  (the "enough workers" contrast), into HOST_OUT.
# Every step runs under its own timeout; one that fails leaves its error and the rest still run.
#
#   BUILD=build folder (bin/ with diescope, diescope-cupti, diescope-workload, gpm_probe)
#   bench/run/gpm_cost_rerun.sh OUT_DIR     COST_BUDGET_S (default 50); PACK_TO=FILE.tgz packs OUT_DIR;
#   VS_PM=names of step 2 (default "dfma resnet50"; empty skips it)
set -uo pipefail
out_dir=${1:?usage: bench/run/gpm_cost_rerun.sh OUT_DIR   (BUILD=build folder)}
cd "$(dirname "$0")/../.."
. bench/common.sh
bench_bin diescope diescope-cupti diescope-workload gpm_probe
bench_out "$out_dir"
bench_work gpm-rerun
repo=$(pwd)
mkdir -p "$OUT/beside-ncu" "$OUT/vs-pm" "$OUT/cost"
bench_gpu_env > "$OUT/machine.txt" 2>&1
python3 -c 'import torch; print("torch", torch.__version__)' >> "$OUT/machine.txt" 2>&1
start=$(date +%s)
stamp() { echo "[$(( $(date +%s) - start )) s] $*"; }

# ---- 1. beside Nsight Compute ----
stamp "1. ncu profiles an FFMA over 33 SMs"
timeout 30 ncu --clock-control none --metrics sm__cycles_elapsed.avg diescope workload ffma --sms 33 --seconds 12 \
  > "$WORK/ncu.txt" 2>&1 &
ncu_pid=$!
sleep 4
stamp "1. top --once"
timeout 20 diescope top --once > "$OUT/beside-ncu/top-once.txt" 2>&1
echo "rc $?" >> "$OUT/beside-ncu/top-once.txt"
stamp "1. run --source auto"
timeout 30 diescope run --source auto --window markers --output "$WORK/ncu-auto" -- \
  diescope workload ffma --sms 66 --seconds 2 > "$WORK/ncu-auto.stdout" 2> "$WORK/ncu-auto.stderr" < /dev/null
echo "rc $?" >> "$WORK/ncu-auto.stderr"
{ echo "## diescope run --source auto --window markers -- diescope workload ffma --sms 66 --seconds 2   (ncu profiling another process)";
  grep -v '^{' "$WORK/ncu-auto.stdout"; echo "### stderr"; cat "$WORK/ncu-auto.stderr"; } > "$OUT/beside-ncu/run-auto.txt"
cp "$WORK/ncu-auto/gpu0.dsrec.report/report.json" "$OUT/beside-ncu/run-auto-report.json" 2>/dev/null
grep -h '^holder' "$WORK/ncu-auto/gpu0.dsrec" > "$OUT/beside-ncu/run-auto-holders.txt" 2>/dev/null
wait "$ncu_pid"
echo "ncu rc $?" > "$OUT/beside-ncu/ncu-tail.txt"
tail -4 "$WORK/ncu.txt" >> "$OUT/beside-ncu/ncu-tail.txt"
grep "==ERROR==" "$WORK/ncu.txt" | sort | uniq -c | head -5 >> "$OUT/beside-ncu/ncu-tail.txt"

# ---- 4. The host probes' "enough workers" contrast ----
if [ -n "${HOST_OUT:-}" ]; then
  stamp "4. host probes: PARTS=${PARTS:-} KERNEL=${KERNEL:-} ENOUGH=${ENOUGH:-}"
  DIESCOPE="$BIN/diescope" bash bench/host/host_probes.sh "$HOST_OUT" workloads/pytorch
fi

# ---- 2. DFMA and ResNet-50, GPM vs PM sampling ----
declare -A cmds=(
  [dfma]="python3 $repo/bench/run/jit_fma.py --dtype float64 --seconds 3"
  [resnet50]="python3 $repo/workloads/pytorch/resnet50_amp.py --seconds 3 --warmup 10"
)
names=${VS_PM-dfma resnet50}   # VS_PM="" skips step 2
for name in $names; do
  # shellcheck disable=SC2086  # the command is words
  pm_and_gpm_runs "$name" 6 ${cmds[$name]}
done
python3 bench/run/gpm_vs_pm_table.py "$WORK" $names > "$OUT/vs-pm/table.md" 2>&1

# ---- 3. The GEMM's cost of always-on counters ----
stamp "3. GEMM sizes against the power limit"
timeout 40 python3 bench/agent/gemm_power_probe.py --sizes 8192,4096,2048 > "$OUT/cost/gemm-power.csv" 2> "$OUT/cost/gemm-power.err"
n=$(sed -n 's/^pick //p' "$OUT/cost/gemm-power.csv")
n=${n:-4096}
stamp "3. cost rounds, GEMM n=$n"
diescope units --counters hopper-gh100 > "$WORK/metrics.txt"
timeout $(( ${COST_BUDGET_S:-50} + 60 )) python3 bench/agent/cost_events.py --cupti "$BIN/diescope-cupti" \
  --gpm-probe "$BIN/gpm_probe" --metrics-file "$WORK/metrics.txt" --out "$OUT/cost" --workloads gemm_bf16 \
  --gemm-n "$n" --min-rounds 8 --max-rounds 60 --budget-s "${COST_BUDGET_S:-50}" > "$OUT/cost/log.txt" 2>&1
echo "rc $?" >> "$OUT/cost/log.txt"

stamp "done"
# PACK_TO: the whole output folder in one archive (a device call brings back few files).
if [ -n "${PACK_TO:-}" ]; then tar -C "$OUT" -czf "$PACK_TO" .; fi
