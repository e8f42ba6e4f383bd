#!/usr/bin/env bash
# The main job on a machine without a GPU: build diescope and analyse a bundled H200 recording (ResNet-50 AMP training, recorded with diescope run).
# It prints the headline and writes report.json, samples.csv and report.html to build/release/bundled-report/,
# against the bundled H200 calibration (data/calibrations/)
# (README.md, "Try it without a GPU"). On a machine with a GPU,
# `build/release/bin/diescope run -- build/release/bin/diescope workload ffma` measures a bundled workload live.
#
#   bash scripts/main.sh [RECORDING]
# DIESCOPE_BUILD=DIR uses the diescope already built in DIR (DIR/bin/diescope) instead of building
# build/release, and writes to DIR/bundled-report/.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${DIESCOPE_BUILD:-build/release}
if [ -z "${DIESCOPE_BUILD:-}" ]; then
  bash scripts/setup.sh
  cmake --preset release >/dev/null
  cmake --build --preset release --target diescope
fi
recording=${1:-data/recordings/h200/resnet50.dsrec}
# data/calibrations holds the full calibration of the H200 the bundled recordings were made on
# (docs/calibration.md#the-bundled-calibration), so the report says how far its units were checked.
"$build/bin/diescope" report "$recording" --calibration data/calibrations --format terminal,json,csv,html \
  --output "$build/bundled-report"
echo
echo "main: the report is in $build/bundled-report/: report.json, samples.csv and report.html (open it in a browser)"
