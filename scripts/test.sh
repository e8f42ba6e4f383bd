#!/usr/bin/env bash
# Builds everything with warnings as errors and runs the whole CPU test suite (tests labelled gpu
# skip themselves here; scripts/gpu-tests.sh runs them on a GPU machine).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# The repository stands alone: no reference outside it, no broken citation or results path.
bash scripts/check-references.sh
# Every C++ and CUDA file is formatted as .clang-format says.
bash scripts/check-format.sh
cmake --preset ci
cmake --build --preset ci
ctest --preset ci -j2
# The recording reader's libFuzzer target, for a short time (scripts/fuzz.sh).
bash scripts/fuzz.sh 30
