#!/usr/bin/env bash
# How fast a STREAM triad (a = b + s c over float vectors) can move bytes on this GPU, by kernel form
# and grid: stream_variants (bench/calibrate/stream_variants.cu) times each form with CUDA events,
# best of the repeats, with L2 flushed before each repeat by writing or by reading a 256 MiB buffer.
# This is the search behind calibrate's STREAM forms and behind cold timing's read flush. Runs on a
# GPU machine. Writes one CSV per case into OUT_DIR, named <2^N elements>-<flush>-flush.csv.
#
#   bench/calibrate/stream_forms.sh OUT_DIR [N:REPEATS:FLUSH...]     BUILD=build/release (stream_variants)
#   default cases: 26:20:write 26:20:read 28:5:write (2^26 and 2^28 floats per vector)
set -euo pipefail
out_dir=${1:?usage: bench/calibrate/stream_forms.sh OUT_DIR [N:REPEATS:FLUSH...]   (BUILD=build folder, default build/release)}
shift
cd "$(dirname "$0")/../.."
. bench/common.sh
bench_bin stream_variants
bench_out "$out_dir"
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(26:20:write 26:20:read 28:5:write)
for c in "${cases[@]}"; do
  IFS=: read -r n repeats flush <<< "$c"
  case $flush in write|read) ;; *) echo "stream_forms: flush must be write or read, not '$flush'" >&2; exit 2 ;; esac
  timeout 150 stream_variants $((1 << n)) "$repeats" "$flush" > "$OUT/2e$n-$flush-flush.csv"
  echo "2^$n floats, best of $repeats, $flush flush: fastest $(sort -t, -k7 -nr "$OUT/2e$n-$flush-flush.csv" | head -1)"
done
