#!/usr/bin/env bash
# Where diescope run's own CPU goes: NVML's cost per read through diescope's adapter, then the run's
# CPU at 10 ms with the build before (A: NVML reads every 100 ms but the power limit) and after (B:
# GPU-Util samples, engines, power and processes once a second) the change in read cadence.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}
mkdir -p $OUT/a $OUT/b
build/lead-carry/nvml_call_cost 0 500 > $OUT/nvml-call-cost.txt 2>&1
BIN=$PWD/build/lead-carry OUT=$OUT/a bash bench/device/h200-run-cost.sh ffma10mid > $OUT/a.log 2>&1
BIN=$PWD/build/lead-carry/b OUT=$OUT/b bash bench/device/h200-run-cost.sh ffma10mid > $OUT/b.log 2>&1
cat $OUT/nvml-call-cost.txt $OUT/a.log $OUT/b.log
