#!/usr/bin/env bash
# Does 0.1 ms hold where GPU programs end and begin (docs/footprint.md#the-decode-image), in one call
# on a GPU machine:
#   1. the held-out checks under `diescope run` at 0.1 ms (footprint.sh's heldout section: FFMA on
#      132, 66 and 33 SMs, a STREAM copy and an L2-resident copy, one process each, PM_HELDOUT_SECONDS
#      each), with the sampler child's timing notes (DIESCOPE_SAMPLER_TIMING=1), which name every
#      decode pass that filled its image or whose call took longer than the decode period;
#   2. CUPTI alone (pm_minimal --pass-log), decoding only, with a given decode period, slack and
#      hardware buffer (PM_MINIMAL="period_ms:slack_ms:buffer_MiB ...", one run each; by default
#      40:60:77, the larger image that was tried at 0.1 ms, and 20:30:41, the child's; PM_MINIMAL=
#      leaves them out), over the same five workloads run the same way, one process after another.
# For each: samples received and expected, holes with their times beside the workloads' starts and
# ends, overflow, and the decode passes around each hole (boundary_holes.py).
#
#   bench/footprint/pm_boundary_check.sh OUT_DIR
#   BIN=folder with diescope, diescope-cupti, diescope-workload, pm_minimal, nvml_poll, bare_cuda
#   PM_HELDOUT_SECONDS=12  PM_MINIMAL="40:60:77 20:30:41"  PM_RUN=1 (0: no `diescope run`)
#
# Writes OUT_DIR/env.txt, the heldout section's tables (loss.tsv, stages.tsv, heldout_*.tsv),
# recording-notes.txt, timing-pass.txt (the child's noted passes), holes-run.tsv, and for each
# CUPTI-alone run minimal-LABEL.txt (its summary line), holes-minimal-LABEL.tsv,
# passes-minimal-LABEL.txt (its pass and hole lines) and boundaries-minimal-LABEL.txt (LABEL:
# period-slack). Reads clocks and limits, never
# sets them.
set -euo pipefail
out_dir=${1:?usage: bench/footprint/pm_boundary_check.sh OUT_DIR}
mkdir -p "$out_dir"
out=$(cd "$out_dir" && pwd)
cd "$(dirname "$0")/../.."
# shellcheck source=bench/footprint/pm_common.sh
source bench/footprint/pm_common.sh
pm_check_settings
each=${PM_HELDOUT_SECONDS:-12}

# 1. `diescope run` over the five workloads (footprint.sh's heldout section times the child's stages).
if [ "${PM_RUN:-1}" != 0 ]; then
  FOOTPRINT_HELDOUT=0.1:100:$each BIN=$bin WORK=$work bash bench/footprint/footprint.sh "$out" heldout
  held_out_notes "$work" "$out"
  grep -h ' timing-pass ' "$work"/heldout-0.1ms/gpu0.dsrec > "$out/timing-pass.txt" || true
  python3 bench/footprint/boundary_holes.py recording "$work/heldout-0.1ms/gpu0.dsrec" > "$out/holes-run.tsv"
fi

# 2. CUPTI alone beside the same five workloads, one process after another.
metrics=$(hopper_metrics "$bin")
workloads=("ffma132 ffma --sms 132" "ffma66 ffma --sms 66" "ffma33 ffma --sms 33" "stream_copy stream --kernel copy"
  "l2_copy stream --kernel copy --elements 4194304")
minimal() {  # label period_ms slack_ms buffer_MiB
  local label=$1 period=$2 slack=$3 hw=$4 bounds="$out/boundaries-minimal-$1.txt"
  local secs=$((5 * each + 4))
  "$bin/pm_minimal" --metrics "$metrics" --interval-ms 0.1 --drain-ms "$period" --slack-ms "$slack" \
    --hw-buffer-mb "$hw" --seconds "$secs" --pass-log > "$work/minimal-$label.out" 2> "$work/minimal-$label.err" &
  local pm=$!
  sleep 2
  : > "$bounds"
  local w name
  for w in "${workloads[@]}"; do
    name=${w%% *}
    echo "start $name $(date +%s%N)" >> "$bounds"
    # shellcheck disable=SC2086
    "$bin/diescope-workload" ${w#* } --seconds "$each" > /dev/null 2>&1 || echo "workload $name failed" >&2
    echo "stop $name $(date +%s%N)" >> "$bounds"
  done
  wait "$pm" || echo "pm_minimal ($label) failed: $(tail -3 "$work/minimal-$label.err")" >&2
  {
    echo "pm_minimal --interval-ms 0.1 --drain-ms $period --slack-ms $slack --hw-buffer-mb $hw --seconds $secs --pass-log (decoding only; beside the five workloads)"
    cat "$work/minimal-$label.out"
  } > "$out/minimal-$label.txt"
  python3 bench/footprint/boundary_holes.py minimal "$work/minimal-$label.err" "$bounds" > "$out/holes-minimal-$label.tsv"
  head -400 "$work/minimal-$label.err" > "$out/passes-minimal-$label.txt"
}
for config in ${PM_MINIMAL-40:60:77 20:30:41}; do
  IFS=: read -r p s h <<< "$config"
  minimal "$p-$s" "$p" "$s" "$h"
done
echo "pm_boundary_check.sh: tables in $out; raw outputs in $work" >&2
