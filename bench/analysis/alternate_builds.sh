#!/usr/bin/env bash
# Two or more builds of `diescope report` on one recording, run in turn (one run of each, then the
# next round), so that a shared machine's load falls on all of them alike: for each format, every
# run's wall and CPU seconds (user + system) and each build's fastest CPU time. Runs on any CPU
# machine (no GPU). Writes OUT_FILE with the machine, the load average before and after, and the
# command.
#
#   bench/analysis/alternate_builds.sh OUT_FILE RECORDING DIESCOPE_BINARY...
#       ROUNDS=5; FORMATS="json terminal,json,html,trace"
set -euo pipefail
out=${1:?usage: bench/analysis/alternate_builds.sh OUT_FILE RECORDING DIESCOPE_BINARY... (ROUNDS, FORMATS)}
rec=${2:?usage: bench/analysis/alternate_builds.sh OUT_FILE RECORDING DIESCOPE_BINARY... (ROUNDS, FORMATS)}
shift 2
(($#)) || { echo "alternate_builds: name at least one diescope binary" >&2; exit 2; }
binaries=("$@")
for bin in "${binaries[@]}"; do
  [ -x "$bin" ] || { echo "alternate_builds: no $bin; build the diescope target first" >&2; exit 2; }
done
[ -r "$rec" ] || { echo "alternate_builds: cannot read $rec; make one with diescope-make-recording long HOURS FILE" >&2; exit 2; }
rounds=${ROUNDS:-5}
read -r -a formats <<<"${FORMATS:-json terminal,json,html,trace}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/diescope-alternate.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$(dirname "$out")"
{
  echo "# diescope report, builds run in turn (bench/analysis/alternate_builds.sh)"
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores"
  echo "recording: $rec ($(($(stat -c %s "$rec") / 1048576)) MiB, $(grep -c '^chip ' "$rec") chip samples)"
  for i in "${!binaries[@]}"; do echo "binary $((i + 1)): ${binaries[$i]}"; done
  echo "rounds: $rounds; each run: wall_s, cpu_s = user + system; best = the fastest cpu_s of the rounds"
  echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  wc -l "$rec" >/dev/null  # into the page cache
  for format in "${formats[@]}"; do
    declare -A best=()
    for round in $(seq "$rounds"); do
      for i in "${!binaries[@]}"; do
        /usr/bin/time -f "%e %U %S" -o "$tmp/time" "${binaries[$i]}" report "$rec" --format "$format" --output "$tmp/out" >/dev/null
        read -r wall user sys <"$tmp/time"
        cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN {printf "%.2f", u + s}')
        echo "round=$round binary=$((i + 1)) format=$format wall_s=$wall cpu_s=$cpu"
        if [ -z "${best[$i]:-}" ] || awk -v a="$cpu" -v b="${best[$i]}" 'BEGIN {exit !(a < b)}'; then best[$i]=$cpu; fi
        rm -rf "$tmp/out"
      done
    done
    for i in "${!binaries[@]}"; do echo "best binary=$((i + 1)) format=$format cpu_s=${best[$i]}"; done
    unset best
  done
  echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out"
