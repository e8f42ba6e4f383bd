#!/usr/bin/env bash
# Session 3, fourth H200 call (issue 5): bench/device/h200-calibrate.sh with this session's build
# (wgmma tensor step, one-pass STREAM forms, read-based L2 flush). Writes $OUT/calibrate-results.tar.gz.
set -u
BIN=$PWD/build/s3-carry OUT=/tmp/co4 RESULT_TAR=$OUT/calibrate-results.tar.gz bash bench/device/h200-calibrate.sh 2>&1 | tail -8
grep -A12 "^  unit" /tmp/co4/results/full.stdout; grep STREAM /tmp/co4/results/full.stdout
