#!/usr/bin/env bash
# CPU seconds of the same compiles with and without the test binaries' precompiled header
# (DIESCOPE_TEST_PCH, docs/building.md#compile-time), in pairs: each named object of a configured and
# built folder is compiled with its own command (from compile_commands.json), then again without
# `-Winvalid-pch -include .../cmake_pch.hxx`, ROUNDS times, alternately, so that the machine's load
# moves both sides of a pair alike. Writes OUT/pairs.tsv (object, round, with_s, without_s) and prints
# each object's medians.
#   bench/build/pch_pair_cost.sh BUILD_DIR OUT ROUNDS OBJECT...
#   (OBJECT as compile_commands.json names its output, e.g.
#    tests/report/CMakeFiles/report_test.dir/Unity/unity_0_cxx.cxx.o)
set -euo pipefail
usage="usage: bench/build/pch_pair_cost.sh BUILD_DIR OUT ROUNDS OBJECT..."
build=$(realpath "${1:?$usage}")
out=$(mkdir -p "${2:?$usage}" && realpath "$2")
rounds=${3:?$usage}
shift 3
(($#)) || { echo "$usage" >&2; exit 2; }
command -v /usr/bin/time >/dev/null || { echo "pch_pair_cost: /usr/bin/time is missing; fix: apt-get install time" >&2; exit 2; }
export CCACHE_DISABLE=1
printf 'object\tround\twith_pch_s\twithout_pch_s\n' > "$out/pairs.tsv"
for object in "$@"; do
  mapfile -t cmds < <(python3 - "$build/compile_commands.json" "$object" <<'PY'
import json, re, sys
for e in json.load(open(sys.argv[1])):
    cmd = e["command"]
    if f" -o {sys.argv[2]} " not in cmd:
        continue
    cmd = re.sub(r" -MD -MT \S+ -MF \S+", "", cmd)
    cmd = re.sub(r" -o \S+", " -o /dev/null", cmd)
    print(e["directory"])
    print(cmd)
    print(re.sub(r" -Winvalid-pch -include \S*/cmake_pch\.hxx(?= )", "", cmd))
    break
PY
  )
  ((${#cmds[@]} == 3)) || { echo "pch_pair_cost: no compile of $object in $build/compile_commands.json; fix: name an output it lists" >&2; exit 2; }
  [[ ${cmds[1]} != "${cmds[2]}" ]] || { echo "pch_pair_cost: $object compiles without a precompiled header; fix: configure with -DDIESCOPE_TEST_PCH=ON" >&2; exit 2; }
  for ((r = 1; r <= rounds; r++)); do
    t=()
    for cmd in "${cmds[1]}" "${cmds[2]}"; do
      (cd "${cmds[0]}" && /usr/bin/time -f '%U %S' -o "$out/time" bash -c "$cmd")
      t+=("$(awk '{printf "%.2f", $1 + $2}' "$out/time")")
    done
    printf '%s\t%d\t%s\t%s\n' "$object" "$r" "${t[0]}" "${t[1]}" >> "$out/pairs.tsv"
  done
done
rm -f "$out/time"
python3 - "$out/pairs.tsv" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
tw = tn = 0.0
for obj in dict.fromkeys(r["object"] for r in rows):
    w = statistics.median(float(r["with_pch_s"]) for r in rows if r["object"] == obj)
    n = statistics.median(float(r["without_pch_s"]) for r in rows if r["object"] == obj)
    tw, tn = tw + w, tn + n
    print(f"{obj}: {w:.2f} CPU-s with, {n:.2f} without (median)")
print(f"sum of medians: {tw:.2f} with, {tn:.2f} without ({tn - tw:.2f} CPU-s saved)")
PY
