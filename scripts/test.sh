#!/usr/bin/env bash
# Builds the CPU side with warnings as errors and runs the whole CPU test suite (tests labelled gpu
# skip themselves here; scripts/gpu-tests.sh runs them on a GPU machine). docs/building.md#where-each-check-runs
# says which check runs where.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each step says how long it took, in wall and CPU seconds (user + system of what it waited for), so a
# CI log shows where the 10-minute budget goes (docs/building.md#compile-time).
started=$SECONDS
cpu_file=$(mktemp)
trap 'rm -f "$cpu_file"' EXIT
# The children's CPU seconds so far, from the second line of `times` (as 1m2.345s 0m0.678s). `times`
# must run in this shell: in a $(...) subshell it would see that subshell's children only.
cpu_of() {
  awk 'NR == 2 { for (i = 1; i <= 2; i++) { split($i, p, "m"); sub("s", "", p[2]); s += p[1] * 60 + p[2] } printf "%.2f", s }' "$cpu_file"
}
step() {
  local t=$SECONDS c0 c1
  times >"$cpu_file"
  c0=$(cpu_of)
  "$@"
  times >"$cpu_file"
  c1=$(cpu_of)
  echo "test.sh: '$*' took $((SECONDS - t)) s, $(awk -v a="$c0" -v b="$c1" 'BEGIN {printf "%.1f", b - a}') CPU-s ($((SECONDS - started)) s so far)"
}
step bash scripts/setup.sh
# The repository stands alone: no reference outside it, no broken citation or results path.
step bash scripts/check-references.sh
# The docs say what is there: every bench/ script listed, README's parts table, no occasion words.
step bash scripts/check-drift.sh
# Every C++ and CUDA file is formatted as .clang-format says.
step bash scripts/check-format.sh
# The recording reader's libFuzzer target (clang, its own build folder) builds from here, at low
# priority, beside the configure (one core) and then in what the build leaves idle; it runs for 30 s
# (scripts/fuzz.sh) once the build is done (the file $fuzz_gate), beside the tests, which leave most of
# a core idle (they wait on children, sockets and tmux). fuzz.sh prints how many inputs it ran.
side_log=$(mktemp)
fuzz_gate=$(mktemp -u)
CMAKE_BUILD_PARALLEL_LEVEL=2 setsid nice -n 10 bash -c 'bash scripts/fuzz.sh --build-only && while [ ! -e "$1" ]; do sleep 1; done &&
  bash scripts/fuzz.sh --no-build 30' fuzz "$fuzz_gate" > "$side_log" 2>&1 &
side_pid=$!
trap 'kill -- -"$side_pid" 2>/dev/null || true; rm -f "$side_log" "$fuzz_gate" "$cpu_file"' EXIT
step cmake --preset cpu-ci
# clang-tidy over the C++ files this submission changed needs only the configured tree, so it starts
# now, at low priority, beside the build; its output is printed when it ends. The full run over src/
# is scripts/check-tidy.sh.
tidy_log=$(mktemp)
setsid nice -n 10 bash scripts/check-tidy-changed.sh build/cpu-ci > "$tidy_log" 2>&1 &
tidy_pid=$!
trap 'kill -- -"$tidy_pid" -"$side_pid" 2>/dev/null || true; rm -f "$tidy_log" "$side_log" "$fuzz_gate" "$cpu_file"' EXIT
step cmake --build --preset cpu-ci
touch "$fuzz_gate"
# Six at a time: the tests mostly wait (children, sockets, timers, tmux, Chromium), so two at a time
# left the cores idle; the timing tests run alone (RUN_SERIAL, docs/building.md#the-tests-wall-time).
step ctest --preset cpu-ci -j6
side_wait() {
  local status=0
  wait "$side_pid" || status=$?
  if ((status)); then
    cat "$side_log" >&2
    echo "test.sh: the fuzz target did not build, or the fuzzer failed (above)" >&2
    return 1
  fi
  grep '^fuzz:' "$side_log" || true
}
# What the fuzz build and run cost is counted here, when they are waited for.
step side_wait
tidy_wait() {
  local status=0
  wait "$tidy_pid" || status=$?
  cat "$tidy_log"
  return "$status"
}
step tidy_wait
echo "test.sh: all checks passed in $((SECONDS - started)) s"
