#!/usr/bin/env bash
# What CI's test binaries cost to build, compile by compile and link by link: configures the `cpu-ci`
# preset into a build folder of its own with bench/build/ci_compile_cost.sh's launcher (each compile's
# and link's CPU seconds, bench/build/log_step_cpu.sh), builds src/, bench/ and examples/ first (with
# the compiler cache where CMAKE_CXX_COMPILER_LAUNCHER names one, and not logged), then everything else,
# which is tests/ (the test binaries and the programs only tests use), with no compiler cache, at -j2,
# logged. Cheaper than ci_compile_cost.sh where only the tests changed (docs/building.md#compile-time).
# Writes
#   OUT/steps.tsv    cpu_s wall_s kind output, one line per compile and link of tests/ (of the second build:
#                    a library it compiles again, after a change to src/, is left out)
#   OUT/summary.txt  the commit, CPU seconds of compiles and links, the number of test binaries (files
#                    named *_test that the build linked), the load average before and after
#   bench/build/test_compile_cost.sh OUT [BUILD_DIR]      (default BUILD_DIR: build/test-compile-cost, removed first)
set -euo pipefail
cd "$(dirname "$0")/../.."
usage="usage: bench/build/test_compile_cost.sh OUT [BUILD_DIR]"
out=$(mkdir -p "${1:?$usage}" && realpath "$1")
build=${2:-build/test-compile-cost}
command -v /usr/bin/time >/dev/null || { echo "test_compile_cost: /usr/bin/time is missing; fix: apt-get install time" >&2; exit 2; }
rm -rf "$build"
commit="$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!bench/results' || echo ' (with uncommitted changes)')"
cmake --preset cpu-ci -B "$build" -DCMAKE_PROJECT_INCLUDE="$PWD/bench/build/log_step_cpu.cmake" >/dev/null
# The libraries and programs the tests link, not logged (a compiler cache may serve them).
DIESCOPE_STEP_LOG=/dev/null cmake --build "$build" -j2 --target src/all bench/all examples/all >/dev/null
log=$out/steps.log
rm -f "$log"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
# The rest, every compile paid, as on a fresh CI machine.
CCACHE_DISABLE=1 DIESCOPE_STEP_LOG=$log cmake --build "$build" -j2 >/dev/null
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
awk '$1 ~ /^[0-9.]+$/ && $5 ~ /^tests\// {printf "%.2f\t%.2f\t%s\t%s\n", $1 + $2, $3, $4, $5}' "$log" | sort -rn > "$out/steps.tsv"
rm -f "$log"
{
  echo "commit $commit"
  awk -F'\t' '{s[$3] += $1; n[$3]++} END {printf "tests/: %.1f CPU-s: %d compiles %.1f CPU-s, %d links %.1f CPU-s\n", s["compile"] + s["link"], n["compile"], s["compile"], n["link"], s["link"]}' "$out/steps.tsv"
  echo "test binaries linked: $(awk -F'\t' '$3 == "link" && $4 ~ /_test$/' "$out/steps.tsv" | wc -l)"
  echo "load average before: $load_before, after: $load_after ($(nproc) cores)"
} > "$out/summary.txt"
cat "$out/summary.txt"
