#!/usr/bin/env bash
# Every command that runs the live path, on the bundled workloads, in one go on a GPU machine: `run`
# (FFMA over 66 SMs and STREAM copy), `top --once` over FFMA, `agent` alone and beside Nsight Compute,
# `bench --rounds 3` on STREAM copy and `calibrate --quick`. Run it once with a build from before a
# change to the live path and once with one from after: bench/live/every_command_table.py puts
# the figures of both side by side (the figures must agree within run-to-run spread).
#
#   bench/live/every_command.sh BIN OUT_DIR    BIN: folder with diescope, diescope-cupti and
#                                                 diescope-workload (built elsewhere, carried here)
#
# Writes into OUT_DIR: env.txt (machine, clocks), figures.json (each command's figures, read from its
# own files by live_commands_table.py), and log.txt (each command's exit status and the end of its
# output). Clocks, power limits and modes are read, never set; ncu runs with --clock-control none.
set -uo pipefail
cd "$(dirname "$0")/../.."
. bench/common.sh
bench_bin_dir every_command.sh "${1:-}" "${2:-}" diescope diescope-cupti diescope-workload
export PATH="$bin:$PATH"
log="$out/log.txt"
: > "$log"
step() { # step NAME LIMIT_S CMD...: CMD's exit status and output's end into log.txt
  local name=$1 limit=$2 rc=0
  shift 2
  timeout -k 5 "$limit" "$@" > "$work/$name.stdout" 2> "$work/$name.stderr" < /dev/null || rc=$?
  { echo "## $name: exit $rc"; echo "\$ $*"; grep -v '^{' "$work/$name.stdout" | tail -12; tail -6 "$work/$name.stderr"; } >> "$log"
  echo "$name: exit $rc"
}
scrape() { # scrape FILE: one /metrics scrape of the agent on port 9402
  python3 -c 'import sys,urllib.request; sys.stdout.write(urllib.request.urlopen("http://127.0.0.1:9402/metrics", timeout=5).read().decode())' > "$1" 2>&1 || true
}

step run-ffma66 60 diescope run --window markers --output "$work/run-ffma66" -- diescope workload ffma --sms 66 --seconds 4
step run-copy 60 diescope run --window markers --output "$work/run-copy" -- diescope workload stream --kernel copy --seconds 4

# top --once, 3 s into an FFMA over 66 SMs.
diescope workload ffma --sms 66 --seconds 7 > /dev/null 2>&1 &
load=$!
sleep 3
step top-once 30 diescope top --once
wait "$load"

# The agent alone: counters always on, 5 s records, over 12 s of FFMA on 66 SMs; scraped at 11 s.
diescope workload ffma --sms 66 --seconds 12 > /dev/null 2>&1 &
load=$!
diescope agent --no-db --ndjson --duty-period-ms 5000 --duty-on-ms 5000 --host-interval-ms 0 \
  > "$work/agent-alone.stdout" 2> "$work/agent-alone.stderr" &
agent=$!
sleep 11
scrape "$work/agent-alone.metrics"
wait "$load"
kill -TERM "$agent"; rc=0; wait "$agent" || rc=$?
{ echo "## agent-alone: exit $rc"; tail -4 "$work/agent-alone.stderr"; } >> "$log"

# The agent beside Nsight Compute profiling another process: it must read GPM and say so.
ncu --clock-control none --metrics sm__cycles_elapsed.avg diescope workload ffma --sms 66 --seconds 40 \
  > "$work/ncu.txt" 2>&1 &
ncu_pid=$!
sleep 6
diescope agent --no-db --ndjson --duty-period-ms 5000 --duty-on-ms 5000 --host-interval-ms 0 \
  > "$work/agent-ncu.stdout" 2> "$work/agent-ncu.stderr" &
agent=$!
sleep 11
scrape "$work/agent-ncu.metrics"
kill -TERM "$agent"; rc=0; wait "$agent" || rc=$?
wait "$ncu_pid" || true
{ echo "## agent-ncu: exit $rc"; tail -4 "$work/agent-ncu.stderr"; echo "### ncu (tail)"; tail -3 "$work/ncu.txt"; } >> "$log"

step bench-copy 120 diescope bench --rounds 3 --output "$work/bench-copy" --workload stream -- --kernel copy --seconds 3
step calibrate-quick 180 diescope calibrate --quick --output "$work/calibration.json" --json

python3 bench/live/every_command_table.py collect "$work" > "$out/figures.json" 2>> "$log"
# The agents' records (one JSON line each) and top's screen, small enough to keep.
cat "$work/agent-alone.stdout" > "$out/agent-alone.ndjson"
cat "$work/agent-ncu.stdout" > "$out/agent-ncu.ndjson"
cp "$work/top-once.stdout" "$out/top-once.txt"
cat "$out/figures.json"
echo "raw outputs in $work"
