#!/usr/bin/env bash
# The cost of an NVTX range to a program with libdiescope-nvtx.so injected (docs/agent.md#nvtx-in-captures):
# nvtx_ring_cost with NVTX_INJECTION64_PATH (each push and pop timestamped into the ring) and without
# (NVTX's calls with no tool), alternated three times each, on any machine (CPU only).
#
#   bench/agent/nvtx_ring_cost.sh OUT_DIR      BUILD=build/release (bin/nvtx_ring_cost, bin/libdiescope-nvtx.so)
#
# Writes OUT_DIR/nvtx-ring-cost.txt: the machine, each run's batches and median, and a summary line per run.
set -euo pipefail
out_dir=${1:?usage: bench/agent/nvtx_ring_cost.sh OUT_DIR   (BUILD=build folder, default build/release)}
cd "$(dirname "$0")/../.."
build=${BUILD:-build/release}
bin=$(cd "$build/bin" && pwd)
for f in nvtx_ring_cost libdiescope-nvtx.so; do
  [ -e "$bin/$f" ] || { echo "nvtx_ring_cost.sh: no $bin/$f; build the nvtx_ring_cost and diescope-nvtx targets" >&2; exit 2; }
done
mkdir -p "$out_dir"
out=$(cd "$out_dir" && pwd)/nvtx-ring-cost.txt
rings=$(mktemp -d "${TMPDIR:-/tmp}/diescope-nvtx-cost.XXXXXX")
{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  echo "cpu $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) logical CPUs"
  uptime
} > "$out"
for round in 1 2 3; do
  echo "## round $round: without a tool" >> "$out"
  "$bin/nvtx_ring_cost" >> "$out"
  echo "## round $round: with libdiescope-nvtx.so" >> "$out"
  NVTX_INJECTION64_PATH="$bin/libdiescope-nvtx.so" DIESCOPE_NVTX_DIR="$rings" "$bin/nvtx_ring_cost" >> "$out"
done
rm -rf "$rings"
grep -E '^(## |median)' "$out"
