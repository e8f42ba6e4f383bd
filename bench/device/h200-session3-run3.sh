#!/usr/bin/env bash
# Session 3, third H200 call. (1) Issue 5: the STREAM form search with the old (write) and new (read)
# L2 flush, a quick calibration with the read flush (its STREAM rates against the counter-implied
# DRAM peak), and the harness's gpu tests. (2) Issue 6: agent cost rounds, off / always-on / the
# agent without counters (nvml) / the default duty cycle, 5 rounds. Everything in $OUT/session3-run3.tgz.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
R=/tmp/s3r3; rm -rf $R; mkdir -p $R/quick
N=$PWD/build/s3-carry
for flush in write read; do timeout 60 $N/stream_variants $((1<<26)) 20 $flush > $R/stream-variants-2e26-$flush.csv 2>&1; done
XDG_DATA_HOME=$R/quick/data timeout 90 $N/diescope calibrate --quick > $R/quick/stdout.txt 2> $R/quick/stderr.txt; echo "quick rc=$?" >> $R/summary.txt
cp $R/quick/data/diescope/calibrations/*.json $R/quick/ 2>/dev/null; rm -rf $R/quick/data
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
ln -sfn "$PWD/build/gpu-carry" /work/main/build/sampler
timeout 120 /work/main/build/sampler/tests/harness/harness_cuda_gpu_test > $R/bench-gpu-test.txt 2>&1; echo "bench gpu test rc=$?" >> $R/summary.txt
BIN=$N OUT=$R/cost ROUNDS=5 OFF_S=15 ALWAYS_S=15 NVML_S=15 DUTY_S=30 WARMUP_S=25 SETTINGS="off always nvml duty" \
  bash bench/agent/cost_rounds.sh > $R/cost.log 2>&1; echo "cost rounds rc=$?" >> $R/summary.txt
tar czf $OUT/session3-run3.tgz -C $R .
cat $R/summary.txt; grep -A3 "STREAM" $R/quick/stdout.txt; grep -E "PASSED|FAILED" $R/bench-gpu-test.txt
for f in write read; do sort -t, -k7 -nr $R/stream-variants-2e26-$f.csv | head -3; done
tail -25 $R/cost.log
