#!/usr/bin/env bash
# The measured command's own I/O where the GPU machine cannot show it (it runs gVisor: no cgroup to
# throttle, no delay accounting), on the CPU machine as root with cgroup v1's blkio controller
# (docs/method.md#stranded-idle-explained): bench/host/file_loader.py --gpu none (a loop that reads
# a chunk of a file, then sleeps as a GPU step would) under own_io_probe (diescope's host probes),
# four cases: from the disk; from the page cache; from the disk in a blkio cgroup throttled to
# THROTTLE_MBPS (default 20); and that again with kernel.task_delayacct on (set for the case and
# restored to what it was after).
#
#   bench/host/own_io_cpu.sh BIN OUT_DIR [DATA_DIR]
#     BIN holds own_io_probe; DATA_DIR (default: the current folder) gets the 1 GiB input file, on a
#     disk. Writes OUT_DIR/env.txt and CASE.txt per case (the loader's own figures, then the probe's).
set -uo pipefail
bin=$(cd "${1:?usage: own_io_cpu.sh BIN OUT_DIR [DATA_DIR]}" && pwd)
mkdir -p "${2:?usage: own_io_cpu.sh BIN OUT_DIR [DATA_DIR]}"
out=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
data=$(cd "${3:-.}" && pwd)/own_io_cpu_input.bin
mbps=${THROTTLE_MBPS:-20}
[ -x "$bin/own_io_probe" ] || { echo "own_io_cpu.sh: no $bin/own_io_probe" >&2; exit 2; }
dev=$(findmnt -no MAJ:MIN -T "$(dirname "$data")" | head -1 | tr -d ' ')
cg=/sys/fs/cgroup/blkio/diescope-own-io-$$
delayacct=$(cat /proc/sys/kernel/task_delayacct 2>/dev/null || echo absent)
{ date -u; uname -r; nproc; echo "device $dev; task_delayacct $delayacct; throttle $mbps MB/s"; } > "$out/env.txt"
python3 "$here/file_loader.py" --file "$data" --file-mb 1024 --seconds 0 --gpu none > /dev/null
loader=(python3 "$here/file_loader.py" --file "$data" --file-mb 1024 --chunk-mb 16 --seconds 8 --gpu none --step-ms 5)
run_case() {  # run_case NAME [--cache] : the loader under the probe, in the current cgroup
  local name=$1
  shift
  "$bin/own_io_probe" --interval-ms 100 -- "${loader[@]}" "$@" > "$out/$name.txt" 2>&1
  echo "rc $?" >> "$out/$name.txt"
}
run_case disk
run_case cache --cache
mkdir "$cg" && echo "$dev $((mbps * 1000000))" > "$cg/blkio.throttle.read_bps_device" || {
  echo "own_io_cpu.sh: cannot make a throttled blkio cgroup at $cg (root and cgroup v1 blkio needed)" >&2; exit 2; }
throttled() { (echo $BASHPID > "$cg/cgroup.procs" && run_case "$@"); }
throttled throttled
if [ "$delayacct" != absent ]; then
  echo 1 > /proc/sys/kernel/task_delayacct
  throttled throttled-delayacct
  echo "$delayacct" > /proc/sys/kernel/task_delayacct
fi
rmdir "$cg"
rm -f "$data"
for f in disk cache throttled throttled-delayacct; do [ -f "$out/$f.txt" ] && { echo "== $f"; cat "$out/$f.txt"; }; done
