#!/usr/bin/env bash
# The shortest sampling interval on a GPU machine, in one call: the held-out checks under
# `diescope run` at 10, 1 and 0.1 ms (footprint.sh's heldout section: FFMA on 132, 66 and 33 SMs, a
# STREAM copy and an L2-resident copy; at 0.1 ms 12 s each, 60 s in all), with samples received
# against expected, holes, overflow, the sampler child's stage times (its --timing notes), its CPU
# and RSS; then the raw bytes one sample takes in the hardware buffer (pm_minimal --keep-latest, a
# 4 MiB buffer decoded once after 2 s at 0.1 ms). When 0.1 ms lost samples, then also CUPTI alone
# (pm_minimal with evaluation on its one thread, 20 MiB buffer, 10 ms decodes) at 0.1 ms, and the
# child alone beside FFMA (decode_image_check.sh) at 0.25 ms, then (after CUPTI alone) 0.2 ms if
# 0.25 held or 0.5 ms if not, PM_SECONDS each. Docs: docs/footprint.md#the-decode-pipeline.
#
#   bench/footprint/pm_interval_check.sh OUT_DIR
#   BIN=folder with diescope, diescope-cupti, diescope-workload, pm_minimal, nvml_poll, bare_cuda
#   PM_HELDOUT=interval_ms:drain_ms:seconds_each,... (default 10:1000:4,1:1000:4,0.1:100:12)
#   PM_SECONDS=60 (the later runs)
#
# Writes OUT_DIR/env.txt, the heldout section's tables (loss.tsv, stages.tsv, heldout_cost.tsv,
# heldout_means.tsv, heldout_own.tsv, heldout_table.tsv), recording-notes.txt (the sampler and
# timing-total notes of each held-out recording), raw_probe.txt and, where run, shortest.txt.
# Reads clocks and limits, never sets them.
set -euo pipefail
out_dir=${1:?usage: bench/footprint/pm_interval_check.sh OUT_DIR}
mkdir -p "$out_dir"
out=$(cd "$out_dir" && pwd)
cd "$(dirname "$0")/../.."
# shellcheck source=bench/footprint/pm_common.sh
source bench/footprint/pm_common.sh
pm_check_settings

FOOTPRINT_HELDOUT=${PM_HELDOUT:-10:1000:4,1:1000:4,0.1:100:12} BIN=$bin WORK=$work \
  bash bench/footprint/footprint.sh "$out" heldout
held_out_notes "$work" "$out"

metrics=$(hopper_metrics "$bin")
"$bin/diescope-workload" ffma --seconds $((seconds * 3 + 30)) > /dev/null 2>&1 &
load=$!
trap 'kill "$load" 2> /dev/null || true' EXIT
sleep 3
# The raw sample: a 4 MiB buffer keeping the newest samples, decoded once after 2 s at 0.1 ms
# (20,000 samples made, far more than it holds).
{
  echo "pm_minimal --interval-ms 0.1 --drain-ms 5000 --seconds 2 --hw-buffer-mb 4 --keep-latest"
  "$bin/pm_minimal" --metrics "$metrics" --interval-ms 0.1 --drain-ms 5000 --seconds 2 --hw-buffer-mb 4 --keep-latest 2>&1 || true
  echo "pm_minimal --interval-ms 0.1 --drain-ms 5000 --seconds 2 --hw-buffer-mb 6 --keep-latest"
  "$bin/pm_minimal" --metrics "$metrics" --interval-ms 0.1 --drain-ms 5000 --seconds 2 --hw-buffer-mb 6 --keep-latest 2>&1 || true
} > "$out/raw_probe.txt"

# Did 0.1 ms hold? No hole and no overflow in its held-out run.
held=$(awk -F"\t" '$1 == "0.1" {print ($6 == 0 && $10 !~ /overflow|lost|dropped/) ? "yes" : "no"}' "$out/loss.tsv" 2> /dev/null || true)
echo "0.1 ms held over the held-out run: ${held:-unknown}" >&2
if [ "$held" != yes ]; then
  kill "$load" 2> /dev/null || true
  wait "$load" 2> /dev/null || true
  : > "$out/shortest.txt"
  check() {  # the child alone beside FFMA at $1 ms; prints yes when it lost nothing
    BIN=$bin bash bench/footprint/decode_image_check.sh "$work/check-$1" "$seconds" "$1" > /dev/null
    cat "$work/check-$1/decode_image_check.txt" >> "$out/shortest.txt"
    awk '{for (i = 1; i <= NF; i++) if ($i ~ /^(gaps|overflow)=/) {split($i, kv, "="); bad += kv[2]}} END {print bad == 0 ? "yes" : "no"}' \
      "$work/check-$1/decode_image_check.txt"
  }
  ok=$(check 0.25)
  "$bin/diescope-workload" ffma --seconds $((seconds + 10)) > /dev/null 2>&1 &
  load=$!
  sleep 3
  echo "pm_minimal --interval-ms 0.1 --drain-ms 10 --seconds $seconds --evaluate --hw-buffer-mb 20 | $("$bin/pm_minimal" \
    --metrics "$metrics" --interval-ms 0.1 --drain-ms 10 --seconds "$seconds" --evaluate --hw-buffer-mb 20 2>&1 || true)" >> "$out/shortest.txt"
  kill "$load" 2> /dev/null || true
  wait "$load" 2> /dev/null || true
  if [ "$ok" = yes ]; then check 0.2 > /dev/null; else check 0.5 > /dev/null; fi
fi
echo "pm_interval_check.sh: tables in $out; raw outputs in $work" >&2
