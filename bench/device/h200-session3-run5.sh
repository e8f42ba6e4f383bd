#!/usr/bin/env bash
# Session 3, fifth H200 call (issue 6): 8 more agent cost rounds, off against counters always on at
# 10 ms, 15 s each, after a 25 s warm-up. Writes $OUT/cost-rounds.tgz.
set -u
BIN=$PWD/build/s3-carry OUT=$OUT ROUNDS=8 OFF_S=15 ALWAYS_S=15 WARMUP_S=25 SETTINGS="off always" \
  timeout 420 bash bench/agent/cost_rounds.sh 2>&1 | tail -20
