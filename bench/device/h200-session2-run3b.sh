#!/usr/bin/env bash
# Session 2's last batch on the GPU machine: diescope run's own CPU at 10 ms over 28 s (schedstat),
# FP64 on the calibration's DFMA kernel beside ncu, then the agent's cost rounds on ResNet-50.
export BIN=$PWD/build/lead-carry
OUT=$OUT bash bench/device/h200-run-cost.sh ffma10long > $OUT/run-cost.log 2>&1
OUT=$OUT bash bench/device/h200-fp64-check.sh > $OUT/fp64.log 2>&1
ROUNDS=3 OFF_S=25 ALWAYS_S=25 DUTY_S=60 WARMUP_S=30 OUT=$OUT bash bench/agent/cost_rounds.sh > $OUT/cost-rounds.log 2>&1
cat $OUT/run-cost.log $OUT/fp64.log $OUT/cost-rounds.log | tail -40
