#!/usr/bin/env bash
# I/O done by the measured command itself (docs/method.md#stranded-idle-explained), on a GPU machine:
# bench/host/file_loader.py reads its input from a file before each GPU step, in the main process, in
# worker processes, and from the page cache, each under `diescope run`, with
# bench/host/proc_io_watch.py beside it reading what /proc shows of the command's own I/O; and, where
# the machine lets root make one, from a cgroup throttled to THROTTLE_MBPS.
#
#   bench/host/own_io.sh BIN OUT_DIR [DATA_DIR]
#     BIN holds diescope; DATA_DIR (default: the current folder) holds the 4 GiB input file, on a disk
#     (not a tmpfs). Writes OUT_DIR/env.txt, mounts.txt, and per case CASE.txt (the loader's own
#     figures, diescope's headline and idle explanation), CASE.watch.txt (/proc's view),
#     CASE.report.json and CASE.dsrec (the recording, to analyse again on any machine).
set -uo pipefail
# shellcheck source=bench/common.sh
. "$(dirname "$0")/../common.sh"  # bench_bin_dir
bench_bin_dir own_io.sh "${1:-}" "${2:-}" diescope
here=$(cd "$(dirname "$0")" && pwd)
data=$(cd "${3:-.}" && pwd)/own_io_input.bin
{ df -hT "$(dirname "$data")" 2>&1; mount | grep -E ' / | /tmp ' ; cat /proc/sys/kernel/task_delayacct 2>&1; } > "$out/mounts.txt"
python3 "$here/file_loader.py" --file "$data" --file-mb 4096 --seconds 0 --gpu none > /dev/null 2>&1
# A slow device of our own making: a cgroup whose reads from the file's device are throttled to
# THROTTLE_MBPS (default 20), cgroup v2's io.max or v1's blkio; with delay accounting switched on for
# that case (and back to what it was after), where the kernel has the switch.
mbps=${THROTTLE_MBPS:-20}
dev=$(findmnt -no MAJ:MIN -T "$(dirname "$data")" | head -1 | tr -d ' ')
cg=""
if [ -f /sys/fs/cgroup/cgroup.controllers ] && grep -qw io /sys/fs/cgroup/cgroup.controllers; then
  echo +io > /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
  mkdir "/sys/fs/cgroup/diescope-own-io-$$" 2>/dev/null && cg=/sys/fs/cgroup/diescope-own-io-$$ &&
    { echo "$dev rbps=$((mbps * 1000000))" > "$cg/io.max" || cg=""; }
elif [ -d /sys/fs/cgroup/blkio ]; then
  mkdir "/sys/fs/cgroup/blkio/diescope-own-io-$$" 2>/dev/null && cg=/sys/fs/cgroup/blkio/diescope-own-io-$$ &&
    { echo "$dev $((mbps * 1000000))" > "$cg/blkio.throttle.read_bps_device" || cg=""; }
fi
echo "throttle: device $dev, cgroup ${cg:-none (no writable io or blkio controller)}" >> "$out/mounts.txt"
delayacct=$(cat /proc/sys/kernel/task_delayacct 2>/dev/null || echo absent)
cases="main workers cache"
[ -n "$cg" ] && cases="$cases throttled"
for case in $cases; do
  args=(--reader main --chunk-mb 64)
  [ "$case" = workers ] && args=(--reader workers --workers 4 --chunk-mb 64)
  [ "$case" = cache ] && args=(--reader main --cache --chunk-mb 64)
  [ "$case" = throttled ] && args=(--reader main --chunk-mb 16)
  if [ "$case" = throttled ] && [ "$delayacct" != absent ]; then echo 1 > /proc/sys/kernel/task_delayacct; fi
  (
    [ "$case" = throttled ] && echo $BASHPID > "$cg/cgroup.procs"
    exec timeout 120 "$bin/diescope" run --window markers --output "$work/$case" -- \
      python3 "$here/file_loader.py" --file "$data" --file-mb 4096 --seconds 8 "${args[@]}"
  ) > "$out/$case.txt" 2> "$work/$case.stderr" < /dev/null &
  run=$!
  python3 "$here/proc_io_watch.py" --pid "$run" > "$out/$case.watch.txt" 2>&1
  wait "$run"
  echo "rc $?" >> "$out/$case.txt"
  tail -20 "$work/$case.stderr" >> "$out/$case.txt"
  report=$(find "$work/$case" -name report.json | head -1)
  [ -n "$report" ] && cp "$report" "$out/$case.report.json"
  find "$work/$case" -maxdepth 1 -name '*.dsrec' -exec cp {} "$out/$case.dsrec" \;
  [ "$case" = throttled ] && [ "$delayacct" != absent ] && echo "$delayacct" > /proc/sys/kernel/task_delayacct
done
[ -n "$cg" ] && rmdir "$cg"
rm -f "$data"
rm -rf "$work"
