#!/usr/bin/env bash
# Builds the libFuzzer target for the recording reader (clang, `fuzz` preset) and runs it for
# SECONDS (default 30) from a seed corpus: the bundled recordings and fuzz/corpus/. Exits non-zero
# when the fuzzer finds a crash, a leak or an unexpected exception; the input that caused it is
# left in the build folder's fuzz-artifacts/.
#
#   scripts/fuzz.sh [SECONDS]
#   DIESCOPE_FUZZ_BUILD=/path/to/build scripts/fuzz.sh 60     (default build folder: build/fuzz)
#   scripts/fuzz.sh --build-only; scripts/fuzz.sh --no-build [SECONDS]
# --build-only builds the target and stops; --no-build runs the target already built. scripts/test.sh
# builds it beside the configure and the build, and runs it beside the tests (docs/building.md#compile-time).
set -euo pipefail
cd "$(dirname "$0")/.."
usage="usage: scripts/fuzz.sh [--build-only | --no-build] [SECONDS]   (a whole number above 0; default 30)"
do_build=1
do_run=1
case "${1:-}" in
  --build-only) do_run=0; shift ;;
  --no-build) do_build=0; shift ;;
esac
seconds="${1:-30}"
if (($# > 1)) || ! [[ "$seconds" =~ ^[0-9]+$ ]] || [ "$seconds" -eq 0 ]; then
  echo "$usage" >&2
  exit 2
fi
build="${DIESCOPE_FUZZ_BUILD:-build/fuzz}"
if ! command -v clang++ >/dev/null; then
  echo "fuzz: clang++ not found; run scripts/setup.sh (it installs clang and libclang-rt-14-dev)" >&2
  exit 2
fi

if ((do_build)); then
  cmake --preset fuzz -B "$build" >/dev/null
  cmake --build "$build" --target fuzz_recording_reader
fi
if ((!do_run)); then
  exit 0
fi
if [ ! -x "$build/bin/fuzz_recording_reader" ]; then
  echo "fuzz: $build/bin/fuzz_recording_reader is not built; fix: run scripts/fuzz.sh --build-only first" >&2
  exit 2
fi

# libFuzzer adds what it finds to the first corpus folder: work on a copy, keep the seeds clean.
corpus="$build/fuzz-corpus/recording-reader"
artifacts="$build/fuzz-artifacts/"
mkdir -p "$corpus" "$artifacts"
cp data/recordings/*.dsrec fuzz/corpus/* "$corpus/"

log="$build/fuzz-recording-reader.log"
echo "fuzz: running fuzz_recording_reader for $seconds s (log: $log)"
set +e
"$build/bin/fuzz_recording_reader" "$corpus" \
  -dict=fuzz/recording.dict \
  -max_total_time="$seconds" \
  -timeout=10 \
  -rss_limit_mb=2048 \
  -print_final_stats=1 \
  -artifact_prefix="$artifacts" >"$log" 2>&1
status=$?
set -e
grep -E "^#[0-9]+[[:space:]]+(INITED|DONE)|ERROR|SUMMARY|Test unit written|what\(\)" "$log" || true

runs=$(grep -oE "stat::number_of_executed_units: *[0-9]+" "$log" | grep -oE "[0-9]+$" || echo "?")
done_line=$(grep -E "^#[0-9]+[[:space:]]+DONE" "$log" | tail -1 || true)
if [ "$status" -ne 0 ]; then
  echo "fuzz: fuzz_recording_reader FAILED (exit $status) after $runs inputs; see $log and $artifacts" >&2
  exit "$status"
fi
echo "fuzz: fuzz_recording_reader ran $runs inputs in ${seconds} s without a failure (${done_line#*DONE })"
