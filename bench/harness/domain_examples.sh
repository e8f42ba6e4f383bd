#!/usr/bin/env bash
# The GPU-domain and mixed-domain examples on a GPU (docs/harness.md#measurement-domains): each run with
# a short stopping rule, its console output kept. Writes OUT_DIR/outputs.txt (the environment, then
# each example's output under a heading with its exit code).
#
#   bench/harness/domain_examples.sh OUT_DIR     EXAMPLES=folder holding gpu_domain and mixed_domain
#                                               (default build/release/examples)
set -euo pipefail
out_dir=${1:?usage: bench/harness/domain_examples.sh OUT_DIR   (EXAMPLES=folder of the examples)}
cd "$(dirname "$0")/../.."
examples=$(cd "${EXAMPLES:-build/release/examples}" && pwd)
for e in gpu_domain mixed_domain; do
  [ -x "$examples/$e" ] || { echo "domain_examples: no $examples/$e; build the $e target (CUDA) first" >&2; exit 2; }
done
. bench/common.sh
bench_out "$out_dir"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}
{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit --format=csv 2>&1 || true
  for e in gpu_domain mixed_domain; do
    rc=0
    echo
    echo "## $e --min-samples 10 --min-time 0.2 --timeout 2"
    timeout 20 "$examples/$e" --min-samples 10 --min-time 0.2 --timeout 2 2>&1 || rc=$?
    echo "($e exit $rc)"
  done
} > "$OUT/outputs.txt"
cat "$OUT/outputs.txt"
