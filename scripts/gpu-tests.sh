#!/usr/bin/env bash
# Runs the tests labelled gpu in an existing build folder, on a machine with an NVIDIA GPU. Builds
# nothing: build first (cmake --preset ci && cmake --build --preset ci), or carry a build folder.
#   scripts/gpu-tests.sh BUILD_DIR [extra ctest arguments]
set -euo pipefail
build=${1:?usage: scripts/gpu-tests.sh BUILD_DIR [ctest args]}
shift
if [ ! -f "$build/CTestTestfile.cmake" ]; then
  echo "gpu-tests: $build is not a CMake build folder (no CTestTestfile.cmake)" >&2
  echo "  fix: build first: cmake --preset ci -B $build && cmake --build $build" >&2
  exit 2
fi
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.mem --format=csv || true
else
  echo "gpu-tests: nvidia-smi not found; the gpu tests will skip themselves" >&2
fi
ctest --test-dir "$build" -L gpu --output-on-failure "$@"
