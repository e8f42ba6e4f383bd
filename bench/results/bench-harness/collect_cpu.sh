#!/usr/bin/env bash
# Reproduces the CPU figures in docs/bench.md on the machine it runs on: the CPU example's output in
# every format, compare.py on two runs of it, and CUPTI's pass count for the default GPU counters on
# GH100 (host API, no GPU needed). Usage: collect_cpu.sh BUILD_DIR (a build with cpu_triad and
# bench_cuda_test), writing next to this script.
set -euo pipefail
build=$1
here=$(cd "$(dirname "$0")" && pwd)
out=$here/cpu
mkdir -p "$out"
{
  echo "date: $(date -Iseconds)"
  echo "host: $(uname -srm), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
  echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "perf_event_paranoid: $(cat /proc/sys/kernel/perf_event_paranoid)"
} > "$out/machine.txt"
build=$(cd "$build" && pwd)
cd "$out"
# At most 30 samples a point keeps the per-sample JSON (which compare.py's U test needs) small.
args=(--max-noise 5 --min-time 0.5 --timeout 5 --max-samples 30)
"$build/examples/cpu_triad" "${args[@]}" --json triad_A.json --csv triad_A.csv > triad_A.txt
"$build/examples/cpu_triad" "${args[@]}" --json triad_B.json > triad_B.txt
/usr/bin/python3 "$(dpkg -L libbenchmark-tools | grep '/compare\.py$')" --no-color benchmarks triad_A.json triad_B.json \
  > compare.txt
"$build/tests/bench/bench_cuda_test" --gtest_filter='CuptiHost.*' > cupti_host_passes.txt
echo "wrote $out"
