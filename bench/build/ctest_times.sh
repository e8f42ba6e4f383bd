#!/usr/bin/env bash
# The CPU test suite's wall time at a given parallelism (docs/building.md#the-tests-wall-time): runs
# `ctest --test-dir BUILD_DIR -LE gpu -jJOBS` (what scripts/test.sh runs) with a JUnit file, and writes
#   OUT/NAME.tsv          seconds, status, test: one line per test, slowest first
#   OUT/NAME-summary.txt  the run's wall and CPU seconds (user + system of ctest and every test), tests
#                         passed and failed, the load average before and after
# and exits with ctest's status. CPU seconds against wall seconds says how much of the run waits
# (sleeps, timeouts, children) rather than computes.
#   bench/build/ctest_times.sh OUT NAME BUILD_DIR JOBS
set -euo pipefail
usage="usage: bench/build/ctest_times.sh OUT NAME BUILD_DIR JOBS"
out=$(mkdir -p "${1:?$usage}" && realpath "$1")
name=${2:?$usage}
build=${3:?$usage}
jobs=${4:?$usage}
command -v /usr/bin/time >/dev/null || { echo "ctest_times: /usr/bin/time is missing; fix: apt-get install time" >&2; exit 2; }
junit=$(mktemp)
trap 'rm -f "$junit" "$out/$name.time"' EXIT
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
rc=0
/usr/bin/time -f '%U %S %e' -o "$out/$name.time" ctest --test-dir "$build" -LE gpu -j"$jobs" --output-junit "$junit" \
  > "$out/$name.log" 2>&1 || rc=$?
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
python3 - "$junit" > "$out/$name.tsv" <<'EOF'
import sys
import xml.etree.ElementTree as ET
rows = []
for case in ET.parse(sys.argv[1]).getroot().iter("testcase"):
    status = case.get("status", "run")
    if case.find("failure") is not None:
        status = "failed"
    elif case.find("skipped") is not None:
        status = "skipped"
    rows.append((float(case.get("time", "0")), status, case.get("name")))
for seconds, status, name in sorted(rows, reverse=True):
    print(f"{seconds:.2f}\t{status}\t{name}")
EOF
read -r user sys wall < <(tail -1 "$out/$name.time")
{
  echo "ctest -LE gpu -j$jobs in $build: $(grep -E 'tests passed|tests failed' "$out/$name.log" | tail -1)"
  awk -v u="$user" -v s="$sys" -v w="$wall" 'BEGIN {printf "wall %.1f s, CPU %.1f s (user %.1f + system %.1f)\n", w, u + s, u, s}'
  awk -F'\t' '{s += $1} END {printf "sum of the tests wall seconds: %.1f over %d tests\n", s, NR}' "$out/$name.tsv"
  echo "load average before: $load_before, after: $load_after ($(nproc) cores)"
} > "$out/$name-summary.txt"
cat "$out/$name-summary.txt"
if ((rc)); then
  grep -E "\(Failed\)|\(Timeout\)|\*\*\*" "$out/$name.log" | head -20 >&2 || true
fi
exit "$rc"
