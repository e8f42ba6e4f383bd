#!/usr/bin/env bash
# Runs every bundled workload on a GPU machine and saves the output in one folder.
# Usage (from the repository root, after building diescope-workload into build/workloads):
#   bash bench/results/workloads/run-h200.sh OUTPUT_DIR
# Writes: env.txt (GPU, driver, clocks, cuBLAS location, date), runs.txt (every command with its
# stdout and stderr), smi_log.csv (nvidia-smi every 200 ms during the runs), sass.txt (the FFMA
# kernel's instruction mix for sm_90), gpu_test.txt (the gpu-labelled test).
set -uo pipefail
out=${1:?output folder}
bin=${BIN:-build/workloads/bin}
mkdir -p "$out"
{
  echo "date (UTC): $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,power.limit --format=csv
  nvidia-smi -q -d CLOCK
  echo "--- cuBLAS on this machine"
  ldconfig -p | grep -i cublas
  ls -l /usr/local/cuda/lib64/libcublas* 2>&1
  echo "--- shared libraries of the binaries"
  ldd "$bin/diescope-workload" "$bin/diescope"
} >"$out/env.txt" 2>&1

nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu \
  --format=csv -lms 200 >"$out/smi_log.csv" 2>&1 &
smi_pid=$!

run() {
  echo "\$ $*"
  echo "# started $(date -u +%H:%M:%S.%N)"
  "$@" 2>&1
  echo "# exit code $?"
  echo
}
{
  run "$bin/diescope-workload" ffma --sms 132 --seconds 4
  run "$bin/diescope-workload" ffma --sms 66 --seconds 4
  run "$bin/diescope-workload" ffma --sms 33 --seconds 4
  run "$bin/diescope-workload" stream --kernel copy --seconds 4
  run "$bin/diescope-workload" stream --kernel triad --seconds 4
  run "$bin/diescope-workload" gemm --seconds 4
  run "$bin/diescope-workload" duty --on-ms 50 --period-ms 100 --seconds 4
  # Through the main binary, which execs diescope-workload beside it.
  run "$bin/diescope" workload ffma --sms 33 --seconds 1
  run "$bin/diescope-workload" ffma --device 7 --seconds 1
} >"$out/runs.txt"
kill "$smi_pid"
{
  echo "--- after the runs"
  nvidia-smi -q -d PERFORMANCE
} >>"$out/env.txt" 2>&1

{
  cuobjdump --dump-sass --gpu-architecture sm_90 "$bin/diescope-workload" >"$out/all.sass" 2>&1
  awk '/Function : .*ffma_kernel/{f=1} f&&/Function : /&&!/ffma_kernel/{f=0} f' "$out/all.sass" >"$out/ffma.sass"
  echo "instructions in the sm_90 FFMA kernel, by opcode:"
  grep -oE '^\s+/\*[0-9a-f]{4}\*/\s+(@!?U?P[0-9T] )?[A-Z0-9_.]+' "$out/ffma.sass" | awk '{print $NF}' | sed 's/\..*//' | sort | uniq -c | sort -rn
  echo "--- the FFMA kernel's main loop (the block that branches back to itself):"
  grep -nE 'BRA|ISETP|IADD|FFMA' "$out/ffma.sass" | grep -vE 'FFMA' | head -20
  rm -f "$out/all.sass"
} >"$out/sass.txt" 2>&1
