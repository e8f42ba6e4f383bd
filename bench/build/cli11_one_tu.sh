#!/usr/bin/env bash
# What compiling CLI11 in one file saves (docs/command-line.md#one-file-includes-cli11): for two
# revisions, configures the `ci` preset on a copy of each (git archive) with the compile logger of
# bench/build/log_compile_cpu.sh, compiles only the `diescope` executable's own files (src/cli, no
# library) with ccache off, REPEATS times, and writes
#   OUT/compiles.tsv   revision repeat cpu_s wall_s file, one line per compile
#   OUT/summary.tsv    revision, files compiled, files of src/cli that include CLI/CLI.hpp (themselves or
#                      through a header of src/cli), CPU seconds (median of the repeats' sums), the
#                      slowest file's CPU seconds (median)
# CPU time (user + system) rather than wall time, so that a loaded machine moves the figures less.
#   bench/build/cli11_one_tu.sh OUT BEFORE_REV [AFTER_REV] [REPEATS]   (default AFTER_REV HEAD, REPEATS 3)
# REPEATS 0 compiles nothing: it writes summary.tsv again from the compiles.tsv already in OUT.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: bench/build/cli11_one_tu.sh OUT BEFORE_REV [AFTER_REV] [REPEATS]}
before=${2:?usage: bench/build/cli11_one_tu.sh OUT BEFORE_REV [AFTER_REV] [REPEATS]}
after=${3:-HEAD}
repeats=${4:-3}
command -v /usr/bin/time >/dev/null || { echo "cli11_one_tu: /usr/bin/time is missing; fix: apt-get install time" >&2; exit 2; }
command -v ninja >/dev/null || { echo "cli11_one_tu: ninja is missing; fix: bash scripts/setup.sh" >&2; exit 2; }
mkdir -p "$out"
out=$(realpath "$out")
logger=$PWD/bench/build/log_compile_cpu.sh
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
((repeats == 0)) || printf 'revision\trepeat\tcpu_s\twall_s\tfile\n' >"$out/compiles.tsv"
printf 'revision\tfiles\tinclude_cli11\tcpu_s\tslowest_cpu_s\n' >"$out/summary.tsv"
includes_cli11() {
  local tree=$1 f=$2 h
  grep -q '#include <CLI/CLI.hpp>' "$f" && return 0
  for h in $(sed -n 's/^#include "\([a-z_]*\.hpp\)"$/\1/p' "$f"); do
    [ -f "$tree/src/cli/$h" ] && grep -q '#include <CLI/CLI.hpp>' "$tree/src/cli/$h" && return 0
  done
  return 1
}

for rev in "$before" "$after"; do
  name=$(git rev-parse --short "$rev")
  tree=$scratch/$name
  mkdir -p "$tree"
  git archive "$rev" | tar -x -C "$tree"
  # A .cpp includes CLI11 when it or a header of src/cli it includes does.
  cli11_files=0
  for f in "$tree"/src/cli/*.cpp; do
    if includes_cli11 "$tree" "$f"; then cli11_files=$((cli11_files + 1)); fi
  done
  if ((repeats > 0)); then
    (cd "$tree" && CCACHE_DISABLE=1 cmake --preset ci -B build -DCMAKE_CXX_COMPILER_LAUNCHER="$logger" >/dev/null)
    mapfile -t objects < <(ninja -C "$tree/build" -t targets all | grep -o '^src/cli/CMakeFiles/diescope\.dir/[^:]*\.cpp\.o')
  fi
  for ((r = 1; r <= repeats; r++)); do
    log=$scratch/$name.$r.log
    rm -f "$log" "${objects[@]/#/$tree/build/}"
    DIESCOPE_COMPILE_LOG=$log CCACHE_DISABLE=1 ninja -C "$tree/build" -j1 "${objects[@]}" >/dev/null
    awk -v rev="$name" -v r="$r" '{n = split($5, p, "/"); printf "%s\t%d\t%.2f\t%.2f\t%s\n", rev, r, $1 + $2, $3, p[n]}' \
      "$log" >>"$out/compiles.tsv"
  done
  python3 - "$out/compiles.tsv" "$name" "$cli11_files" >>"$out/summary.tsv" <<'PY'
import csv, statistics, sys
path, rev, cli11 = sys.argv[1:]
sums, tops, files = {}, {}, set()
for row in csv.DictReader(open(path), delimiter="\t"):
    if row["revision"] != rev:
        continue
    cpu = float(row["cpu_s"])
    files.add(row["file"])
    sums[row["repeat"]] = sums.get(row["repeat"], 0) + cpu
    tops[row["repeat"]] = max(tops.get(row["repeat"], 0), cpu)
print(f"{rev}\t{len(files)}\t{cli11}\t{statistics.median(sums.values()):.1f}\t{statistics.median(tops.values()):.1f}")
PY
done
column -t -s $'\t' "$out/summary.tsv"
