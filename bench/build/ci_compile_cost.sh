#!/usr/bin/env bash
# What CI's build (`cmake --build --preset cpu-ci`) costs, compile by compile and link by link:
# configures the `cpu-ci` preset into a build folder of its own with no compiler cache and a launcher
# (RULE_LAUNCH_COMPILE / RULE_LAUNCH_LINK, bench/build/log_step_cpu.cmake) that logs each step's CPU seconds, builds everything at
# -j2 (CI's two cores), and writes
#   OUT/steps.tsv    cpu_s wall_s kind target, one line per compile (C++ or CUDA) and per link
#   OUT/parts.tsv    CPU seconds per part: src, tests, bench, examples (C++ compiles), cuda (every nvcc
#                    compile), link (every link), then per folder (src/report, tests/agent, ...)
#   OUT/summary.txt  configure and build wall and CPU seconds, the load average before and after
# CPU time (user + system) rather than wall time, so that a machine shared with other builds moves the
# figures less; the load average says how shared it was (docs/building.md#compile-time).
#   bench/build/ci_compile_cost.sh OUT [BUILD_DIR] [-DVAR=VALUE ...]
#   (default BUILD_DIR: build/ci-compile-cost, removed first; -D options are added to the configure)
set -euo pipefail
cd "$(dirname "$0")/../.."
usage="usage: bench/build/ci_compile_cost.sh OUT [BUILD_DIR] [-DVAR=VALUE ...]"
out=$(mkdir -p "${1:?$usage}" && realpath "$1")
shift
build=build/ci-compile-cost
if (($#)) && [[ $1 != -D* ]]; then
  build=$1
  shift
fi
command -v /usr/bin/time >/dev/null || { echo "ci_compile_cost: /usr/bin/time is missing; fix: apt-get install time" >&2; exit 2; }
log=$out/steps.log
rm -f "$log"
rm -rf "$build"
# No compiler cache: every compile is paid, as on a fresh CI machine.
unset CMAKE_CXX_COMPILER_LAUNCHER CMAKE_C_COMPILER_LAUNCHER CMAKE_CUDA_COMPILER_LAUNCHER
export CCACHE_DISABLE=1
export DIESCOPE_STEP_LOG=$log
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
commit="$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!bench/results' || echo ' (with uncommitted changes)')"
cpu_time() { /usr/bin/time -f '%U %S %e' -o "$out/time.$1" "${@:2}"; }
cpu_time configure cmake --preset cpu-ci -B "$build" "$@" \
  -DCMAKE_CXX_COMPILER_LAUNCHER= -DCMAKE_CUDA_COMPILER_LAUNCHER= \
  -DCMAKE_PROJECT_INCLUDE="$PWD/bench/build/log_step_cpu.cmake" >/dev/null
# -k 0: a compile that fails does not stop the others; the script then says so and exits non-zero.
build_rc=0
cpu_time build cmake --build "$build" -j2 -- -k 0 || build_rc=$?
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
# /usr/bin/time adds a line "Command exited with non-zero status N" before a failed step's figures.
awk '$1 ~ /^[0-9.]+$/ {printf "%.2f\t%.2f\t%s\t%s\n", $1 + $2, $3, $4, $5}' "$log" | sort -rn > "$out/steps.tsv"
rm -f "$log"
# A compile's part is the first folder of its object's path under the build folder (src, tests, bench,
# examples, fuzz); an nvcc compile (a .cu object) counts as cuda, every link as link.
awk -F'\t' '
  $3 == "link" { top["link"] += $1; next }
  $4 ~ /\.cu\.o$/ { top["cuda"] += $1; next }
  { n = split($4, p, "/"); top[p[1]] += $1; if (n > 2) dir[p[1] "/" p[2]] += $1 }
  END {
    for (k in top) printf "%.1f\t%s\n", top[k], k | "sort -rn"
    close("sort -rn")
    print "--\t--"
    for (k in dir) printf "%.1f\t%s\n", dir[k], k | "sort -rn"
  }' "$out/steps.tsv" > "$out/parts.tsv"
read -r cu cs cw < <(tail -1 "$out/time.configure")
read -r bu bs bw < <(tail -1 "$out/time.build")
rm -f "$out/time.configure" "$out/time.build"
{
  echo "commit $commit"
  echo "configure options: cpu-ci preset $*"
  awk -v u="$cu" -v s="$cs" -v w="$cw" 'BEGIN {printf "configure: %.1f CPU-s, %.0f s wall\n", u + s, w}'
  awk -v u="$bu" -v s="$bs" -v w="$bw" 'BEGIN {printf "build: %.1f CPU-s, %.0f s wall (-j2)\n", u + s, w}'
  awk -F'\t' '{s += $1; n[$3]++} END {printf "logged steps: %.1f CPU-s over %d compiles and %d links\n", s, n["compile"], n["link"]}' "$out/steps.tsv"
  echo "load average before: $load_before, after: $load_after ($(nproc) cores)"
} > "$out/summary.txt"
cat "$out/summary.txt"
head -8 "$out/parts.tsv"
if ((build_rc)); then
  echo "ci_compile_cost: the build failed (exit $build_rc); the figures above leave out what did not compile" >&2
  exit "$build_rc"
fi
