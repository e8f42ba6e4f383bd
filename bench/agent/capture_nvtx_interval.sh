#!/usr/bin/env bash
# A capture at the shortest interval that holds, with the job's NVTX ranges (docs/agent.md#what-a-capture-holds,
# docs/agent.md#nvtx-in-captures), on a GPU machine. A PyTorch training loop with NVTX ranges
# (bench/agent/nvtx_train.py) runs with libdiescope-nvtx.so in NVTX_INJECTION64_PATH, as a fleet's job
# launcher would set it; the agent runs at its default duty (2 s of every 60 s at 10 ms) with one
# sigusr1 rule that names no interval (so the GPU model's default), and is sent SIGUSR1. The capture's
# chip samples received against those expected at its interval, its NVTX ranges, and its page are what
# this measures; then nvtx_ring_cost.sh times a range on this host's CPU.
#
#   bench/agent/capture_nvtx_interval.sh OUT_DIR     BUILD=build/release (diescope, diescope-cupti,
#                                                    libdiescope-nvtx.so, nvtx_ring_cost)
#   Env: CAPTURE_S (20), AGENT_DELAY_S (3: after the workload's first line), SIGNAL_AFTER_S (1: after the
#        agent logs its rules, so inside its first duty window: the sampler runs at 10 ms and restarts at the
#        capture's interval), TRAIN_S (45).
#
# Writes into OUT_DIR: env.txt, rules.json, train.txt, agent.log, records.txt (each record's interval,
# window and figures), capture.json, report-capture.json (the report's capture block and the results'
# coverage), nvtx-by-name.txt (from nvtx.csv), checks.txt (the figures this run is for),
# nvtx-ring-cost.txt, and capture.tar.gz (the capture's folder but its recording) for the page's
# screenshot. The recording stays in WORK.
set -euo pipefail
out_dir=${1:?usage: bench/agent/capture_nvtx_interval.sh OUT_DIR   (BUILD=build folder, default build/release)}
cd "$(dirname "$0")/../.."
. bench/common.sh
bench_bin diescope diescope-cupti nvtx_ring_cost
[ -f "$BIN/libdiescope-nvtx.so" ] || { echo "capture_nvtx_interval: no $BIN/libdiescope-nvtx.so" >&2; exit 2; }
python3 -c "import torch" 2>/dev/null || { echo "capture_nvtx_interval: PyTorch is not installed" >&2; exit 2; }
bench_out "$out_dir"
bench_work capture-nvtx
W=$WORK
CAPTURE_S=${CAPTURE_S:-20}; AGENT_DELAY_S=${AGENT_DELAY_S:-3}; SIGNAL_AFTER_S=${SIGNAL_AFTER_S:-1}; TRAIN_S=${TRAIN_S:-45}
export DIESCOPE_NVTX_DIR="$W/rings"
{
  bench_gpu_env
  python3 -c "import torch; print('torch', torch.__version__)"
  nproc
  echo "capture_s $CAPTURE_S agent_delay_s $AGENT_DELAY_S signal_after_s $SIGNAL_AFTER_S train_s $TRAIN_S"
} > "$OUT/env.txt" 2>&1

printf '{\n  "captures": {"folder": "%s/captures", "quota_mb": 2000, "min_interval_s": 0},\n  "rules": [{"name": "by-hand", "when": "sigusr1", "capture_s": %s}]\n}\n' \
  "$W" "$CAPTURE_S" > "$OUT/rules.json"

NVTX_INJECTION64_PATH="$BIN/libdiescope-nvtx.so" python3 bench/agent/nvtx_train.py --seconds "$TRAIN_S" \
  > "$OUT/train.txt" 2> "$W/train.err" &
train=$!
for _ in $(seq 1 300); do grep -q '^start' "$OUT/train.txt" 2>/dev/null && break; sleep 0.2; done
sleep "$AGENT_DELAY_S"
diescope agent --db "$W/agent.db" --no-listen --ndjson --rules "$OUT/rules.json" > "$W/agent.ndjson" 2> "$W/agent.log" &
agent=$!
# SIGUSR1 only once the agent catches it (it logs its rules then), inside its first duty window.
for _ in $(seq 1 100); do grep -q 'captures: rules from' "$W/agent.log" 2>/dev/null && break; sleep 0.1; done
sleep "$SIGNAL_AFTER_S"
kill -USR1 "$agent"
sleep $((CAPTURE_S + 4))
kill -TERM "$agent"
wait "$agent" || echo "agent exited $?" >> "$W/agent.log"
wait "$train" || echo "training exited $?" >> "$W/train.err"
cp "$W/agent.log" "$OUT/agent.log"
cp "$W/train.err" "$OUT/train-stderr.txt"
python3 bench/agent/capture_nvtx_summary.py "$OUT" "$W"
cap=$(ls -d "$W"/captures/*/ 2>/dev/null | tail -1)
if [ -n "$cap" ]; then tar -C "$cap" -czf "$OUT/capture.tar.gz" --exclude=capture.dsrec .; fi
BUILD=${BUILD:-build/release} bench/agent/nvtx_ring_cost.sh "$OUT" > /dev/null
grep -E '^(## |median)' "$OUT/nvtx-ring-cost.txt"
