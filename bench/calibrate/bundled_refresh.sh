#!/usr/bin/env bash
# The data bundled under data/ made again on one GPU, in one call: the agent's pci_bus_id label
# against nvidia-smi's bus id; the bundled recordings of data/recordings/h200/ with the commands that
# first made them (bench/run/workload_headlines.sh: FFMA on 132, 66 and 33 SMs, STREAM copy and
# triad, a cuBLAS bf16 GEMM, a 50/100 ms duty cycle, ResNet-50 AMP training; bench/host/host_probes.sh:
# the input-bound training with 2 workers); and `diescope calibrate --quick`, whose ceilings are set
# beside the bundled full calibration's. Clocks, limits and modes are read, never set.
#
#   bench/calibrate/bundled_refresh.sh OUT_DIR     BUILD=build/ci (diescope, diescope-cupti, diescope-workload)
#
# PARTS (default "pci workloads resnet50 calibrate input") picks the parts, run in that order.
# DEADLINE_S (default 0: none) skips a step whose usual length would end it more than DEADLINE_S
# seconds after the script started, so that a device call with a fixed budget ends with what matters
# most done; summary.txt names every step skipped. ROOT (default: this script's repository) is where
# workloads/pytorch is read from.
# Writes into OUT_DIR: env.txt; summary.txt (each step's exit code and wall time); pci.txt (the
# agent's label, nvidia-smi's bus id, each recording's meta); headlines.txt (each run's headline and
# the workload's own line); calibrate-quick.txt and calibration-quick.json; recordings.tgz (NAME.dsrec
# and NAME.report.json for each recording made).
set -uo pipefail
out_dir=${1:?usage: bench/calibrate/bundled_refresh.sh OUT_DIR   (BUILD=build folder, default build/ci)}
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$ROOT" || exit 2
BUILD=${BUILD:-build/ci}
. bench/common.sh
bench_bin diescope diescope-cupti diescope-workload
bench_out "$out_dir"
bench_work bundled-refresh
PARTS=${PARTS:-pci workloads resnet50 calibrate input}
DEADLINE_S=${DEADLINE_S:-0}
has() { [[ " $PARTS " == *" $1 "* ]]; }
t0=$(date +%s)
mkdir -p "$WORK/rec"
{
  bench_gpu_env
  nvidia-smi --query-gpu=pci.bus_id,uuid,power.draw --format=csv 2>&1 || true
  python3 -c "import torch, torchvision; print('torch', torch.__version__, 'torchvision', torchvision.__version__)" 2>&1
  echo "nproc $(nproc)"
} > "$OUT/env.txt"
: > "$OUT/summary.txt"
: > "$OUT/headlines.txt"

# fits NAME SECONDS: whether a step that usually takes SECONDS still ends inside DEADLINE_S.
fits() {
  local now=$(($(date +%s) - t0))
  if [ "$DEADLINE_S" -gt 0 ] && [ $((now + $2)) -gt "$DEADLINE_S" ]; then
    echo "$1 skipped at ${now} s: needs about $2 s, deadline ${DEADLINE_S} s" >> "$OUT/summary.txt"
    return 1
  fi
}

# rec NAME SECONDS [RUN OPTIONS...] -- CMD...: one `diescope run --window markers` (stopped after
# three times its usual SECONDS); its headline goes to headlines.txt, its recording and report.json
# to WORK/rec as NAME.dsrec and NAME.report.json, packed into OUT/recordings.tgz.
rec() {
  local name=$1 usual=$2 rc=0 opts=() s
  shift 2
  while [ "$1" != "--" ]; do opts+=("$1"); shift; done
  shift
  fits "$name" "$usual" || return 0
  s=$(date +%s.%N)
  timeout $((usual * 3)) diescope run --window markers "${opts[@]}" --output "$WORK/$name" -- "$@" \
    > "$WORK/$name.stdout" 2> "$WORK/$name.stderr" < /dev/null || rc=$?
  echo "$name rc=$rc $(python3 -c "print(round($(date +%s.%N)-$s,1))") s" >> "$OUT/summary.txt"
  { echo "== $name: diescope run --window markers ${opts[*]} -- $*"; cat "$WORK/$name.stdout"
    tail -5 "$WORK/$name.stderr"; } >> "$OUT/headlines.txt"
  cp "$WORK/$name/gpu0.dsrec" "$WORK/rec/$name.dsrec" 2>/dev/null || true
  cp "$WORK/$name/gpu0.dsrec.report/report.json" "$WORK/rec/$name.report.json" 2>/dev/null ||
    cp "$WORK/$name"/*/report.json "$WORK/rec/$name.report.json" 2>/dev/null || true
  # Packed after every run, so that a call stopped at its time limit still brings back what was made.
  tar -C "$WORK/rec" -czf "$OUT/recordings.tgz" .
}

if has pci && fits pci 10; then
  # The agent on the real GPU, scraped once its GPU gauges appear; then stopped before any run.
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  diescope agent --no-db --listen "127.0.0.1:$port" --host-interval-ms 0 > "$WORK/agent.log" 2>&1 &
  agent=$!
  # One scrape every 0.25 s for at most 8 s, until a line carries the pci_bus_id label.
  python3 - "$port" > "$WORK/metrics.txt" 2>/dev/null <<'PY'
import sys, time, urllib.request
text, end = "", time.time() + 8
while time.time() < end and "pci_bus_id=" not in text:
    time.sleep(0.25)
    try:
        text = urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/metrics", timeout=2).read().decode()
    except OSError:
        pass
sys.stdout.write(text)
PY
  kill "$agent" 2>/dev/null; wait "$agent" 2>/dev/null
  {
    echo "nvidia-smi pci.bus_id: $(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader 2>&1)"
    echo "nvidia-smi -q: $(nvidia-smi -q 2>/dev/null | grep -m1 -i 'Bus Id' | sed 's/^ *//')"
    echo "agent labels: $(grep -o 'pci_bus_id="[^"]*"' "$WORK/metrics.txt" | sort | uniq -c | tr -s ' ' | tr '\n' ';')"
    echo "agent gauge line: $(grep -m1 '^diescope_die_util_percent' "$WORK/metrics.txt")"
    echo "agent log tail:"; tail -3 "$WORK/agent.log"
  } > "$OUT/pci.txt"
  echo "pci rc=0 $(($(date +%s) - t0)) s since start" >> "$OUT/summary.txt"
fi

if has workloads; then
  rec ffma132 5 -- diescope workload ffma --sms 132 --seconds 3
  rec ffma66 5 -- diescope workload ffma --sms 66 --seconds 3
  rec ffma33 5 -- diescope workload ffma --sms 33 --seconds 3
  rec copy 5 -- diescope workload stream --kernel copy --seconds 3
  rec triad 5 -- diescope workload stream --kernel triad --seconds 3
  rec gemm 6 -- diescope workload gemm --seconds 3
  rec duty 5 -- diescope workload duty --on-ms 50 --period-ms 100 --seconds 3
fi
has resnet50 && rec resnet50 22 -- python3 workloads/pytorch/resnet50_amp.py --seconds 8 --warmup 10

if has calibrate && fits calibrate 40; then
  s=$(date +%s)
  rc=0
  timeout 60 diescope calibrate --quick --output "$OUT/calibration-quick.json" \
    > "$OUT/calibrate-quick.txt" 2> "$WORK/calibrate.stderr" < /dev/null || rc=$?
  tail -3 "$WORK/calibrate.stderr" >> "$OUT/calibrate-quick.txt"
  echo "calibrate-quick rc=$rc $(($(date +%s) - s)) s" >> "$OUT/summary.txt"
fi

has input && rec input-bound-2w 40 --host-interval-ms 100 -- python3 workloads/pytorch/augment_train.py --workers 2 \
  --augment-ms 3 --kernel 9 --seconds 10 --model resnet50

# Each recording's GPU as its meta says it (the pci_bus_id every recording now carries).
for f in "$WORK"/rec/*.dsrec; do
  [ -e "$f" ] || continue
  echo "$(basename "$f") $(sed -n 2p "$f" | grep -o '"pci_bus_id":"[^"]*"') $(wc -c < "$f") bytes" >> "$OUT/pci.txt"
done
tar -C "$WORK/rec" -czf "$OUT/recordings.tgz" . 2>/dev/null
echo "total $(($(date +%s) - t0)) s" >> "$OUT/summary.txt"
cat "$OUT/summary.txt"
