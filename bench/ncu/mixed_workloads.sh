#!/usr/bin/env bash
# The three models (ResNet-50 AMP inference and training, a small bf16 GPT) through unit_means_vs_ncu.sh,
# then the runs that isolate why a unit differs (docs/method.md#comparing-with-nsight-compute), on
# ResNet-50 inference:
#   one-pass     the same diescope run beside ncu reading DRAM alone, then Tensor alone: one pass
#                each, so no memory is saved and restored between replay passes
#   app-replay   beside ncu's application replay of every unit (each pass reruns the program)
#   cache-all    beside ncu with --cache-control all (caches flushed before every kernel)
#   interval-1ms a second diescope run at --interval-ms 1 beside the first ncu profile
# and on training and the GPT:
#   train-one-pass, gpt-one-pass   beside that model's diescope run, ncu reading DRAM alone, then
#                Tensor alone, each only when that unit differed from ncu by more than a point in the
#                model's every-unit table (run `train` or `gpt` first in the same OUT_DIR)
# and the SM clock the kernels really ran at in the pipelined run (no ncu):
#   probe-infer, probe-train, probe-gpt   `diescope run --window markers` over the model with
#                bench/ncu/effective_sm_clock.py beside it (a one-thread kernel on a side stream that
#                times fixed SM-cycle spins with %globaltimer): NVML's SM clock, the probes' clock and
#                diescope's unit means over one window. PROBE_LIB: the probe library (default
#                BUILD/libsmclockprobe.so; nvcc -O2 -shared -Xcompiler -fPIC -arch=sm_90
#                -o libsmclockprobe.so bench/ncu/sm_clock_probe.cu)
# Runs on a GPU machine with ncu and PyTorch. Writes into OUT_DIR: env.txt, tables.md, unit-means.csv,
# summary.txt (each step's exit code and seconds), raw.tar.gz (WORK, default OUT_DIR/work, without the
# HTML and trace renderings; rewritten after each step). ncu profiles 1 step of each (NCU_STEPS).
#
#   bench/ncu/mixed_workloads.sh OUT_DIR [STEP...]    STEP: infer train gpt one-pass train-one-pass gpt-one-pass
#                                                           app-replay cache-all interval-1ms
#   BUILD=build folder (diescope, diescope-cupti), default build/release
#   BUDGET_S=seconds for the whole script: each step's time limits (T_RUN, T_NCU) are cut to what is
#   left, and a step is skipped (and said so in summary.txt) when less than MIN_STEP_S (default 40) is left
set -uo pipefail
out_dir=${1:?usage: bench/ncu/mixed_workloads.sh OUT_DIR [STEP...]}
shift
steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(infer gpt train one-pass cache-all interval-1ms app-replay)
lib=${PROBE_LIB:-${BUILD:-build/release}/libsmclockprobe.so}
for s in "${steps[@]}"; do
  case $s in
    infer | train | gpt | one-pass | train-one-pass | gpt-one-pass | app-replay | cache-all | interval-1ms) ;;
    probe-infer | probe-train | probe-gpt)
      [ -f "$lib" ] || { echo "mixed_workloads: $s needs the probe library: no $lib (set PROBE_LIB)" >&2; exit 2; } ;;
    *) echo "mixed_workloads: unknown step '$s'; give infer train gpt one-pass train-one-pass gpt-one-pass app-replay cache-all interval-1ms probe-infer probe-train probe-gpt" >&2; exit 2 ;;
  esac
done
budget=${BUDGET_S:-0}
min_step=${MIN_STEP_S:-40}
for v in "$budget" "$min_step"; do
  [[ $v =~ ^[0-9]+$ ]] || { echo "mixed_workloads: BUDGET_S=$budget, MIN_STEP_S=$min_step: give whole seconds" >&2; exit 2; }
done
start=$(date +%s)
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out_dir"
out=$(cd "$out_dir" && pwd)
export WORK=${WORK:-$out/work}
mkdir -p "$WORK"
{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,power.limit,persistence_mode --format=csv 2>&1
  ncu --version 2>&1 | tail -1
  python3 -c "import torch, torchvision; print('torch', torch.__version__, 'torchvision', torchvision.__version__)" 2>&1 | tail -1
} > "$out/env.txt"
cat "$out/env.txt"
: > "$out/summary.txt"
min() { if [ "$1" -lt "$2" ]; then echo "$1"; else echo "$2"; fi; }
# differs NAME LABEL: true when the every-unit table of NAME in unit-means.csv has LABEL more than a
# point away from ncu.
differs() {
  python3 - "$out/unit-means.csv" "$1" "$2" <<'PY'
import csv, sys
path, name, label = sys.argv[1:]
try:
    rows = [r for r in csv.DictReader(open(path)) if r["name"].startswith(name + " (") and "; units " not in r["name"]
            and r["row"] == label]
except OSError:
    rows = []
sys.exit(0 if rows and rows[-1]["difference"] not in ("", "n/a") and abs(float(rows[-1]["difference"])) > 1 else 1)
PY
}
# one_pass MODEL: DRAM alone, then Tensor alone, beside MODEL's diescope run, each only when it differed.
one_pass() {
  local model=$1 key label
  if [ ! -f "$WORK/$model/run/gpu0.dsrec.report/report.json" ]; then
    echo "$model-one-pass skipped: no run of $model in $WORK (run its step first)" | tee -a "$out/summary.txt"
    return 0
  fi
  for key in dram tensor; do
    label=DRAM; [ $key = tensor ] && label=Tensor
    if differs "$model" "$label"; then
      one "$model-one-pass-$key" UNITS=$key RUN_FROM="$WORK/$model/run" -- "$model" "$model/$key-alone"
    else
      echo "$model-one-pass-$key skipped: $label within a point of ncu (or no table)" | tee -a "$out/summary.txt"
    fi
  done
}
# budget_left LABEL: with BUDGET_S set, `left` becomes the seconds left; false (and the step said to be
# skipped in summary.txt) when fewer than MIN_STEP_S are left. Always true without a budget.
budget_left() {
  [ "$budget" -gt 0 ] || return 0
  left=$((budget - ($(date +%s) - start)))
  [ "$left" -ge "$min_step" ] && return 0
  echo "$1 skipped: ${left} s of BUDGET_S=$budget left" | tee -a "$out/summary.txt"
  return 1
}
# probe MODEL ARGS...: diescope run over the model with the SM-clock probes beside it, in WORK/MODEL-clock.
probe() {
  local model=$1 t0 rc=0 dir=$WORK/$1-clock t_run=${T_RUN:-180}
  shift
  t0=$(date +%s)
  budget_left "probe-$model" || return 0
  [ "$budget" -gt 0 ] && t_run=$(min "$t_run" "$left")
  mkdir -p "$dir/run"
  (
    cd "$here/../.."
    . bench/common.sh
    bench_bin diescope diescope-cupti
    timeout "$t_run" diescope run --window markers --interval-ms 10 --output "$dir/run" -- \
      python3 bench/ncu/effective_sm_clock.py --lib "$(cd "$(dirname "$lib")" && pwd)/$(basename "$lib")" \
      --raw "$dir/probes.json" -- "$@" > "$dir/stdout.txt" 2> "$dir/stderr.txt" < /dev/null
  ) || rc=$?
  {
    echo "### probe-$model: SM clock inside the window"
    echo
    grep '^{"sm_clock_probes"' "$dir/stdout.txt" || echo "(no probe result; see stderr.txt: $(tail -1 "$dir/stderr.txt"))"
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); w=r["window"]
print(json.dumps({"nvml_sm_clock_mhz": r.get("hardware", {}).get("sm_clock_mhz"), "span_s": w["results"]["span_s"],
  "units": {u["key"]: u.get("mean_pct") for u in w["results"]["units"]}}))' "$dir/run/gpu0.dsrec.report/report.json" || true
    echo
  } | tee -a "$out/tables.md"
  echo "probe-$model rc=$rc $(($(date +%s) - t0)) s" | tee -a "$out/summary.txt"
  find "$WORK" \( -name '*.html' -o -name 'trace*.json' -o -name 'samples.csv' \) -delete
  tar -C "$WORK" -czf "$out/raw.tar.gz" . || true
}
one() { # one LABEL [VAR=VALUE...] -- ARGS of unit_means_vs_ncu.sh after OUT_DIR
  local label=$1 t0 rc=0
  shift
  local vars=()
  while [ "$1" != -- ]; do vars+=("$1"); shift; done
  shift
  t0=$(date +%s)
  budget_left "$label" || return 0
  # Each time limit no longer than what is left: the diescope run's now, ncu's when it starts.
  [ "$budget" -gt 0 ] && vars+=("T_RUN=$(min "${T_RUN:-180}" "$left")" "DEADLINE=$((start + budget))")
  env "${vars[@]}" bash "$here/unit_means_vs_ncu.sh" "$out" "$@" || rc=$?
  echo "$label rc=$rc $(($(date +%s) - t0)) s" | tee -a "$out/summary.txt"
  # Raw outputs so far, in one compressed file (no HTML or trace renderings), for reading elsewhere;
  # rewritten after every step, so a time limit that ends the script loses only the step it cut.
  find "$WORK" \( -name '*.html' -o -name 'trace*.json' -o -name 'samples.csv' \) -delete
  tar -C "$WORK" -czf "$out/raw.tar.gz" . || true
}
for s in "${steps[@]}"; do
  case $s in
    infer) one infer -- resnet50-infer ;;
    train) one train -- resnet50-train ;;
    gpt) one gpt -- gpt ;;
    train-one-pass) one_pass resnet50-train ;;
    gpt-one-pass) one_pass gpt ;;
    probe-infer) probe resnet50-infer workloads/pytorch/resnet50_amp.py --infer --batch 128 --steps 300 ;;
    probe-train) probe resnet50-train workloads/pytorch/resnet50_amp.py --batch 128 --steps 60 ;;
    probe-gpt) probe gpt workloads/pytorch/gpt_bf16.py --steps 100 ;;
    one-pass) one one-pass-dram UNITS=dram RUN_FROM="$WORK/resnet50-infer/run" -- resnet50-infer resnet50-infer/dram-alone
              one one-pass-tensor UNITS=tensor RUN_FROM="$WORK/resnet50-infer/run" -- resnet50-infer resnet50-infer/tensor-alone ;;
    app-replay) one app-replay REPLAY=application RUN_FROM="$WORK/resnet50-infer/run" -- \
                  resnet50-infer resnet50-infer/app-replay ;;
    cache-all) one cache-all UNITS=dram,l2,tensor CACHE=all RUN_FROM="$WORK/resnet50-infer/run" -- \
                 resnet50-infer resnet50-infer/cache-all ;;
    interval-1ms) one interval-1ms INTERVAL_MS=1 NCU_FROM="$WORK/resnet50-infer/ncu.csv" -- \
                    resnet50-infer resnet50-infer/interval-1ms ;;
    *) echo "mixed_workloads: unknown step '$s'" >&2; exit 2 ;;
  esac
done
cat "$out/summary.txt"
