#!/usr/bin/env bash
# The device batch that wrote this folder (run from the repository root on the H200 machine, with
# stripped copies of diescope, diescope-cupti and nvml_gpu_test carried in build-units-gpu/bin).
# pm-passes-h200.txt came from a second, one-line call (the first call's copy of it did not come back).
B=build-units-gpu/bin; O=${OUT:-.}; P=.avg.pct_of_peak_sustained_elapsed
{ date -u +%FT%TZ; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit --format=csv; ldd $B/diescope $B/nvml_gpu_test | grep -i "not found"; ls /usr/local/cuda/lib64/libnvperf_host* 2>&1; } > $O/env.txt 2>&1
{ $B/diescope-cupti version; $B/diescope-cupti device-chip --device 0; } > $O/cupti.txt 2>&1
{ date -u +%FT%TZ; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; echo '$ diescope units --check-passes --device 0'; $B/diescope units --check-passes --device 0; echo "rc=$?"; } > $O/pm-passes-h200.txt 2>&1
$B/diescope units --counters hopper-gh100 > $O/gh100.txt 2>&1
$B/diescope-cupti passes --device 0 --each --metrics-file $O/gh100.txt > $O/pm-passes-h200-each.txt 2>&1
sed "s|^TPC.TriageCompute.sm__inst_executed_pipe_fma_realtime$P\$|sm__inst_executed_pipe_fma$P|" $O/gh100.txt > $O/plainfma.txt
{ echo "## table with the plain FMA counter"; $B/diescope-cupti passes --device 0 --metrics-file $O/plainfma.txt; echo "## plain FP64 alone"; $B/diescope-cupti passes --device 0 sm__pipe_fp64_cycles_active$P; } > $O/pm-alternatives-h200.txt 2>&1
$B/diescope units --nvml-probe --probe-seconds 3 > $O/nvml-probe.txt 2>&1; echo "rc=$?" >> $O/nvml-probe.txt
$B/nvml_gpu_test > $O/nvml_gpu_test.txt 2>&1; echo "rc=$?" >> $O/nvml_gpu_test.txt
