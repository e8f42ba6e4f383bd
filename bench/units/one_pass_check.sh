#!/usr/bin/env bash
# The unit tables against the real device's counter availability, and NVML on the same GPU: whether
# the device's own table fits one counter pass (`diescope units --check-passes --device 0`, and each
# counter alone), what the plain FMA and FP64 counters would cost there, the NVML adapter's probe
# (bound symbols, identity, clocks, limit, engines, processes, GPU-Util samples), and the
# gpu-labelled NVML test. Needs no workload: the GPU stays idle. Runs on a GPU machine. Writes into
# OUT_DIR: env.txt (with CUPTI's version and the chip name it gives the device), passes-h200.txt (the
# table's passes together and each counter alone, then the alternatives) and nvml-h200.txt (the
# probe, then the test).
#
#   bench/units/one_pass_check.sh OUT_DIR     BUILD=build/release (diescope, diescope-cupti; tests/collect/nvml_gpu_test)
set -euo pipefail
out_dir=${1:?usage: bench/units/one_pass_check.sh OUT_DIR   (BUILD=build folder, default build/release)}
cd "$(dirname "$0")/../.."
. bench/common.sh
bench_bin diescope diescope-cupti
nvml_test=${BUILD:-build/release}/tests/collect/nvml_gpu_test
[ -x "$nvml_test" ] || { echo "one_pass_check: no $nvml_test; build the nvml_gpu_test target first" >&2; exit 2; }
bench_out "$out_dir"
bench_work one-pass-check
P=.avg.pct_of_peak_sustained_elapsed
table=$(diescope-cupti device-chip --device 0 | awk '$1 == "chip" {print $2}')
case $table in
  GH100) table=hopper-gh100 ;;
  *) echo "one_pass_check: the alternatives below are GH100's; chip $table" >&2; exit 2 ;;
esac
{ bench_gpu_env; diescope-cupti version; diescope-cupti device-chip --device 0; } > "$OUT/env.txt" 2>&1
diescope units --counters "$table" > "$WORK/table.txt"
sed "s|^TPC.TriageCompute.sm__inst_executed_pipe_fma_realtime$P\$|sm__inst_executed_pipe_fma$P|" "$WORK/table.txt" > "$WORK/plainfma.txt"
{
  echo "## diescope units --check-passes --device 0"
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  echo '$ diescope units --check-passes --device 0'
  rc=0; diescope units --check-passes --device 0 || rc=$?; echo "rc=$rc"
  echo
  echo "## diescope-cupti passes --device 0 --each --metrics-file <the $table table>"
  diescope-cupti passes --device 0 --each --metrics-file "$WORK/table.txt" || true
  echo
  echo "## table with the plain FMA counter"; diescope-cupti passes --device 0 --metrics-file "$WORK/plainfma.txt" || true
  echo "## plain FP64 alone"; diescope-cupti passes --device 0 "sm__pipe_fp64_cycles_active$P" || true
} > "$OUT/passes-h200.txt" 2>&1
{
  echo "## diescope units --nvml-probe --probe-seconds 3"
  rc=0; diescope units --nvml-probe --probe-seconds 3 || rc=$?; echo "rc=$rc"
  echo
  echo "## tests/collect/nvml_gpu_test"
  rc=0; "$nvml_test" || rc=$?; echo "rc=$rc"
} > "$OUT/nvml-h200.txt" 2>&1
cat "$OUT/passes-h200.txt"
