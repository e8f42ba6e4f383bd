#!/usr/bin/env bash
# bench/multi_gpu/ddp_two_gpus.sh tried on a CPU machine: every step of it against the stand-in host
# of two GPUs (the stand-in libnvidia-ml.so.1 of tests/rounds, the fake sampler child through
# stand_in/sampler.sh, stand_in/nvidia-smi) with stand_in/train.sh in place of the DDP training.
# It proves the script's plumbing (steps, table rows, the agent scrape, top), not any GPU figure.
#
#   bench/multi_gpu/ddp_two_gpus_on_stand_in.sh BUILD OUT_DIR   BUILD: build/ci with diescope,
#         diescope-cupti, tests/collect/diescope_sampler_fake and tests/rounds/fake-nvml built
set -euo pipefail
build=${1:?usage: bench/multi_gpu/ddp_two_gpus_on_stand_in.sh BUILD OUT_DIR}
out=${2:?usage: bench/multi_gpu/ddp_two_gpus_on_stand_in.sh BUILD OUT_DIR}
cd "$(dirname "$0")/../.."
build=$(cd "$build" && pwd)
here=$PWD/bench/multi_gpu/stand_in
for f in "$build/tests/collect/diescope_sampler_fake" "$build/tests/rounds/fake-nvml/libnvidia-ml.so.1"; do
  [ -e "$f" ] || { echo "ddp_two_gpus_on_stand_in.sh: no $f" >&2
                   echo "fix: cmake --build $build --target diescope diescope-cupti diescope_sampler_fake rounds_fake_nvml" >&2; exit 2; }
done
PATH="$here:$PATH" BUILD=$build TRAIN=$here/train.sh SECONDS_PER_RUN=${SECONDS_PER_RUN:-3} \
  LD_LIBRARY_PATH=$build/tests/rounds/fake-nvml DIESCOPE_FAKE_NVML_GPUS=2 DIESCOPE_FAKE_NVML_GPU_UTIL=97,88 \
  DIESCOPE_TEST_FAKE_SAMPLER=$build/tests/collect/diescope_sampler_fake DIESCOPE_CUPTI=$here/sampler.sh \
  bash bench/multi_gpu/ddp_two_gpus.sh "$out"
