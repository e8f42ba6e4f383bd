#!/usr/bin/env bash
# Energy per step on a GPU: ResNet-50 AMP training (bench/energy/resnet50_steps.py, long steps of
# gradient-accumulated micro-batches, one NVTX range each) under `diescope run --window markers`,
# the program reading NVML's energy counter itself at every step boundary. The recording, the
# program's step table and the counter's changes go to OUT_DIR; bench/energy/compare_steps.py then
# sets diescope's per-step energy (span figures of the recording) beside the program's, on any machine.
#
#   bench/energy/resnet50_steps.sh BIN OUT_DIR     BIN holds diescope and diescope-cupti (built with
#                                                  the ci or release preset); MICRO, ACCUM, STEPS, WARMUP
#                                                  pass to the program (defaults 256, 40, 12, 2)
# Clocks and the power limit are read (env.txt), never set.
set -euo pipefail
cd "$(dirname "$0")/../.."
. bench/common.sh
bench_bin_dir bench/energy/resnet50_steps.sh "${1:-}" "${2:-}" diescope diescope-cupti
export PATH="$bin:$PATH" DIESCOPE_CUPTI="$bin/diescope-cupti"
python3 -c "import torch, sys; print('torch', torch.__version__, 'python', sys.version.split()[0])" >> "$out/env.txt" 2>&1
t0=$(date +%s.%N)
rc=0
timeout -k 5 300 diescope run --window markers --output "$out/run" -- \
  python3 bench/energy/resnet50_steps.py --micro "${MICRO:-256}" --accum "${ACCUM:-40}" --steps "${STEPS:-12}" \
  --warmup "${WARMUP:-2}" --output "$out/program" > "$out/run.stdout" 2> "$out/run.stderr" || rc=$?
echo "diescope run: exit $rc, $(python3 -c "import time; print(f'{time.time() - $t0:.1f}')") s" | tee -a "$out/env.txt"
nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,power.limit --format=csv >> "$out/env.txt" 2>&1 || true
exit "$rc"
