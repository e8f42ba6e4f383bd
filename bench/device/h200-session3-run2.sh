#!/usr/bin/env bash
# Session 3, second H200 call (issue 5): the calibration with the wgmma tensor step and the one-pass
# STREAM forms (bench/device/h200-calibrate.sh), the STREAM form search again with the 256-byte
# L2-fetch variants, then the tests labelled gpu, run from their binaries (build/gpu-carry: the
# binaries the tests find through their build folder, which is linked to build/sampler here).
# Everything goes into $OUT/session3-run2.tgz.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
R=/tmp/s3r2; rm -rf $R /tmp/co; mkdir -p $R
BIN=$PWD/build/s3-carry OUT=/tmp/co RESULT_TAR=$R/calibrate-results.tar.gz bash bench/device/h200-calibrate.sh > $R/calibrate.log 2>&1
timeout 60 build/s3-carry/stream_variants $((1<<26)) 20 > $R/stream-variants-2e26.csv 2>&1
# The tests find their binaries and fixtures by the paths they were built with.
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
ln -sfn "$PWD/build/gpu-carry" /work/main/build/sampler
nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.mem --format=csv > $R/gpu-tests.txt 2>&1
for t in collect/nvml_gpu_test collect/sampler_gpu_test workloads/workloads_gpu_test bench/harness_cuda_gpu_test calibrate/calibrate_gpu_test; do
  echo "== $t" >> $R/gpu-tests.txt
  timeout 150 /work/main/build/sampler/tests/$t >> $R/gpu-tests.txt 2>&1; echo "rc=$?" >> $R/gpu-tests.txt
done
tar czf $OUT/session3-run2.tgz -C $R .
cat $R/calibrate.log | tail -12; grep -E "^== |rc=|PASSED|FAILED|SKIPPED" $R/gpu-tests.txt
sort -t, -k7 -nr $R/stream-variants-2e26.csv | head -6
