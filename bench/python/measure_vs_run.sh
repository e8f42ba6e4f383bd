#!/usr/bin/env bash
# ResNet-50 AMP training (examples/python/train_resnet50.py, the bundled workload's model and steps)
# measured from inside with diescope.measure, beside `diescope run --window markers` on the same script
# and the script alone, in one GPU session: plain, then run and measure twice in turn. Each run's own
# step time over its window is the training's; the per-step figures of measure, averaged over the
# steady window (weighted by duration), are set beside run's window figures and beside the spread
# between the two rounds of each. Then m.step()'s cost (bench/python/step_cost.py) and the plot of the
# first measured run (examples/python/plot_steps.py). Runs on a GPU machine with PyTorch.
# Writes into OUT_DIR: env.txt, table.md (bench/python/measure_vs_run.py), runs.jsonl (each run's own
# JSON line), steps.png, step-cost/, reports/ (each run's report.json, measure's steps.csv and the
# tail of each run's stderr); the recordings stay in WORK.
#
#   bench/python/measure_vs_run.sh OUT_DIR     BUILD=build/release (bin/diescope, bin/diescope-cupti,
#                                              python/diescope with libdiescope-c.so); STEPS=80
set -euo pipefail
out_dir=${1:?usage: bench/python/measure_vs_run.sh OUT_DIR   (BUILD=build folder, default build/release)}
cd "$(dirname "$0")/../.."
. bench/common.sh
bench_bin diescope diescope-cupti
bench_out "$out_dir"
bench_work python
BUILD_DIR=$(cd "${BUILD:-build/release}" && pwd)
export PYTHONPATH=$BUILD_DIR/python DIESCOPE_CUPTI=$BIN/diescope-cupti
bench_gpu_env > "$OUT/env.txt"
python3 - >> "$OUT/env.txt" 2>&1 <<'PY' || true
import importlib, sys
print("python", sys.version.split()[0])
for name in ("numpy", "pandas", "matplotlib", "torch", "diescope"):
    try:
        m = importlib.import_module(name)
        print(name, getattr(m, "__version__", "imported"))
    except Exception as e:
        print(name, "not importable:", e)
import diescope
print("diescope frames:", "pandas DataFrame" if diescope.pandas_available() else "diescope.Table (no pandas)")
PY
STEPS=${STEPS:-80}
train=examples/python/train_resnet50.py
: > "$OUT/runs.jsonl"
# one FORM ROUND CMD...: runs CMD; its JSON line, with the form and round, goes to runs.jsonl.
one() {
  local form=$1 round=$2 rc=0; shift 2
  timeout 150 "$@" > "$WORK/$form$round.out" 2> "$WORK/$form$round.err" < /dev/null || rc=$?
  echo "$form $round exit $rc" >> "$OUT/env.txt"
  grep '^{"script"' "$WORK/$form$round.out" | tail -1 |
    python3 -c "import json,sys; d=json.loads(sys.stdin.read() or '{}'); d.update(form='$form', round=$round, exit=$rc); print(json.dumps(d))" \
      >> "$OUT/runs.jsonl"
}
one plain 1 python3 "$train" --steps "$STEPS"
for round in 1 2; do
  one run "$round" diescope run --window markers --output "$WORK/run$round" -- python3 "$train" --steps "$STEPS"
  one measure "$round" python3 "$train" --measure --steps "$STEPS" --output "$WORK/measure$round"
done
python3 bench/python/step_cost.py "$OUT/step-cost" --calls 10000 --batches 20 > /dev/null 2> "$WORK/step-cost.err" ||
  echo "step_cost exit $?" >> "$OUT/env.txt"
python3 examples/python/plot_steps.py "$WORK/measure1" "$OUT/steps.png" > "$WORK/plot.out" 2>&1 ||
  { echo "plot_steps exit $?: $(tail -1 "$WORK/plot.out")" >> "$OUT/env.txt"; }
# The reports and step tables the table is made from, small enough to keep beside it.
mkdir -p "$OUT/reports"
for round in 1 2; do
  cp "$WORK/run$round/gpu0.dsrec.report/report.json" "$OUT/reports/run$round-report.json" 2>/dev/null || true
  cp "$WORK/measure$round/gpu0.dsrec.report/report.json" "$OUT/reports/measure$round-report.json" 2>/dev/null || true
  cp "$WORK/measure$round/steps.csv" "$OUT/reports/measure$round-steps.csv" 2>/dev/null || true
  tail -c 3000 "$WORK/measure$round.err" > "$OUT/reports/measure$round-stderr.txt" 2>/dev/null || true
  tail -c 3000 "$WORK/run$round.err" > "$OUT/reports/run$round-stderr.txt" 2>/dev/null || true
done
python3 bench/python/measure_vs_run.py "$WORK" "$OUT/runs.jsonl" > "$OUT/table.md"
cat "$OUT/table.md"
