#!/usr/bin/env bash
# What the install step ships (docs/building.md#installing): each program's size in the build tree
# (RelWithDebInfo: code and debug info), its code alone (`size`: text), and after `cmake --install`
# with DIESCOPE_SPLIT_DEBUG: the stripped file and its .debug file kept apart. Checks that each
# stripped file still runs (--version / --help) and carries a debuglink to its .debug file.
#
#   bench/build/install_sizes.sh BUILD_DIR OUT_DIR
#
# BUILD_DIR: a configured and built tree (the release preset, or RelWithDebInfo without CUDA on a
# machine without nvcc). Writes OUT_DIR/sizes.csv and OUT_DIR/env.txt.
set -euo pipefail
build=${1:?usage: bench/build/install_sizes.sh BUILD_DIR OUT_DIR}
out=${2:?usage: bench/build/install_sizes.sh BUILD_DIR OUT_DIR}
mkdir -p "$out"
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" --component runtime >/dev/null
{
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "build type: $(grep -m1 '^CMAKE_BUILD_TYPE:' "$build/CMakeCache.txt" | cut -d= -f2)"
  echo "compiler: $(grep -m1 '^CMAKE_CXX_COMPILER:' "$build/CMakeCache.txt" | cut -d= -f2) ($(c++ --version | head -1))"
  echo "objcopy: $(objcopy --version | head -1)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores"
} >"$out/env.txt"
echo "file,build_tree_bytes,text_bytes,installed_bytes,debug_bytes,debuglink,runs" >"$out/sizes.csv"
for installed in "$prefix"/bin/*; do
  name=$(basename "$installed")
  built=$(find "$build" -name "$name" -type f -newer "$build/CMakeCache.txt" | head -1)
  debug=$(find "$prefix/lib/debug" -name "$name.debug" -type f | head -1)
  text=$(size -A "$built" | awk '$1 == ".text" {print $2}')
  link=$(readelf --string-dump=.gnu_debuglink "$installed" 2>/dev/null | awk '/\]/ {print $3; exit}')
  runs=no
  case "$name" in
    diescope) "$installed" --version >/dev/null 2>&1 && runs=yes ;;
    diescope-workload) "$installed" --help >/dev/null 2>&1 && runs=yes ;;
    diescope-cupti) "$installed" --help >/dev/null 2>&1 && runs=yes ;;
    *.so) runs=n/a ;;
  esac
  echo "$name,$(stat -c %s "$built"),$text,$(stat -c %s "$installed"),$(stat -c %s "$debug"),$link,$runs" >>"$out/sizes.csv"
done
column -s, -t "$out/sizes.csv"
