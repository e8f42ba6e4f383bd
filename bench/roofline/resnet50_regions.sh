#!/usr/bin/env bash
# `diescope roofline profile` on a program no one here wrote: PyTorch ResNet-50 training steps
# (resnet50_steps.py) with NVTX ranges around forward, backward and the optimizer, on a GPU
# machine. One point per region (--aggregate sum) and the dominant kernel of each (plot --aggregate
# dominant). First, a time-only ncu pass over two steps checks which launches each region encloses
# when backward is marked by a push/pop range on the main thread (step 1) and by a start/end range
# (step 2): autograd launches backward kernels from its own thread. Writes into OUT_DIR:
# nvtx-check.csv, regions-columns.csv (sum), dominant-columns.csv (summaries: table_columns.py cuts), timing.txt, env.txt; reports, exports, logs and
# plots stay in WORK.
#
#   bench/roofline/resnet50_regions.sh OUT_DIR [BATCH] [STEPS]    BUILD=build/release (diescope)
#   CALIBRATION=FILE   as in bundled_workloads.sh
set -euo pipefail
out_dir=${1:?usage: bench/roofline/resnet50_regions.sh OUT_DIR [BATCH] [STEPS]}
batch=${2:-32}
steps=${3:-1}
cd "$(dirname "$0")/../.."
. bench/common.sh
bench_bin diescope
bench_out "$out_dir"
bench_work roofline-resnet50
calibration=${CALIBRATION:-bench/results/calibrate/2026-11-29-h200-wgmma/calibration-full.json}
bench_gpu_env > "$OUT/env.txt" 2>&1
python3 -c "import torch, torchvision; print('torch', torch.__version__, 'torchvision', torchvision.__version__)" \
  >> "$OUT/env.txt" 2>&1 || true

# Which launches each marking encloses (time only: one pass per kernel).
ncu --clock-control none --nvtx --metrics gpu__time_duration.sum --profile-from-start off \
  --export "$WORK/nvtx-check" --force-overwrite \
  python3 bench/roofline/resnet50_steps.py --warmup 2 --steps 2 --batch "$batch" --probe > "$WORK/nvtx-check.log" 2>&1
ncu --import "$WORK/nvtx-check.ncu-rep" --csv --page raw > "$WORK/nvtx-check.csv"
python3 - "$WORK/nvtx-check.csv" > "$OUT/nvtx-check.csv" <<'PY'
import collections, csv, sys
lines = [l for l in open(sys.argv[1]) if l.startswith('"')]
rows = list(csv.DictReader(lines))[1:]
pp = "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"
se = "Id:Domain:Start/Stop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"
def name(cell, lead):
    items = cell.split('"')[1::2]
    return items[-1].split(":")[lead] if items else ""
count = collections.Counter()
for r in rows:
    a, b = name(r.get(pp, ""), 1), name(r.get(se, ""), 2)
    count[(f"push/pop: {a}" if a else "") + (f"start/end: {b}" if b else "") or "no region"] += 1
w = csv.writer(sys.stdout, lineterminator="\n")
w.writerow(["launches of 2 steps (step 1: backward pushed on the main thread; step 2: backward as a start/end range)", "region"])
for k, v in sorted(count.items()):
    w.writerow([v, k])
PY

t0=$(date +%s.%N)
diescope roofline profile --output "$WORK/resnet" --calibration "$calibration" --timeout 580 --aggregate sum \
  --color-by region -O ncu-arg=--profile-from-start=off \
  -- python3 bench/roofline/resnet50_steps.py --warmup 2 --steps "$steps" --batch "$batch" > "$WORK/profile.txt" 2>&1 || true
t1=$(date +%s.%N)
python3 - "$t0" "$t1" "$steps" "$batch" > "$OUT/timing.txt" <<'PY'
import sys; print(f"profile of {sys.argv[3]} ResNet-50 training step(s), batch {sys.argv[4]}: {float(sys.argv[2]) - float(sys.argv[1]):.1f} s wall")
PY
grep "profiled in" "$WORK/profile.txt" >> "$OUT/timing.txt" || true
python3 bench/roofline/table_columns.py "$WORK/resnet/roofline.csv" > "$OUT/regions-columns.csv"
diescope roofline plot --from-csv "$WORK/resnet/roofline-launches.csv" --aggregate dominant --color-by region \
  --output "$WORK/resnet-dominant" > "$WORK/plot-dominant.txt" 2>&1
python3 bench/roofline/table_columns.py "$WORK/resnet-dominant/roofline.csv" > "$OUT/dominant-columns.csv"
echo "done: $OUT"
