#!/usr/bin/env bash
# diescope on two GPUs of one host (docs/method.md#several-gpus), around a two-process PyTorch DDP
# training (bench/multi_gpu/ddp_train.py, NCCL, no NVLink multicast):
#   1. run        both GPUs: a recording and report per GPU, a headline per GPU, the summary (gpus.json)
#   2. run --gpus 1                   only GPU 1 is measured
#   3. run, one busy GPU              the training on GPU 0 alone; the summary must say only GPU 0 was busy
#   4. run --source gpm               NVLink bytes from GPM beside the gradients' all-reduce bytes
#   5. bench --rounds 3               per-GPU rows
#   6. agent                          /metrics scraped during the training: every series with gpu= and UUID=
#   7. top --once                     both GPUs in one frame, during another training (after the agent:
#                                     one PM-sampling session per GPU at a time)
# Needs at least two GPUs, PyTorch in python3, and a build with diescope and diescope-cupti; it stops
# at once, exit 2, with the cause, where any is missing. Clocks, power limits and modes are read,
# never set. Every step runs under `timeout`.
#
#   bench/multi_gpu/ddp_two_gpus.sh OUT_DIR     BUILD=build folder with bin/diescope, bin/diescope-cupti
#                                              SECONDS_PER_RUN=timed training seconds per run (default 20)
#                                              TRAIN=another training command (word-split; it is given
#                                              --seconds S and --world-size 1 as ddp_train.py is); with
#                                              TRAIN set, PyTorch is not checked. For trying the script
#                                              on the CPU stand-in host (bench/results/multi-gpu/...).
# Writes OUT_DIR/outputs.txt (each step's command, exit code and diescope output under '## ' headings)
# and OUT_DIR/table.csv (one row per GPU and step: DIE-Util, GPU-Util, limiting unit, NVLink rates).
set -euo pipefail
out_dir=${1:?usage: bench/multi_gpu/ddp_two_gpus.sh OUT_DIR   (BUILD=build folder)}
cd "$(dirname "$0")/../.."
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
secs=${SECONDS_PER_RUN:-20}

die() { echo "ddp_two_gpus.sh: $1" >&2; echo "fix: $2" >&2; exit 2; }

# Preconditions first, so that a machine without them fails in a second, not minutes in.
command -v nvidia-smi > /dev/null || die "no nvidia-smi: this machine has no NVIDIA driver" "run on the two-GPU machine"
gpus=$(timeout 30 nvidia-smi -L 2> /dev/null | grep -c '^GPU ' || true)
[ "${gpus:-0}" -ge 2 ] || die "nvidia-smi lists ${gpus:-0} GPU(s); this measures two" "run on a host with two GPUs (nvidia-h200-x2)"
if [ -z "${TRAIN:-}" ]; then
  timeout 120 python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.device_count() >= 2 else 1)' \
    || die "python3's PyTorch does not see two GPUs" "install PyTorch with CUDA, or check CUDA_VISIBLE_DEVICES"
fi
. bench/common.sh
bench_bin diescope diescope-cupti
bench_out "$out_dir"
bench_work multi-gpu
outputs="$OUT/outputs.txt"
table="$OUT/table.csv"
if [ -n "${TRAIN:-}" ]; then
  read -r -a train <<< "$TRAIN"
  train+=(--seconds "$secs")
else
  train=(python3 bench/multi_gpu/ddp_train.py --seconds "$secs")
fi
{ echo '## machine'; bench_gpu_env; nvidia-smi topo -m 2>&1 || true; } > "$outputs"
echo "step,gpu,uuid,span,gpu_util_pct,die_util_pct,limiting_unit,busy,nvlink_tx_bytes_per_s,nvlink_rx_bytes_per_s" > "$table"

# rows STEP DIR: one table row per GPU (bench/multi_gpu/gpu_rows.py).
rows() { python3 bench/multi_gpu/gpu_rows.py "$1" "$2" >> "$table"; }

# step NAME TIMEOUT ARGS...: runs `diescope ARGS` (stdin closed), its output under '## NAME'.
step() {
  local name=$1 limit=$2 rc=0; shift 2
  timeout "$limit" diescope "$@" > "$WORK/$name.stdout" 2> "$WORK/$name.stderr" < /dev/null || rc=$?
  { echo "## $name"; echo "\$ diescope $*"; echo "exit $rc"; grep -v '^\s*$' "$WORK/$name.stdout" | grep -v '^diescope: measure' | tail -80
    echo "-- stderr (last lines)"; grep -v '^\s*$' "$WORK/$name.stderr" | tail -8; } >> "$outputs"
  return 0
}

step both 600 run --window markers --output "$WORK/both" -- "${train[@]}"
rows both "$WORK/both" || true
step gpu1-only 600 run --window markers --gpus 1 --output "$WORK/gpu1" -- "${train[@]}"
rows gpu1-only "$WORK/gpu1" || true
step one-busy 600 run --window markers --output "$WORK/one-busy" -- "${train[@]}" --world-size 1
rows one-busy "$WORK/one-busy" || true
step gpm 600 run --source gpm --interval-ms 100 --window markers --output "$WORK/gpm" -- "${train[@]}"
rows gpm "$WORK/gpm" || true
step bench 900 bench --rounds 3 --output "$WORK/bench" -- "${train[@]}" --seconds 10

# The agent beside a training: counters on 2 s of every 4 s, /metrics scraped before the training ends.
port=9477
timeout 300 diescope agent --no-db --listen "127.0.0.1:$port" --duty-on-ms 2000 --duty-period-ms 4000 \
  --drain-ms 500 > "$WORK/agent.stdout" 2> "$WORK/agent.stderr" < /dev/null &
agent=$!
timeout 300 "${train[@]}" > "$WORK/agent-train.log" 2>&1 &
trainer=$!
sleep $((secs / 2 + 10))
timeout 10 curl -s "http://127.0.0.1:$port/metrics" > "$WORK/metrics.txt" || true
wait "$trainer" || true
kill -TERM "$agent" 2> /dev/null || true
wait "$agent" || true
{ echo '## agent /metrics (per-GPU series of DIE-Util and GPU-Util)'
  grep -E '^diescope_(die_util|gpu_util)_percent\{' "$WORK/metrics.txt" || echo "(none: see $WORK/agent.stderr)"
  echo "diescope_ series with a gpu label: $(grep -E '^diescope_' "$WORK/metrics.txt" | grep -c 'gpu="' || true)"
  echo "diescope_ series without one (agent_info and duty settings only): $(grep -E '^diescope_' "$WORK/metrics.txt" | grep -vc 'gpu="' || true)"
  tail -5 "$WORK/agent.stderr"; } >> "$outputs"

# top after the agent has stopped (one PM-sampling session per GPU at a time), during its own training.
timeout 300 "${train[@]}" --seconds 15 > "$WORK/top-train.log" 2>&1 &
trainer=$!
sleep 12
timeout 60 diescope top --once > "$WORK/top.txt" 2>&1 < /dev/null || echo "top exit $?" >> "$WORK/top.txt"
wait "$trainer" || true
{ echo '## top --once during the training'; cat "$WORK/top.txt"; } >> "$outputs"
echo "wrote $outputs and $table"
