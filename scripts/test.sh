#!/usr/bin/env bash
# Builds everything with warnings as errors and runs the whole CPU test suite (tests labelled gpu
# skip themselves here; scripts/gpu-tests.sh runs them on a GPU machine).
set -euo pipefail
cd "$(dirname "$0")/.."
# Each step says how long it took, so a CI log shows where the 20-minute budget goes.
started=$SECONDS
step() {
  local t=$SECONDS
  "$@"
  echo "test.sh: '$*' took $((SECONDS - t)) s ($((SECONDS - started)) s so far)"
}
step bash scripts/setup.sh
# The repository stands alone: no reference outside it, no broken citation or results path.
step bash scripts/check-references.sh
# Every C++ and CUDA file is formatted as .clang-format says.
step bash scripts/check-format.sh
step cmake --preset ci
# clang-tidy over src/ needs only the configured tree (compile_commands.json and the include folders),
# so it starts now, at low priority: it takes the cycles the build, the tests and the fuzz run leave
# idle (CI's time goal is 20 minutes on two cores). Its output is printed when it ends.
tidy_log=$(mktemp)
setsid nice -n 10 bash scripts/check-tidy.sh build/ci > "$tidy_log" 2>&1 &
tidy_pid=$!
trap 'kill -- -"$tidy_pid" 2>/dev/null || true; rm -f "$tidy_log"' EXIT
step cmake --build --preset ci
# The fuzz target (clang, its own build folder) builds beside the tests, at low priority: the tests
# leave most of a core idle (they wait on children, sockets and tmux).
fuzz_build_log=$(mktemp)
setsid nice -n 10 bash -c 'cmake --preset fuzz -B build/fuzz >/dev/null && cmake --build build/fuzz --target fuzz_recording_reader' \
  > "$fuzz_build_log" 2>&1 &
fuzz_build_pid=$!
trap 'kill -- -"$tidy_pid" -"$fuzz_build_pid" 2>/dev/null || true; rm -f "$tidy_log" "$fuzz_build_log"' EXIT
step ctest --preset ci -j2
fuzz_build_status=0
wait "$fuzz_build_pid" || fuzz_build_status=$?
if ((fuzz_build_status)); then
  cat "$fuzz_build_log" >&2
  echo "test.sh: the fuzz target did not build (above)" >&2
  exit 1
fi
# The recording reader's libFuzzer target, for a short time (scripts/fuzz.sh; its build is done).
step bash scripts/fuzz.sh 30
tidy_status=0
wait "$tidy_pid" || tidy_status=$?
echo "test.sh: clang-tidy ended $((SECONDS - started)) s after the start"
cat "$tidy_log"
exit "$tidy_status"
