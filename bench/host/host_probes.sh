#!/usr/bin/env bash
# The host probes on a GPU machine (docs/method.md#host-probes, #stranded-idle-explained):
#   1. input-bound on purpose: ResNet-50 AMP fed by a DataLoader whose augmentation costs about
#      AUG_MS of one core per sample, with 2 workers, then with ENOUGH workers;
#   2. ResNet-50 AMP on synthetic GPU data (workloads/pytorch/resnet50_amp.py), its idle explained;
#   3. the probes' cost: the augmented training with 16 workers under --host-interval-ms 100 and 10;
#      each recording's host_probes note gives the probes' own CPU time (the collector thread's CPU
#      clock around each read) and diescope's whole process CPU time (getrusage), over the run.
#   KERNEL (default 9) is the blur's size (augment_train.py --kernel): smaller is lighter, but on the
#   H200's host one blur of any size costs about 2 ms of a core (3x3: 1.9 ms, 5x5: 2.0-2.7, 9x9: 3-4);
#   MODEL (default resnet50) is augment_train.py --model: resnet152 needs about 2.8 times the GPU work
#   per image, so that ENOUGH workers can feed it; PARTS (default "input enough resnet cost")
#   picks the parts to run; RUN_TIMEOUT (default 120) bounds each run in seconds.
# Usage: bench/host/host_probes.sh OUT_DIR [WORKLOADS_DIR]
#   DIESCOPE (default: diescope on PATH) is the binary; WORKLOADS_DIR holds augment_train.py and
#   resnet50_amp.py (default workloads/pytorch). Writes OUT_DIR/<run>/ (recording, report, log),
#   OUT_DIR/env.txt and OUT_DIR/summary.txt. Reads the GPU's clocks and limits; sets nothing.
set -uo pipefail
OUT=${1:?usage: host_probes.sh OUT_DIR [WORKLOADS_DIR]}
WL=${2:-workloads/pytorch}
DS=${DIESCOPE:-diescope}
SECONDS_RUN=${SECONDS_RUN:-15}
AUG_MS=${AUG_MS:-3}
ENOUGH=${ENOUGH:-14}
KERNEL=${KERNEL:-9}
PARTS=${PARTS:-input enough resnet cost}
has() { [[ " $PARTS " == *" $1 "* ]]; }
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}
{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,power.limit,persistence_mode --format=csv 2>&1
  echo "logical CPUs: $(nproc) (allowed), $(grep -c '^cpu[0-9]' /proc/stat) in /proc/stat"
  python3 -c "import torch, torchvision; print('torch', torch.__version__, 'torchvision', torchvision.__version__)"
  uname -r
  "$DS" --version 2>&1 | head -1
} > "$OUT/env.txt" 2>&1

run() {  # run NAME HOST_MS ARGS...
  local name=$1 host_ms=$2
  shift 2
  local t0 t1
  t0=$(date +%s.%N)
  timeout "${RUN_TIMEOUT:-120}" "$DS" run --window markers --host-interval-ms "$host_ms" --output "$OUT/$name" -- "$@" > "$OUT/$name.log" 2>&1
  echo "rc $?" >> "$OUT/$name.log"
  t1=$(date +%s.%N)
  echo "$name: $(python3 -c "print(round($t1-$t0,1))") s wall" >> "$OUT/summary.txt"
  # PACK_DIR: each run in an archive of its own as soon as it ends (a device run brings back few files).
  if [ -n "${PACK_DIR:-}" ]; then
    tar -C "$OUT" -czf "$PACK_DIR/$name.tgz" "$name" "$name.log"
    cp "$OUT/summary.txt" "$OUT/env.txt" "$PACK_DIR/"
  fi
}

aug=(--augment-ms "$AUG_MS" --kernel "$KERNEL" --seconds "$SECONDS_RUN" --model "${MODEL:-resnet50}")
has input && run input-bound-2w 100 python3 "$WL/augment_train.py" --workers 2 "${aug[@]}"
has enough && run enough-${ENOUGH}w 100 python3 "$WL/augment_train.py" --workers "$ENOUGH" "${aug[@]}"
has resnet && run resnet50-amp 100 python3 "$WL/resnet50_amp.py" --steps 150
if has cost; then
  for ms in 100 10; do
    run cost-16w-host${ms}ms "$ms" python3 "$WL/augment_train.py" --workers 16 "${aug[@]}"
  done
fi
for d in "$OUT"/*/; do
  n=$(basename "$d")
  {
    echo "== $n"
    grep -h '^{' "$OUT/$n.log" | tail -1
    grep -h "host_probes" "$d"/gpu*.dsrec | grep -v '^hstream' | cut -c1-400
    grep -h -A12 -i "idle" "$OUT/$n.log" | grep -i "why\|idle\|GPU-Util\|DIE-Util" | head -8
  } >> "$OUT/summary.txt"
done
ls -la "$OUT"/*/ >> "$OUT/summary.txt"
if [ -n "${PACK_DIR:-}" ]; then cp "$OUT/summary.txt" "$PACK_DIR/"; fi
