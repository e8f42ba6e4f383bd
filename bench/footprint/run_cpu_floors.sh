#!/usr/bin/env bash
# `diescope run`'s own CPU and memory at 10 and 1 ms, GPU idle, for two builds alternated (before,
# after, before, after) through bench/footprint/footprint.sh's idle section; then the after build
# with DIESCOPE_RUN_TIMING=1, whose `run-timing` note gives its loop's CPU part by part
# (docs/footprint.md#runs-own-parts; parts.tsv by bench/footprint/run_parts.py); then the floors
# beside them in the same call: CUPTI alone (pm_minimal) with the sampler child's interval, decode
# period, image and hardware buffer at 10 and 1 ms, decoding only and with evaluation, and a bare
# CUDA program's RSS (bench/footprint/run_floors.py). Each recording's GPU-Util samples are counted
# (util.tsv): every build's recording must hold a sample every NVML sample period, however often it
# reads them. Docs: docs/footprint.md.
#
#   bench/footprint/run_cpu_floors.sh OUT_DIR BEFORE_BIN AFTER_BIN
#
# BEFORE_BIN and AFTER_BIN are folders with diescope, diescope-cupti, diescope-workload, pm_minimal,
# bare_cuda and nvml_poll (footprint.sh asks for them). FLOORS_IDLE (default 10:100:20,1:100:20) is
# footprint.sh's FOOTPRINT_IDLE; FLOORS_ROUNDS (default 2) the before/after pairs; FLOORS_SECONDS
# (default 20) each pm_minimal and bare_cuda run. Writes OUT_DIR/idle-<build><round>/ (footprint.sh's
# tables), timing.txt, parts.tsv, floors.tsv, util.tsv, env.txt; raw outputs in WORK (default a new
# temporary folder). Reads clocks and limits, never sets them.
set -euo pipefail
(($# == 3)) || { sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
mkdir -p "$1"
out=$(cd "$1" && pwd)
before=$(cd "$2" && pwd)
after=$(cd "$3" && pwd)
cd "$(dirname "$0")/../.."
work=${WORK:-$(mktemp -d)}
mkdir -p "$work"
idle=${FLOORS_IDLE:-10:100:20,1:100:20}
rounds=${FLOORS_ROUNDS:-2}
for ((r = 1; r <= rounds; r++)); do
  for build in before after; do
    bin=$before
    [ "$build" = after ] && bin=$after
    echo "run_cpu_floors: $build, round $r, $(date -u +%H:%M:%S)" >&2
    BIN=$bin WORK="$work/idle-$build$r" FOOTPRINT_IDLE=$idle \
      bash bench/footprint/footprint.sh "$out/idle-$build$r" idle || echo "footprint.sh failed for $build$r" >&2
  done
done
cp "$out/idle-before1/env.txt" "$out/env.txt" 2> /dev/null || true
# The after build's parts, at each interval of FLOORS_IDLE, with run's own clocks on.
: > "$out/timing.txt"
IFS=, read -r -a runs <<< "$idle"
for run in "${runs[@]}"; do
  IFS=: read -r iv host_ms seconds <<< "$run"
  dir="$work/timed-$iv"
  rm -rf "$dir"
  DIESCOPE_RUN_TIMING=1 "$after/diescope" run --interval-ms "$iv" --host-interval-ms "$host_ms" --output "$dir" \
    -- sleep "$seconds" > "$work/timed-$iv.out" 2>&1 || echo "the timed run at $iv ms failed" >&2
  {
    echo "interval_ms $iv host_interval_ms $host_ms seconds $seconds"
    grep -h '^note [0-9]* run-timing\|^note [0-9]* host_probes' "$dir"/gpu*.dsrec || echo "no run-timing note"
  } >> "$out/timing.txt"
done
# GPU-Util samples in every recording: count, span, the longest step between two.
{
  printf 'recording\tutil_samples\tspan_s\tper_second\tlongest_step_ms\n'
  for f in "$work"/idle-*/idle-*/gpu0.dsrec "$work"/timed-*/gpu0.dsrec; do
    [ -f "$f" ] || continue
    awk -v name="${f#"$work"/}" '$1 == "util" { n++; if (n == 1) first = $2; else if ($2 - last > step) step = $2 - last; last = $2 }
      END { span = (last - first) / 1e9; rate = 0; if (span > 0) rate = (n - 1) / span
        printf "%s\t%d\t%.3f\t%.3f\t%.1f\n", name, n, span, rate, step / 1e6 }' "$f"
  done
} > "$out/util.tsv"
python3 bench/footprint/run_parts.py "$out/timing.txt" > "$out/parts.tsv" || echo "run_parts.py failed" >&2
BIN=$after FLOORS_SECONDS=${FLOORS_SECONDS:-20} python3 bench/footprint/run_floors.py "$out" "$work" ||
  echo "run_floors.py failed" >&2
echo "run_cpu_floors: tables in $out; raw outputs in $work" >&2
