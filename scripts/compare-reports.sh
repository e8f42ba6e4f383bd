#!/usr/bin/env bash
# Checks that a change left every report unchanged: renders every bundled recording, and the
# synthetic recordings the tests use, with two diescope binaries (every renderer: terminal, report.json,
# samples.csv, report.html, trace.json, and the printed headline) and compares the files byte for
# byte, after blanking the one field that names the program's own version ("tool": {"version": ...}).
#
#   scripts/compare-reports.sh [--changed-on-purpose FILE,...] BEFORE_DIESCOPE AFTER_DIESCOPE [RECORDING...]
#
# RECORDING defaults to every data/recordings/**/*.dsrec plus the synthetic recordings
# diescope-make-recording writes for the tests (probe-shape, input-bound, and a 0.05-hour long run),
# made once by the diescope-make-recording beside AFTER_DIESCOPE (or MAKE_RECORDING=PATH), so both
# binaries read the same files. Exit 0 when every output matches, 1 when one differs (the diff is
# printed), 2 on a usage error. --changed-on-purpose names outputs a change means to alter (e.g.
# report.html,trace.json): they are compared too and their state printed, but a difference in them
# does not fail; everything else (headline, report.json, samples.csv) still must match.
set -euo pipefail
cd "$(dirname "$0")/.."
on_purpose=()
if [ "${1:-}" = --changed-on-purpose ]; then
  IFS=, read -r -a on_purpose <<<"${2:?--changed-on-purpose needs a list of file names}"
  shift 2
fi
if (($# < 2)); then
  sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
before=$(realpath "$1"); after=$(realpath "$2"); shift 2
for bin in "$before" "$after"; do
  [ -x "$bin" ] || { echo "compare-reports: $bin is not an executable diescope; build one first" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if (($#)); then
  recordings=("$@")
else
  mapfile -t recordings < <(find data/recordings -name '*.dsrec' | sort)
  maker=${MAKE_RECORDING:-$(dirname "$after")/diescope-make-recording}
  if [ ! -x "$maker" ]; then
    echo "compare-reports: no diescope-make-recording at $maker for the synthetic recordings; fix: build it (cmake --build BUILD --target diescope-make-recording) or set MAKE_RECORDING" >&2
    exit 2
  fi
  mkdir -p "$work/synthetic"
  "$maker" probe-shape "$work/synthetic/"probe-shape.dsrec
  "$maker" input-bound "$work/synthetic/"input-bound.dsrec
  "$maker" long 0.05 "$work/synthetic/"long-3min.dsrec
  recordings+=("$work/synthetic/probe-shape.dsrec" "$work/synthetic/input-bound.dsrec"
               "$work/synthetic/long-3min.dsrec")
fi

render() {  # render BIN RECORDING OUTDIR: every format plus what the command printed
  local bin=$1 recording=$2 out=$3 rc=0
  mkdir -p "$out"
  # A fixed working folder and relative paths keep the paths written into the reports identical.
  # --out, the old spelling of --output, is the one every build before and after the rename takes.
  (cd "$PWD" && "$bin" report "$recording" --format terminal,json,csv,html,trace --out "$out/report" \
     >"$out/stdout.txt" 2>"$out/stderr.txt") || rc=$?
  echo "$rc" >"$out/exit-code.txt"
  # The tool's own version is the one field allowed to differ.
  find "$out" -type f -print0 | xargs -0 sed -i -E \
    -e 's/("tool": *\{"name": *"diescope", *"version": *)"[^"]*"/\1"X"/g' \
    -e 's/(diescope )[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.]+)?/\1X/g'
}

status=0
for recording in "${recordings[@]}"; do
  name=$(echo "$recording" | tr '/' '_')
  render "$before" "$recording" "$work/before/$name"
  render "$after" "$recording" "$work/after/$name"
  # The --out folder name appears in the printed lines; both runs wrote to a folder of the same shape.
  sed -i "s#$work/before/#$work/X/#g" $(find "$work/before/$name" -type f)
  sed -i "s#$work/after/#$work/X/#g" $(find "$work/after/$name" -type f)
  for file in "${on_purpose[@]}"; do
    b="$work/before/$name/report/$file"; a="$work/after/$name/report/$file"
    [ -e "$b" ] || [ -e "$a" ] || continue
    if cmp -s "$b" "$a"; then echo "  same on purpose  $file"; else echo "  changed on purpose  $file ($(stat -c %s "$b" 2>/dev/null || echo 0) -> $(stat -c %s "$a" 2>/dev/null || echo 0) bytes)"; fi
    rm -f "$b" "$a"
  done
  if diff -r "$work/before/$name" "$work/after/$name" >"$work/diff.txt"; then
    echo "same      $recording ($(find "$work/after/$name" -type f | wc -l) files)"
  else
    echo "DIFFERENT $recording"
    head -40 "$work/diff.txt"
    status=1
  fi
done
echo "compare-reports: ${#recordings[@]} recordings, $( ((status)) && echo "some outputs DIFFER" || echo "every output identical")"
exit $status
