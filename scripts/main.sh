#!/usr/bin/env bash
# The main job on a machine without a GPU: build diescope and analyse a bundled H200 recording (ResNet-50 AMP training, recorded with diescope run).
# On a machine with a GPU, `build/release/bin/diescope run -- build/release/bin/diescope workload ffma`
# measures a bundled workload live.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release --target diescope
recording=${1:-data/recordings/h200/resnet50.dsrec}
build/release/bin/diescope report "$recording" --output build/release/bundled-report
