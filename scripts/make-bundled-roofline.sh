#!/usr/bin/env bash
# Writes data/roofline/h200-workloads.csv, the whole roofline table the README's no-GPU section plots:
# the bundled workloads' Nsight Compute exports from the H200 (tests/roofline/fixtures/, made by
# bench/roofline/bundled_workloads.sh) read by `roofline plot`, each workload's dominant kernel, with
# the measured ceilings of the H200's calibration file. No GPU needed.
#
#   scripts/make-bundled-roofline.sh [DIESCOPE]      (default build/release/bin/diescope)
set -euo pipefail
cd "$(dirname "$0")/.."
diescope=${1:-build/release/bin/diescope}
fixtures=tests/roofline/fixtures
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$diescope" roofline plot \
  --from-export ffma="$fixtures/h200-ffma.raw.csv" triad="$fixtures/h200-triad.raw.csv" \
  gemm="$fixtures/h200-gemm.raw.csv" dfma="$fixtures/h200-dfma.raw.csv" \
  --calibration bench/results/calibrate/2026-11-29-h200-wgmma/calibration-full.json --driver 580.159.04 \
  --aggregate dominant --kernel 'ffma_kernel|stream_triad_kernel|nvjet|dfma_kernel' --output "$work" >/dev/null
cp "$work/roofline.csv" data/roofline/h200-workloads.csv
echo "wrote data/roofline/h200-workloads.csv"
