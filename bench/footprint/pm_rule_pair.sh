#!/usr/bin/env bash
# Two builds of the sampler child at 0.1 ms over the five held-out workloads, one after the other in
# one call on a GPU machine (pm_boundary_check.sh's `diescope run` part, CUPTI alone left out): what
# a change of the decode rule (docs/footprint.md#the-decode-period) does, on the same machine and
# in the same minutes.
#
#   bench/footprint/pm_rule_pair.sh OUT_DIR NAME_A=BIN_A NAME_B=BIN_B
#   each BIN: a folder with diescope, diescope-cupti, diescope-workload, pm_minimal, nvml_poll, bare_cuda
#   PM_HELDOUT_SECONDS=12 (each workload)
#
# Writes OUT_DIR/NAME/ for each build: pm_boundary_check.sh's tables (loss.tsv, stages.tsv,
# heldout_*.tsv, holes-run.tsv). Reads clocks and limits, never sets them.
set -euo pipefail
out_dir=${1:?usage: bench/footprint/pm_rule_pair.sh OUT_DIR NAME_A=BIN_A NAME_B=BIN_B}
shift
(($# >= 2)) || { echo "pm_rule_pair.sh: give two builds as NAME=BIN_FOLDER" >&2; exit 2; }
cd "$(dirname "$0")/../.."
for pair in "$@"; do
  name=${pair%%=*} bin=${pair#*=}
  [ -x "$bin/diescope-cupti" ] || { echo "pm_rule_pair.sh: no diescope-cupti in $bin" >&2; exit 2; }
  echo "$name start $(date -u +%T)"
  BIN=$bin WORK=$(mktemp -d) PM_MINIMAL='' PM_HELDOUT_SECONDS=${PM_HELDOUT_SECONDS:-12} \
    bash bench/footprint/pm_boundary_check.sh "$out_dir/$name"
  echo "$name done $(date -u +%T)"
done
