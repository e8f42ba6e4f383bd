#!/usr/bin/env bash
# The agent's measurement cost on a real workload (docs/method.md#measurement-cost): one ResNet-50 AMP
# training process runs throughout and logs its finished steps about twice a second; after a
# discarded warm-up, rounds switch the agent between three settings, interleaved and rotated so that
# no setting always comes first:
#   off     no agent
#   always  counters always on at 10 ms (--duty-on-ms = --duty-period-ms)
#   duty    the agent's default duty cycle (2000 ms of every 60000 ms, 10 ms while on)
#   nvml    (only when SETTINGS names it) the agent at its defaults with the fake sampler: its NVML
#           reads, store and endpoint without any counters, to tell the agent's own cost from the
#           counters' (the first H200 run found the default duty setting 6-10% slower, unexplained)
#   offb    (only when SETTINGS names it) a second round with no agent: its "slowdown" against off is
#           the design's own noise floor (an A/A comparison), OFF_S long
# Each round's throughput is the steps finished between the first progress line after the round
# starts and the last one before it ends. bench/agent/cost_table.py turns the rounds into slowdowns
# and 95% t-intervals.
# Runs on a GPU machine with PyTorch (CUDA). Writes into OUT_DIR: env.txt, train.log (the training's
# progress lines), rounds.txt (each round's setting and wall-clock span), agent-records.txt
# (bench/agent/agent_records.py: what each agent recorded) and cost_table.txt (cost_table.py); the
# agents' NDJSON and stderr stay in WORK.
#
#   bench/agent/cost_rounds.sh OUT_DIR     BUILD=build/release (diescope, diescope-cupti)
#   Env: ROUNDS (3), OFF_S (30), ALWAYS_S (30), DUTY_S (60), NVML_S (60), WARMUP_S (40),
#        SETTINGS ("off always duty"; add nvml and offb for the other two).
set -euo pipefail
out_dir=${1:?usage: bench/agent/cost_rounds.sh OUT_DIR   (BUILD=build folder, default build/release; ROUNDS, SETTINGS, ...)}
cd "$(dirname "$0")/../.."
. bench/common.sh
bench_bin diescope diescope-cupti
python3 -c "import torch" 2>/dev/null || { echo "cost_rounds: PyTorch is not installed (python3 -c 'import torch')" >&2; exit 2; }
bench_out "$out_dir"
bench_work cost-rounds
W=$WORK
ROUNDS=${ROUNDS:-3}; OFF_S=${OFF_S:-30}; ALWAYS_S=${ALWAYS_S:-30}; DUTY_S=${DUTY_S:-60}; NVML_S=${NVML_S:-60}
WARMUP_S=${WARMUP_S:-40}; SETTINGS=${SETTINGS:-off always duty}
read -r -a settings <<< "$SETTINGS"
{
  bench_gpu_env
  python3 -c "import torch; print('torch', torch.__version__)"
  echo "rounds $ROUNDS settings $SETTINGS off_s $OFF_S always_s $ALWAYS_S duty_s $DUTY_S nvml_s $NVML_S warmup_s $WARMUP_S"
} > "$OUT/env.txt" 2>&1

seconds_of() { case $1 in off|offb) echo "$OFF_S" ;; always) echo "$ALWAYS_S" ;; duty) echo "$DUTY_S" ;; nvml) echo "$NVML_S" ;; esac; }
per_round=0
for setting in "${settings[@]}"; do per_round=$((per_round + $(seconds_of "$setting") + 10)); done
total=$((WARMUP_S + ROUNDS * per_round + 30))
python3 workloads/pytorch/resnet50_amp.py --seconds "$total" --warmup 20 --log-every-s 0.5 > "$W/train.log" 2> "$W/train.err" &
TRAIN=$!
for _ in $(seq 1 600); do grep -q "measure start" "$W/train.log" 2>/dev/null && break; sleep 0.2; done
sleep "$WARMUP_S"

wall() { date +%s.%N; }
round() {  # round R SETTING SECONDS
  local r=$1 setting=$2 secs=$3 pid="" rc=0
  case $setting in
    always) diescope agent --no-db --no-listen --ndjson --interval-ms 10 --duty-on-ms 600000 --duty-period-ms 600000 \
              > "$W/agent-$r-$setting.ndjson" 2> "$W/agent-$r-$setting.err" & pid=$! ;;
    duty)   diescope agent --no-db --no-listen --ndjson \
              > "$W/agent-$r-$setting.ndjson" 2> "$W/agent-$r-$setting.err" & pid=$! ;;
    nvml)   diescope agent --no-db --no-listen --ndjson --sampler-arg --fake \
              > "$W/agent-$r-$setting.ndjson" 2> "$W/agent-$r-$setting.err" & pid=$! ;;
  esac
  local start; start=$(wall)
  sleep "$secs"
  local end; end=$(wall)
  if [ -n "$pid" ]; then kill -TERM "$pid"; wait "$pid" || rc=$?; echo "agent $r $setting rc=$rc" >> "$W/agents.txt"; fi
  echo "$r $setting $start $end" >> "$W/rounds.txt"
  sleep 2  # the next round starts after the agent has let go of the counters
}
# Round r starts at setting (r - 1) mod n of the list and goes round it, so each comes first once.
n=${#settings[@]}
for r in $(seq 1 "$ROUNDS"); do
  for k in $(seq 0 $((n - 1))); do
    setting=${settings[$(( (r - 1 + k) % n ))]}
    round "$r" "$setting" "$(seconds_of "$setting")"
  done
done
kill -TERM "$TRAIN" 2>/dev/null || true
wait "$TRAIN" || true
cp "$W/train.log" "$W/rounds.txt" "$OUT/"
python3 bench/agent/agent_records.py "$W" > "$OUT/agent-records.txt"
python3 bench/agent/cost_table.py "$OUT" > "$OUT/cost_table.txt"
cat "$OUT/cost_table.txt"
