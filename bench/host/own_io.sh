#!/usr/bin/env bash
# I/O done by the measured command itself (docs/method.md#stranded-idle-explained), on a GPU machine:
# bench/host/file_loader.py reads its input from a file before each GPU step, in the main process, in
# worker processes, and from the page cache, each under `diescope run`, with
# bench/host/proc_io_watch.py beside it reading what /proc shows of the command's own I/O.
#
#   bench/host/own_io.sh BIN OUT_DIR [DATA_DIR]
#     BIN holds diescope; DATA_DIR (default: the current folder) holds the 4 GiB input file, on a disk
#     (not a tmpfs). Writes OUT_DIR/env.txt, mounts.txt, and per case CASE.txt (the loader's own
#     figures, diescope's headline and idle explanation), CASE.watch.txt (/proc's view) and
#     CASE.report.json (the report's idle explanation).
set -uo pipefail
# shellcheck source=bench/common.sh
. "$(dirname "$0")/../common.sh"  # bench_bin_dir
bench_bin_dir own_io.sh "${1:-}" "${2:-}" diescope
here=$(cd "$(dirname "$0")" && pwd)
data=$(cd "${3:-.}" && pwd)/own_io_input.bin
{ df -hT "$data%/*" 2>&1; mount | grep -E ' / | /tmp ' ; cat /proc/sys/kernel/task_delayacct 2>&1; } > "$out/mounts.txt"
python3 "$here/file_loader.py" --file "$data" --file-mb 4096 --seconds 0 --gpu none > /dev/null 2>&1
for case in main workers cache; do
  args=(--reader main)
  [ "$case" = workers ] && args=(--reader workers --workers 4)
  [ "$case" = cache ] && args=(--reader main --cache)
  timeout 120 "$bin/diescope" run --output "$work/$case" -- \
    python3 "$here/file_loader.py" --file "$data" --file-mb 4096 --chunk-mb 64 --seconds 8 "${args[@]}" \
    > "$out/$case.txt" 2> "$work/$case.stderr" < /dev/null &
  run=$!
  python3 "$here/proc_io_watch.py" --pid "$run" > "$out/$case.watch.txt" 2>&1
  wait "$run"
  echo "rc $?" >> "$out/$case.txt"
  tail -20 "$work/$case.stderr" >> "$out/$case.txt"
  report=$(find "$work/$case" -name report.json | head -1)
  [ -n "$report" ] && cp "$report" "$out/$case.report.json"
done
rm -f "$data"
rm -rf "$work"
