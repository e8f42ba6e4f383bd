#!/usr/bin/env bash
# The harness's CPU example (examples/cpu_triad) in every output format, compare.py on two runs of
# it, and CUPTI's replay-pass count for the harness's default GPU counters on GH100 (host API, no GPU
# needed). Shows the formats and the comparison, not the speed of anything. Runs on any CPU machine.
# Writes into OUT_DIR: machine.txt, triad_A.{txt,json,csv}, triad_B.{txt,json}, compare.txt,
# cupti_host_passes.txt.
#
#   bench/harness/cpu_examples.sh OUT_DIR     BUILD=build/release (a build with cpu_triad and harness_test, which holds the CUDA library's CPU tests)
set -euo pipefail
out=${1:?usage: bench/harness/cpu_examples.sh OUT_DIR   (BUILD=build folder, default build/release)}
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${BUILD:-$root/build/release}" && pwd)
compare=$(dpkg -L libbenchmark-tools 2>/dev/null | grep '/compare\.py$' || true)
[ -n "$compare" ] || { echo "cpu_examples: compare.py not found; run scripts/setup.sh (it installs libbenchmark-tools)" >&2; exit 2; }
for bin in "$build/examples/cpu_triad" "$build/tests/harness/harness_test"; do
  [ -x "$bin" ] || { echo "cpu_examples: no $bin; build the cpu_triad and harness_test targets first" >&2; exit 2; }
done
mkdir -p "$out"
{
  echo "date: $(date -Iseconds)"
  echo "host: $(uname -srm), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
  echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "perf_event_paranoid: $(cat /proc/sys/kernel/perf_event_paranoid)"
} > "$out/machine.txt"
cd "$out"
# At most 30 samples a point keeps the per-sample JSON (which compare.py's U test needs) small.
args=(--max-noise 5 --min-time 0.5 --timeout 5 --max-samples 30)
"$build/examples/cpu_triad" "${args[@]}" --json triad_A.json --csv triad_A.csv > triad_A.txt
"$build/examples/cpu_triad" "${args[@]}" --json triad_B.json > triad_B.txt
/usr/bin/python3 "$compare" --no-color benchmarks triad_A.json triad_B.json > compare.txt
"$build/tests/harness/harness_test" --gtest_filter='CuptiHost.*' > cupti_host_passes.txt
echo "wrote $out"
