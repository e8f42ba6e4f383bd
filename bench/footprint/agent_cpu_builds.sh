#!/usr/bin/env bash
# Two builds' agents on a machine without a GPU (docs/footprint.md#the-agents-own-cost): the profiler
# scan's cost by its thread's CPU clock (agent_part_cost of each build, in turn, twice: the first scan,
# later scans in a row, later scans each after 200 ms asleep, as the agent's come), then the agent at
# its defaults with the stand-in NVML and the fake sampler child, before, after, before, after, 62 s
# each (footprint.sh's margin section).
#
#   BEFORE_BIN=folder BIN=folder STANDIN=build bench/footprint/agent_cpu_builds.sh OUT_DIR
#       BEFORE_BIN, BIN: folders with each build's diescope and agent_part_cost; STANDIN: a build
#       folder with tests/rounds/fake-nvml/libnvidia-ml.so.1 and tests/collect/diescope_sampler_fake.
#
# Writes OUT_DIR/scan_parts.txt (one line a part, build and round), env.txt, margin.tsv, margin.txt.
set -euo pipefail
out_dir=${1:?usage: BEFORE_BIN=folder BIN=folder STANDIN=build bench/footprint/agent_cpu_builds.sh OUT_DIR}
: "${BEFORE_BIN:?the other build's folder}" "${BIN:?this build's folder}" "${STANDIN:?a build with the stand-ins}"
mkdir -p "$out_dir"
out=$(cd "$out_dir" && pwd)
standin=$(cd "$STANDIN" && pwd)
cd "$(dirname "$0")/../.."
: > "$out/scan_parts.txt"
for round in 1 2; do
  for tag in before after; do
    folder=$BEFORE_BIN
    [ "$tag" = after ] && folder=$BIN
    "$folder/agent_part_cost" 200 | grep 'profiler scan' | sed "s/^/$tag round=$round /" >> "$out/scan_parts.txt"
  done
done
LD_LIBRARY_PATH=$standin/tests/rounds/fake-nvml AGENT_ARGS="--sampler $standin/tests/collect/diescope_sampler_fake" \
  FOOTPRINT_CHILD=diescope_sampl BIN=$BIN BEFORE_BIN=$BEFORE_BIN bash bench/footprint/footprint.sh "$out" margin
