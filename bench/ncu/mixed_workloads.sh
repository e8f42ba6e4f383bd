#!/usr/bin/env bash
# The three models (ResNet-50 AMP inference and training, a small bf16 GPT) through unit_means_vs_ncu.sh,
# then the runs that isolate why a unit differs (docs/method.md#comparing-with-nsight-compute), on
# ResNet-50 inference:
#   one-pass     the same diescope run beside ncu reading DRAM alone, then Tensor alone: one pass
#                each, so no memory is saved and restored between replay passes
#   app-replay   beside ncu's application replay of every unit (each pass reruns the program)
#   cache-all    beside ncu with --cache-control all (caches flushed before every kernel)
#   interval-1ms a second diescope run at --interval-ms 1 beside the first ncu profile
# Runs on a GPU machine with ncu and PyTorch. Writes into OUT_DIR: env.txt, tables.md, unit-means.csv,
# summary.txt (each step's exit code and seconds), raw.tar.gz (WORK, default OUT_DIR/work, without the
# HTML and trace renderings; rewritten after each step). ncu profiles 1 step of each (NCU_STEPS).
#
#   bench/ncu/mixed_workloads.sh OUT_DIR [STEP...]    STEP: infer train gpt one-pass app-replay cache-all interval-1ms
#   BUILD=build folder (diescope, diescope-cupti), default build/release
set -uo pipefail
out_dir=${1:?usage: bench/ncu/mixed_workloads.sh OUT_DIR [STEP...]}
shift
steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(infer gpt train one-pass cache-all interval-1ms app-replay)
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
one() { # one LABEL [VAR=VALUE...] -- ARGS of unit_means_vs_ncu.sh after OUT_DIR
  local label=$1 t0 rc=0
  shift
  local vars=()
  while [ "$1" != -- ]; do vars+=("$1"); shift; done
  shift
  t0=$(date +%s)
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
