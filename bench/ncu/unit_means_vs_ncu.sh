#!/usr/bin/env bash
# diescope's unit means over a PyTorch model's steady steps beside Nsight Compute's per-kernel percents
# of the same steps, weighted by kernel time over the same wall time (docs/method.md#comparing-with-nsight-compute).
#
# 1. `diescope run --window markers` over STEPS timed steps of MODEL (after its warm-up).
# 2. ncu over the first NCU_STEPS of those steps in a second run of the same command: the workload
#    runs them between cudaProfilerStart and cudaProfilerStop and ncu starts with
#    --profile-from-start off, so every kernel of those steps is profiled on every thread (autograd's
#    backward thread included; an NVTX push/pop filter on the main thread would miss it). Clocks and
#    caches as found (--clock-control none --cache-control none unless CACHE says otherwise), the
#    metrics behind every unit of the run's unit table (bench/ncu/unit_means_vs_ncu.py metrics).
# 3. The table (bench/ncu/unit_means_vs_ncu.py table): appended to OUT_DIR/tables.md, its rows to
#    OUT_DIR/unit-means.csv. The recording, report, ncu's CSV and the logs stay in WORK/NAME.
#
# Runs on a GPU machine with ncu and PyTorch.
#
#   bench/ncu/unit_means_vs_ncu.sh OUT_DIR MODEL [NAME]     MODEL: resnet50-infer, resnet50-train, gpt
#   BUILD=build folder (diescope, diescope-cupti), default build/release
#   STEPS=N (diescope's window; default 150, 60, 100 by model)   NCU_STEPS=M (default 1)
#   INTERVAL_MS=diescope's sample interval (default 10)   REPLAY=kernel|application   CACHE=none|all
#   RUN_FROM=DIR  use the diescope run already in DIR (its gpu0.dsrec.report and stdout.txt), run none
#   NCU_FROM=FILE use this ncu CSV instead of profiling again
#   REALTIME=1    also read the realtime forms diescope reads, where ncu lists them (more replay passes)
#   UNITS=KEYS    only these units (comma-separated keys, e.g. dram,tensor): their plain counters and
#                 kernel time, so ncu needs fewer replay passes (one pass: no memory saved and restored)
#   Without UNITS the table is followed by the SM-clock units read from busy cycles at the window's
#   SM clock (the helper's --sm-clock-mhz window), so a clock difference can be told from a count one.
#   SM_CLOCK_MHZ=MHZ reads them at that clock instead (e.g. the clock bench/ncu/effective_sm_clock.py
#   measured inside the window: NVML's SM clock can read higher than the clock the SMs ran at).
#   T_RUN, T_NCU: time limits in seconds of the two steps (default 180, 300)
#   DEADLINE=epoch seconds: ncu's limit is cut to what is left before it (and refused when none is)
set -euo pipefail
usage="usage: bench/ncu/unit_means_vs_ncu.sh OUT_DIR resnet50-infer|resnet50-train|gpt [NAME]"
out_dir=${1:?$usage}
model=${2:?$usage}
name=${3:-$model}
cd "$(dirname "$0")/../.."
case $model in
  resnet50-infer) steps=${STEPS:-150}; cmd=(python3 workloads/pytorch/resnet50_amp.py --infer --batch 128) ;;
  resnet50-train) steps=${STEPS:-60}; cmd=(python3 workloads/pytorch/resnet50_amp.py --batch 128) ;;
  gpt) steps=${STEPS:-100}; cmd=(python3 workloads/pytorch/gpt_bf16.py) ;;
  *) echo "unit_means_vs_ncu: unknown model '$model'; $usage" >&2; exit 2 ;;
esac
ncu_steps=${NCU_STEPS:-1}
replay=${REPLAY:-kernel}
cache=${CACHE:-none}
interval=${INTERVAL_MS:-10}
case $replay in kernel|application) ;; *) echo "unit_means_vs_ncu: REPLAY=$replay; give kernel or application" >&2; exit 2 ;; esac
case $cache in none|all) ;; *) echo "unit_means_vs_ncu: CACHE=$cache; give none or all" >&2; exit 2 ;; esac
for v in "$steps" "$ncu_steps"; do
  [[ $v =~ ^[1-9][0-9]*$ ]] || { echo "unit_means_vs_ncu: step count '$v' is not a positive whole number" >&2; exit 2; }
done
((ncu_steps <= steps)) || { echo "unit_means_vs_ncu: NCU_STEPS=$ncu_steps is more than STEPS=$steps; profile a part of the window" >&2; exit 2; }
if [ -n "${RUN_FROM:-}" ] && [ ! -f "$RUN_FROM/gpu0.dsrec.report/report.json" ]; then
  echo "unit_means_vs_ncu: RUN_FROM=$RUN_FROM holds no gpu0.dsrec.report/report.json; give the WORK/NAME folder of an earlier run" >&2
  exit 2
fi
if [ -n "${NCU_FROM:-}" ] && [ ! -f "$NCU_FROM" ]; then
  echo "unit_means_vs_ncu: NCU_FROM=$NCU_FROM is not a file; give ncu.csv of an earlier run" >&2
  exit 2
fi
. bench/common.sh
bench_bin diescope diescope-cupti
if [ -z "${NCU_FROM:-}" ]; then
  command -v ncu >/dev/null || { echo "unit_means_vs_ncu: ncu (Nsight Compute) is not on PATH; install it or set NCU_FROM" >&2; exit 2; }
fi
bench_out "$out_dir"
bench_work ncu-compare
dir="$WORK/${name//\//-}"
mkdir -p "$dir"

run_dir=${RUN_FROM:-$dir/run}
if [ -z "${RUN_FROM:-}" ]; then
  mkdir -p "$run_dir"
  rc=0
  timeout "${T_RUN:-180}" diescope run --window markers --interval-ms "$interval" --output "$run_dir" -- \
    "${cmd[@]}" --steps "$steps" > "$run_dir/stdout.txt" 2> "$run_dir/stderr.txt" < /dev/null || rc=$?
  if [ "$rc" != 0 ]; then
    echo "unit_means_vs_ncu: diescope run of $model ended with $rc; see $run_dir/stderr.txt" >&2
    tail -5 "$run_dir/stderr.txt" >&2
    exit 1
  fi
fi
report="$run_dir/gpu0.dsrec.report/report.json"
# The workload's own step count inside the window (a signal could end it early).
steps=$(python3 -c 'import json,sys
print([json.loads(l) for l in open(sys.argv[1]) if l.startswith("{\"workload\"")][-1]["steps"])' "$run_dir/stdout.txt")

ncu_csv=${NCU_FROM:-$dir/ncu.csv}
if [ -z "${NCU_FROM:-}" ]; then
  available=()
  if [ "${REALTIME:-0}" = 1 ]; then
    ncu --query-metrics > "$dir/available.txt" 2>&1 || true
    available=("$dir/available.txt")
  fi
  metrics=$(python3 bench/ncu/unit_means_vs_ncu.py metrics "$report" "${available[@]}" --units "${UNITS:-}")
  echo "$metrics" > "$dir/metrics.txt"
  extra=()
  if ncu --help 2>/dev/null | grep -q -- --print-units; then extra=(--print-units base); fi
  if [ "$replay" = application ] && ncu --help 2>/dev/null | grep -q -- --app-replay-mode; then
    extra+=(--app-replay-mode relaxed)
  fi
  t_ncu=${T_NCU:-300}
  if [ -n "${DEADLINE:-}" ]; then
    left=$((DEADLINE - $(date +%s)))
    ((left > 0)) || { echo "unit_means_vs_ncu: DEADLINE passed before ncu on $name started; nothing profiled" >&2; exit 1; }
    ((left >= t_ncu)) || t_ncu=$left
  fi
  rc=0
  t0=$(date +%s)
  timeout "$t_ncu" ncu --clock-control none --cache-control "$cache" --replay-mode "$replay" "${extra[@]}" \
    --profile-from-start off --csv --metrics "$metrics" \
    "${cmd[@]}" --steps "$ncu_steps" --profile-steps "$ncu_steps" > "$ncu_csv" 2> "$dir/ncu.stderr" < /dev/null || rc=$?
  echo "ncu on $name: exit $rc, $(($(date +%s) - t0)) s" >&2
  if [ "$rc" != 0 ]; then
    echo "unit_means_vs_ncu: ncu on $model ended with $rc; see $dir/ncu.stderr and $ncu_csv" >&2
    grep '==PROF==\|==ERROR==\|==WARNING==' "$ncu_csv" "$dir/ncu.stderr" | tail -5 >&2 || true
    exit 1
  fi
fi
clock=()
[ -n "${UNITS:-}" ] || clock=(--sm-clock-mhz "${SM_CLOCK_MHZ:-window}")
python3 bench/ncu/unit_means_vs_ncu.py table --report "$report" --steps "$steps" --ncu "$ncu_csv" \
  --ncu-steps "$ncu_steps" --units "${UNITS:-}" "${clock[@]}" \
  --name "$name (interval ${interval} ms; ncu ${replay} replay; cache ${cache}${UNITS:+; units $UNITS})" \
  --csv "$OUT/unit-means.csv" | tee -a "$OUT/tables.md"
