#!/usr/bin/env bash
# What the CI build costs, file by file: configures the `ci` preset into a scratch build folder with a
# launcher that logs each compile's CPU time, builds everything, and writes
#   OUT/compiles.tsv   cpu_s wall_s object, one line per C++ compile (CUDA compiles are not logged)
#   OUT/parts.tsv      CPU seconds per folder (src/cli, tests/report, ...), largest first
# CPU time (user + system) rather than wall time, so that a loaded machine moves the figures less.
#   bench/build/compile_cpu_time.sh OUT [BUILD_DIR]   (default BUILD_DIR: build/compile-time, removed first)
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: bench/build/compile_cpu_time.sh OUT [BUILD_DIR]}
build=${2:-build/compile-time}
command -v /usr/bin/time >/dev/null || { echo "compile_cpu_time: /usr/bin/time is missing; fix: apt-get install time" >&2; exit 2; }
mkdir -p "$out"
# What header-only fmt costs one file: a one-line file that formats an integer, compiled both ways.
probe=$(mktemp -d)
printf '#include <fmt/format.h>\nint f(int x) { return static_cast<int>(fmt::format("{}", x).size()); }\n' >"$probe/f.cpp"
for mode in -DFMT_HEADER_ONLY -UFMT_HEADER_ONLY; do
  /usr/bin/time -f "compile_cpu_time: fmt $mode: %U+%S CPU-s" g++ -std=c++20 -O2 "$mode" -c "$probe/f.cpp" -o "$probe/f.o"
done 2>&1
rm -rf "$probe"
log=$(realpath "$out")/compile.log
rm -f "$log"
rm -rf "$build"
export DIESCOPE_COMPILE_LOG=$log
cmake --preset ci -B "$build" -DCMAKE_CXX_COMPILER_LAUNCHER="$PWD/bench/build/log_compile_cpu.sh" >/dev/null
started=$SECONDS
cmake --build "$build" -j"$(nproc)"
wall=$((SECONDS - started))
awk '{printf "%.2f\t%.2f\t%s\n", $1 + $2, $3, $5}' "$log" | sort -rn > "$out/compiles.tsv"
awk -F'\t' '{n = split($3, p, "/"); part = p[1] "/" p[2]; cpu[part] += $1}
            END {for (k in cpu) printf "%.1f\t%s\n", cpu[k], k}' "$out/compiles.tsv" | sort -rn > "$out/parts.tsv"
rm -f "$log"
awk -F'\t' -v wall="$wall" -v cores="$(nproc)" '{s += $1; n++}
  END {printf "compile_cpu_time: %d C++ compiles, %.1f CPU-minutes; the build took %d s of wall on %d cores\n", n, s / 60, wall, cores}' \
  "$out/compiles.tsv"
