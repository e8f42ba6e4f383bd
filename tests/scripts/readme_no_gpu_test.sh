#!/usr/bin/env bash
# README.md's "Try it without a GPU", run as written: every line of its code block, with the built
# diescope in place of build/release (scripts/main.sh through DIESCOPE_BUILD, so it builds nothing),
# a scratch folder in place of /tmp/diescope-try and a free port in place of 9402. Each line must exit
# 0 and leave its files; the scrape must hold the DIE-Util gauge, and main.sh's report must take the
# bundled calibration.
#
#   tests/scripts/readme_no_gpu_test.sh SOURCE_DIR DIESCOPE
set -euo pipefail
src=${1:?usage: readme_no_gpu_test.sh SOURCE_DIR DIESCOPE}
bin=${2:?usage: readme_no_gpu_test.sh SOURCE_DIR DIESCOPE}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/build/bin" "$work/try"
ln -s "$bin" "$work/build/bin/diescope"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

# The first ```sh block after the section's heading.
block=$(awk '/^## Try it without a GPU/ {in_section=1; next} in_section && /^```sh/ {in_block=1; next}
             in_block && /^```/ {exit} in_block {print}' "$src/README.md")
[ -n "$block" ] || { echo "FAIL: README.md has no code block under '## Try it without a GPU'"; exit 1; }
lines=$(printf '%s\n' "$block" | wc -l)
[ "$lines" -ge 7 ] || { echo "FAIL: the block has $lines lines:"; printf '%s\n' "$block"; exit 1; }

script="$work/try.sh"
{
  echo 'set -eo pipefail'
  printf '%s\n' "$block" |
    sed -e "s|build/release|$work/build|g" -e "s|/tmp/diescope-try|$work/try|g" -e "s|9402|$port|g" \
        -e "s|^bash scripts/main.sh|DIESCOPE_BUILD=$work/build bash scripts/main.sh|"
} >"$script"
cd "$src"
# Line by line, so that a failure names its line; `&` lines keep running in the background.
failed=0
while IFS= read -r line; do
  [ -n "$line" ] || continue
  case "$line" in set\ *) continue ;; esac
  echo "+ $line"
  if ! eval "$line" >"$work/out.txt" 2>"$work/err.txt" </dev/null; then
    echo "FAIL: exit non-zero: $line"; cat "$work/out.txt" "$work/err.txt"; failed=1
  fi
  case "$line" in
    *curl*) grep -q '^diescope_die_util_percent{gpu="0",UUID="GPU-' "$work/out.txt" ||
              { echo "FAIL: the scrape has no DIE-Util gauge:"; cat "$work/out.txt"; failed=1; } ;;
    *top\ --once*) grep -q 'limiting unit: DRAM' "$work/out.txt" ||
                     { echo "FAIL: top --once does not show the steady window:"; cat "$work/out.txt"; failed=1; } ;;
  esac
done <"$script"
for f in build/bundled-report/report.json build/bundled-report/samples.csv build/bundled-report/report.html \
         try/input-bound/report.html try/roofline/roofline.csv try/roofline/roofline.svg try/roofline/roofline.html; do
  [ -s "$work/$f" ] || { echo "FAIL: $f was not written"; failed=1; }
done
# docs/calibration.md#the-bundled-calibration: the bundled report takes the bundled H200 calibration.
calibration=$(python3 -c 'import json, sys; c = json.load(open(sys.argv[1]))["calibration"]
print(c["status"], (c.get("file") or {}).get("name"))' "$work/build/bundled-report/report.json" 2>&1) || true
[ "$calibration" = "partial h200-580.159.04-2026-11-29-full.json" ] ||
  { echo "FAIL: the bundled report's calibration is '$calibration', not partial from the bundled file"; failed=1; }
[ "$failed" = 0 ] && echo "PASS: every command of README.md's no-GPU section"
exit "$failed"
