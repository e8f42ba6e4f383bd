#!/usr/bin/env bash
# Records every bundled workload and a PyTorch ResNet-50 AMP training loop with `diescope run` on
# the GPU machine, then reads the same kernels with Nsight Compute's plain counters.
# Run from the repository root with the binaries in $BIN (default build/lead-carry); writes to $OUT.
set -u
BIN=${BIN:-$PWD/build/lead-carry}
OUT=${OUT:-/tmp/fixtures-out}
export PATH=$BIN:$PATH
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p "$OUT"
{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit --format=csv
  diescope --version
} > "$OUT/env.txt" 2>&1

# rec NAME -- CMD...: one measured run; keeps stdout (headline), stderr, the recording and report.json.
rec() {
  local name=$1; shift; shift
  local dir="$OUT/$name"
  mkdir -p "$dir"
  timeout 120 diescope run --window markers --report "$dir" -- "$@" > "$dir/stdout.txt" 2> "$dir/stderr.txt" < /dev/null
  echo "$name rc=$?" >> "$OUT/summary.txt"
  rm -f "$dir"/*.report/samples.csv "$dir"/*.report/*.html "$dir"/*.report/*trace*
}

rec ffma132 -- diescope workload ffma --sms 132 --seconds 3
rec ffma66 -- diescope workload ffma --sms 66 --seconds 3
rec ffma33 -- diescope workload ffma --sms 33 --seconds 3
rec copy -- diescope workload stream --kernel copy --seconds 3
rec triad -- diescope workload stream --kernel triad --seconds 3
rec gemm -- diescope workload gemm --seconds 3
rec duty -- diescope workload duty --on-ms 50 --period-ms 100 --seconds 3
rec resnet50 -- python3 workloads/pytorch/resnet50_amp.py --seconds 8 --warmup 10

# Nsight Compute on one launch of each kernel (kernel replay, unmodified clocks), plain counters.
P=.avg.pct_of_peak_sustained_elapsed
NCU_METRICS="sm__inst_executed_pipe_fma$P,sm__inst_executed_pipe_fmaheavy$P,sm__inst_executed_pipe_fmalite$P,sm__pipe_tensor_cycles_active$P,sm__pipe_fp64_cycles_active$P,l1tex__data_pipe_lsu_wavefronts$P,lts__t_bytes.sum.pct_of_peak_sustained_elapsed,dram__bytes.sum.pct_of_peak_sustained_elapsed,dram__bytes.sum.per_second,sm__cycles_active$P,sm__warps_active.avg.pct_of_peak_sustained_active,gr__cycles_active$P,sm__cycles_elapsed.avg.per_second"
ncu_one() {
  local name=$1; shift
  timeout 90 ncu --clock-control none --launch-skip 3 --launch-count 1 --csv --metrics "$NCU_METRICS" "$@" \
    > "$OUT/ncu-$name.csv" 2> "$OUT/ncu-$name.stderr"
  echo "ncu $name rc=$?" >> "$OUT/summary.txt"
}
ncu_one ffma132 diescope-workload ffma --sms 132 --seconds 1
ncu_one ffma33 diescope-workload ffma --sms 33 --seconds 1
ncu_one copy diescope-workload stream --kernel copy --seconds 1
ncu_one gemm diescope-workload gemm --seconds 1
# Repeated rounds on the steady window (issue 4): statistics across rounds, rounds left out named.
mkdir -p "$OUT/bench-stream"
timeout 150 diescope bench --rounds 5 --report "$OUT/bench-stream" --workload stream -- --kernel copy --seconds 2 \
  > "$OUT/bench-stream/stdout.txt" 2> "$OUT/bench-stream/stderr.txt" < /dev/null
echo "bench stream rc=$?" >> "$OUT/summary.txt"
find "$OUT/bench-stream" -name samples.csv -delete
cat "$OUT/summary.txt"
