#!/usr/bin/env bash
# Fuzzes the recording reader (fuzz/fuzz_recording_reader.cpp, libFuzzer with AddressSanitizer and
# UBSan) for SECONDS through scripts/fuzz.sh, the same script CI runs, and appends the run to
# OUT_DIR/fuzz-recording-reader.txt with the machine's details: inputs run, coverage and the outcome.
# Runs on any CPU machine with clang (scripts/setup.sh installs it); no GPU. Exits non-zero when the
# fuzzer finds a failure (the input is left in the fuzz build folder's fuzz-artifacts/).
#
#   bench/fuzz/recording_reader.sh OUT_DIR [SECONDS]     (default 60; DIESCOPE_FUZZ_BUILD as in scripts/fuzz.sh)
set -euo pipefail
out_dir=${1:?usage: bench/fuzz/recording_reader.sh OUT_DIR [SECONDS]}
seconds=${2:-60}
cd "$(dirname "$0")/../.."
mkdir -p "$out_dir"
out="$out_dir/fuzz-recording-reader.txt"
if [ ! -s "$out" ]; then
  {
    echo "# libFuzzer runs of fuzz/fuzz_recording_reader.cpp (bench/fuzz/recording_reader.sh, through scripts/fuzz.sh)"
    echo "nproc: $(nproc)"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
    echo "compiler: $(clang++ --version | head -1); -fsanitize=fuzzer,address,undefined"
  } > "$out"
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
scripts/fuzz.sh "$seconds" > "$log" 2>&1 || status=$?
{
  echo
  echo "$(date -u +%Y-%m-%dT%H:%MZ), scripts/fuzz.sh $seconds on commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)," \
    "load average $(cut -d' ' -f1-3 /proc/loadavg):"
  grep -E '^#[0-9]+[[:space:]]+(INITED|DONE)|^fuzz: fuzz_recording_reader|ERROR|SUMMARY' "$log" || true
} | tee -a "$out"
exit "$status"
