#!/usr/bin/env bash
# The reader's way of turning a chip value's digits into a double (one division by an exact power of
# ten) against the Eisel-Lemire 128-bit multiply std::from_chars uses: both checked against
# std::from_chars on random values, then each timed on the same values (CPU seconds). Runs on any
# CPU machine. Writes OUT_DIR/decimal-to-double.txt with the machine's details.
#
#   bench/analysis/decimal_to_double.sh OUT_DIR        BUILD=build/release (a build with decimal_to_double)
set -euo pipefail
out_dir=${1:?usage: bench/analysis/decimal_to_double.sh OUT_DIR   (BUILD=build folder, default build/release)}
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$root/build/release}
bin="$build/bin/decimal_to_double"
[ -x "$bin" ] || { echo "decimal_to_double: no $bin; build the decimal_to_double target first" >&2; exit 2; }
mkdir -p "$out_dir"
{
  echo "# decimal to double: division by a power of ten against Eisel-Lemire (bench/analysis/decimal_to_double.sh)"
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores"
  echo "build: $(grep -m1 CMAKE_BUILD_TYPE "$build/CMakeCache.txt" | cut -d= -f2), $(grep -m1 'CMAKE_CXX_FLAGS_RELEASE:' "$build/CMakeCache.txt" | cut -d= -f2)"
  echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  "$bin" 20000000 3
  echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out_dir/decimal-to-double.txt"
