#!/usr/bin/env bash
# Session 3, first H200 call; binaries in build/s3-carry (this session's source) and build/lead-carry
# (the build behind bench/results/run/2026-11-29-h200-cost-schedstat). Writes under $OUT:
#  nvml-call-cost.txt      time per NVML read through diescope's adapter (issue 3: the run's own CPU)
#  runcost-{A,B1,B2}/      `diescope run` CPU at 10 ms under FFMA: A reads NVML every 100 ms but the
#                          power limit; B reads GPU-Util, engines, power and processes once a second
#  stream-variants-*.csv   STREAM triad forms and grids (issue 5: triad at 90% of the implied peak)
#  wgmma/                  the tensor step's wgmma kernel under `diescope run` and under ncu
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}
N=$PWD/build/s3-carry
{ date -u +"date %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit,persistence_mode --format=csv
} > $OUT/env.txt 2>&1
$N/nvml_call_cost 0 500 > $OUT/nvml-call-cost.txt 2>&1
for v in A B1 B2; do
  bin=$N; [ $v = A ] && bin=$PWD/build/lead-carry
  mkdir -p $OUT/runcost-$v
  BIN=$bin OUT=$OUT/runcost-$v bash bench/device/h200-run-cost.sh ffma10mid > $OUT/runcost-$v/log.txt 2>&1
done
timeout 150 $N/stream_variants $((1<<26)) 20 > $OUT/stream-variants-2e26.csv 2>&1
timeout 100 $N/stream_variants $((1<<28)) 5 > $OUT/stream-variants-2e28.csv 2>&1
BIN=$N OUT=$OUT/wgmma bash -c '
  W=$OUT; mkdir -p $W/run; export PATH=$BIN:$PATH; PLAN=$PWD/bench/device/plans/wgmma.json
  timeout 120 diescope run --report $W/run -- diescope-workload calibrate --plan $PLAN > $W/run/stdout.txt 2> $W/run/stderr.txt
  echo "run rc=$?" >> $W/summary.txt
  P=.avg.pct_of_peak_sustained_elapsed
  timeout 120 ncu --clock-control none --kernel-name regex:wgmma --launch-skip 3 --launch-count 1 --csv \
    --metrics "sm__pipe_tensor_cycles_active$P,sm__pipe_tensor_op_hmma_cycles_active$P,sm__inst_executed_pipe_tensor.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_gmma.sum,sm__cycles_elapsed.avg.per_second,gpu__time_duration.sum" \
    diescope-workload calibrate --plan $PLAN > $W/ncu.csv 2> $W/ncu.stderr
  echo "ncu rc=$?" >> $W/summary.txt
  find $W -name samples.csv -o -name "*.html" -o -name "*trace*" | xargs rm -f'
cat $OUT/nvml-call-cost.txt | tail -15
for v in A B1 B2; do tail -3 $OUT/runcost-$v/log.txt; done
sort -t, -k7 -nr $OUT/stream-variants-2e26.csv | head -8; sort -t, -k7 -nr $OUT/stream-variants-2e28.csv | head -4
cat $OUT/wgmma/summary.txt; grep -i "tensor" $OUT/wgmma/run/stdout.txt | head; grep -v "^==" $OUT/wgmma/ncu.csv | cut -c1-250 | tail -8
grep '"step"' $OUT/wgmma/run/stdout.txt | cut -c1-400
