#!/usr/bin/env bash
# Where `diescope run`'s own CPU goes at 10 ms: the wall and CPU time of each NVML read through
# diescope's adapter (nvml_call_cost, 500 calls each), then bench/run/cpu_cost.sh's ffma10mid case
# (FFMA on every SM, 10 ms, 14 s of the steady middle) once per build given, so that builds which
# read NVML at different cadences can be set side by side (a build of an older commit beside the
# current one; the same build twice shows the run-to-run spread). Runs on a GPU machine. Writes into
# OUT_DIR: env.txt, nvml-call-cost.txt, summary.txt (each build's CPU and recording lines, prefixed
# with its label), recordings.csv (one row per build: GPU-Util and engine readings, gaps, overflows),
# energy.csv (each build's run and window energy and its power lines: bench/run/energy_figures.py).
# The recordings stay in WORK (LABEL/ffma10mid/gpu0.dsrec).
#
#   bench/run/nvml_cadence.sh OUT_DIR [LABEL=BUILD_DIR...]     (default: current=$BUILD, BUILD=build/release)
#   e.g. bench/run/nvml_cadence.sh out A=build/before B1=build/release B2=build/release
set -euo pipefail
out_dir=${1:?usage: bench/run/nvml_cadence.sh OUT_DIR [LABEL=BUILD_DIR...]   (default: current=\$BUILD)}
shift
cd "$(dirname "$0")/../.."
. bench/common.sh
bench_bin diescope nvml_call_cost
bench_out "$out_dir"
bench_work nvml-cadence
builds=("$@")
[ ${#builds[@]} -gt 0 ] || builds=("current=${BUILD:-build/release}")
bench_gpu_env > "$OUT/env.txt"
nvml_call_cost 0 500 > "$OUT/nvml-call-cost.txt" 2>&1
: > "$OUT/summary.txt"
rows=()
for b in "${builds[@]}"; do
  label=${b%%=*} build=${b#*=} raw="$WORK/${b%%=*}"
  BUILD=$build WORK=$raw bash bench/run/cpu_cost.sh "$raw-out" ffma10mid > "$raw.log" 2>&1
  sed "s/^/$label: /" "$raw-out/summary.txt" >> "$OUT/summary.txt"
  rows+=("$label=$raw/ffma10mid/gpu0.dsrec")
done
python3 bench/run/recording_counts.py "${rows[@]}" > "$OUT/recordings.csv"
python3 bench/run/energy_figures.py "${rows[@]}" > "$OUT/energy.csv"
cat "$OUT/nvml-call-cost.txt" "$OUT/summary.txt"
