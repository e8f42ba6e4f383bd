#!/usr/bin/env bash
# The bundled workloads' own figures on a GPU: each of `diescope-workload ffma|stream|gemm|duty` counts
# the work it did, times it with CUDA events and reads the SM clock it ran at (FFMA on 132, 66 and 33
# SMs, STREAM copy and triad, a cuBLAS bf16 GEMM, a 50/100 ms duty cycle), plus `diescope workload`
# through the main binary and a bad device index. Also the FFMA kernel's sm_90 instructions (its
# main loop), nvidia-smi every 200 ms through the runs, and the gpu-labelled workloads test. Runs on
# a GPU machine. Writes into OUT_DIR: env.txt (GPU, driver, clocks before, clock-event reasons after,
# where cuBLAS is), runs.txt (every command with its stdout and stderr), smi_log.csv, sass.txt (the
# FFMA kernel's instructions by opcode and its main loop), gpu_test.txt.
#
#   bench/workloads/known_work.sh OUT_DIR     BUILD=build/release (diescope, diescope-workload; tests/workloads/workloads_gpu_test)
set -euo pipefail
out_dir=${1:?usage: bench/workloads/known_work.sh OUT_DIR   (BUILD=build folder, default build/release)}
cd "$(dirname "$0")/../.."
. bench/common.sh
bench_bin diescope diescope-workload
gpu_test=${BUILD:-build/release}/tests/workloads/workloads_gpu_test
bench_out "$out_dir"
bench_work workloads
{
  echo "date (UTC): $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,power.limit --format=csv
  nvidia-smi -q -d CLOCK
  echo "--- cuBLAS on this machine"
  ldconfig -p | grep -i cublas || true
  ls -l /usr/local/cuda/lib64/libcublas* 2>&1 || true
  echo "--- shared libraries of the binaries"
  ldd "$BIN/diescope-workload" "$BIN/diescope"
} > "$OUT/env.txt" 2>&1

nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu \
  --format=csv -lms 200 > "$OUT/smi_log.csv" 2>&1 &
smi_pid=$!

run() {
  local rc=0
  echo "\$ $*"
  echo "# started $(date -u +%H:%M:%S.%N)"
  "$@" 2>&1 || rc=$?
  echo "# exit code $rc"
  echo
}
{
  run diescope-workload ffma --sms 132 --seconds 4
  run diescope-workload ffma --sms 66 --seconds 4
  run diescope-workload ffma --sms 33 --seconds 4
  run diescope-workload stream --kernel copy --seconds 4
  run diescope-workload stream --kernel triad --seconds 4
  run diescope-workload gemm --seconds 4
  run diescope-workload duty --on-ms 50 --period-ms 100 --seconds 4
  # Through the main binary, which execs diescope-workload beside it.
  run diescope workload ffma --sms 33 --seconds 1
  run diescope-workload ffma --device 7 --seconds 1
} > "$OUT/runs.txt"
kill "$smi_pid"
{ echo "--- after the runs"; nvidia-smi -q -d PERFORMANCE; } >> "$OUT/env.txt" 2>&1

cuobjdump --dump-sass --gpu-architecture sm_90 "$BIN/diescope-workload" > "$WORK/all.sass" 2>&1
awk '/Function : .*ffma_kernel/{f=1} f&&/Function : /&&!/ffma_kernel/{f=0} f' "$WORK/all.sass" > "$WORK/ffma.sass"
{
  echo "instructions in the sm_90 FFMA kernel, by opcode:"
  grep -oE '^\s+/\*[0-9a-f]{4}\*/\s+(@!?U?P[0-9T] )?[A-Z0-9_.]+' "$WORK/ffma.sass" | awk '{print $NF}' | sed 's/\..*//' | sort | uniq -c | sort -rn
  python3 - "$WORK/ffma.sass" <<'PY'
import collections, re, sys
ins = []
for line in open(sys.argv[1]):
    m = re.match(r"\s+/\*([0-9a-f]{4})\*/\s+(?:@!?U?P[0-9T] )?([A-Z0-9_.]+)([^;]*);", line)
    if m:
        ins.append((int(m.group(1), 16), m.group(2).split(".")[0], m.group(3)))
for addr, op, rest in ins:
    t = re.search(r"0x([0-9a-f]+)", rest) if op == "BRA" else None
    if t and int(t.group(1), 16) < addr:
        lo = int(t.group(1), 16)
        body = [o for a, o, _ in ins if lo <= a <= addr]
        counts = collections.Counter(body)
        print(f"--- the main loop, 0x{lo:04x} to 0x{addr:04x} (the block that branches back to itself): "
              f"{len(body)} instructions: " + ", ".join(f"{n} {o}" for o, n in counts.most_common()))
PY
} > "$OUT/sass.txt"
if [ -x "$gpu_test" ]; then
  rc=0; DIESCOPE_WORKLOAD_BIN=$BIN/diescope-workload "$gpu_test" > "$OUT/gpu_test.txt" 2>&1 || rc=$?
  echo "rc=$rc" >> "$OUT/gpu_test.txt"
else
  echo "no $gpu_test: build the workloads_gpu_test target for the gpu-labelled test" > "$OUT/gpu_test.txt"
fi
cat "$OUT/sass.txt"
