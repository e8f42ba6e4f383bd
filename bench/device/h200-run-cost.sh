#!/usr/bin/env bash
# diescope run's own CPU cost on the H200 with the final Hopper table: the parent and the sampler
# child, from /proc, over the steady middle of a run of `diescope workload ffma` (which queues its
# kernels ahead), at 10 ms and at 1 ms (60 s: the shortest-interval check), plus a GEMM run. The
# recordings show gaps, overflows and when the counters went off after the command ended.
# Run from the repository root on the GPU machine with the binaries in $BIN; writes $OUT/run-cost.tgz.
set -u
BIN=${BIN:-$PWD/build/lead-carry}
OUT=${OUT:-/tmp/run-cost-out}
W=/tmp/run-cost-work
rm -rf "$W" && mkdir -p "$W" "$OUT"
export PATH=$BIN:$PATH
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}
{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit --format=csv
  diescope --version
} > "$W/env.txt" 2>&1
# CPU time of every thread of a process, in ns (schedstat: no 10 ms tick rounding).
cpu_ns() { cat /proc/$1/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%d", s }'; }
# measure NAME INTERVAL_MS WORKLOAD_SECONDS SKIP_S MEASURE_S -- WORKLOAD...
measure() {
  local name=$1 iv=$2 skip=$4 span=$5; shift 6
  mkdir -p "$W/$name"
  diescope run --interval-ms "$iv" --window markers --report "$W/$name" -- diescope workload "$@" \
    > "$W/$name/stdout.txt" 2> "$W/$name/stderr.txt" &
  local rp=$!
  sleep "$skip"
  local sp; sp=$(pgrep -P $rp -f diescope-cupti | head -1)
  local p0 c0 t0 p1 c1 t1
  p0=$(cpu_ns $rp); c0=$(cpu_ns $sp); t0=$(date +%s%N)
  sleep "$span"
  p1=$(cpu_ns $rp); c1=$(cpu_ns $sp); t1=$(date +%s%N)
  wait $rp
  awk -v n="$name" -v iv="$iv" -v p=$((p1 - p0)) -v c=$((c1 - c0)) -v a="$t0" -v b="$t1" 'BEGIN{
    s = (b - a) / 1e9
    printf "%s (%s ms): over %.1f s, diescope run %.2f%% of one core, sampler child %.2f%%, together %.2f%%\n", n, iv, s, 100*p/1e9/s, 100*c/1e9/s, 100*(p+c)/1e9/s }' \
    | tee -a "$W/summary.txt"
  local rec="$W/$name/gpu0.dsrec"
  awk -v n="$name" '$1 == "end" { e = $2 } $1 == "counters" && $3 == "off" { o = $2 } $1 == "gap" { g++ } $1 == "overflow" { v++ }
      END { printf "%s: counters off %.0f ms after the command ended; gap records %d, overflow records %d\n", n, (o - e) / 1e6, g, v }' "$rec" | tee -a "$W/summary.txt"
  grep -i "gap\|overflow\|lost" "$W/$name/stdout.txt" | head -5 >> "$W/summary.txt"
}
for m in ${*:-ffma10 ffma1 gemm10 copy10}; do case $m in
  ffma10) measure ffma10 10 14 4 8 -- ffma --seconds 14 ;;
  ffma10long) measure ffma10long 10 34 4 28 -- ffma --seconds 34 ;;
  ffma10mid) measure ffma10mid 10 20 4 14 -- ffma --seconds 20 ;;
  ffma1) measure ffma1 1 62 5 50 -- ffma --seconds 62 ;;
  gemm10) measure gemm10 10 5 2 2 -- gemm --seconds 5 ;;
  copy10) measure copy10 10 4 2 1 -- stream --kernel copy --seconds 4 ;;
esac; done
find "$W" -name samples.csv -o -name '*.html' -o -name '*trace*' | xargs rm -f
[ -f "$W"/ffma1/gpu0.dsrec ] && gzip -9 "$W"/ffma1/gpu0.dsrec
tar czf "$OUT/run-cost.tgz" -C "$W" .
cat "$W/summary.txt"
