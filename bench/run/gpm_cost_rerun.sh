#!/usr/bin/env bash
# What the first GPM batch (bench/run/gpm_device.sh) left open, in one short device call
# (docs/method.md#gpm-as-a-second-chip-source, docs/agent.md#duty-cycles-and-records): gpm_device.sh's
# parts beside-ncu-top, host (when HOST_OUT is set: bench/host/host_probes.sh with PARTS, KERNEL and
# ENOUGH, the "enough workers" contrast), vs-pm (DFMA and ResNet-50 AMP for 3 s) and cost (the cuBLAS
# GEMM's cost of always-on counters, COST_GEMM_ONLY) with this batch's settings.
#
#   BUILD=build folder (bin/ with diescope, diescope-cupti, diescope-workload, gpm_probe)
#   bench/run/gpm_cost_rerun.sh OUT_DIR     COST_BUDGET_S (default 50); PACK_TO=FILE.tgz packs OUT_DIR;
#   VS_PM=names of the vs-pm part (default "dfma resnet50"; empty skips it)
GPM_PARTS="beside-ncu-top host vs-pm cost" WORK_NAME=gpm-rerun VS_PM=${VS_PM-dfma resnet50} VS_PM_TAIL=6 \
  RESNET_SECONDS=3 COST_GEMM_ONLY=1 COST_BUDGET_S=${COST_BUDGET_S:-50} COST_SLACK_S=60 \
  exec bash "$(dirname "$0")/gpm_device.sh" "$@"
