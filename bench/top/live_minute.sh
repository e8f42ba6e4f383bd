#!/usr/bin/env bash
# `diescope top` live on a GPU machine for a minute over a changing load (docs/top.md): bundled
# workloads of different kinds one after another in the background, then Nsight Compute asked to
# profile one while top holds the counters (with `--source pm` ncu's process ended 1.4 s after its
# start on the H200; with the default `auto` source top steps aside to GPM: docs/top.md#sources).
# SECONDS_TOTAL (default 60) is how long the screen is read; 80 also covers ncu and top's return to
# PM sampling. The screen is read every 2 s, with
# tmux where it is installed, else through a pseudo-terminal (bench/top/pty_capture.py). top's own
# CPU, and its sampler child's, come from /proc/PID/schedstat (ns on a CPU).
#
#   bench/top/live_minute.sh OUT_DIR     BUILD=folder with bin/diescope, diescope-cupti, diescope-workload
#
# Writes OUT_DIR/env.txt (machine, driver, clocks), frames.txt (every screen read, '=== t=S' before
# each), loads.txt (when each load started and ended), cpu.txt (top's and the sampler's CPU) and
# exit.txt (how top ended).
set -euo pipefail
out_dir=${1:?usage: bench/top/live_minute.sh OUT_DIR   (BUILD=build folder)}
cd "$(dirname "$0")/../.."
. bench/common.sh
bench_bin diescope diescope-cupti diescope-workload
bench_out "$out_dir"
bench_work top-live
SECONDS_TOTAL=${SECONDS_TOTAL:-60}
# TOP_ARGS: extra arguments for top (a check of this script without a GPU: --replay FILE --replay-loop).
# CAPTURE=pty reads the screen through the pseudo-terminal even where tmux is installed.
read -r -a top_args <<< "${TOP_ARGS:-}"
{ bench_gpu_env; echo "tmux: $(command -v tmux || echo 'not installed')"; nproc | sed 's/^/cpus: /'; } > "$OUT/env.txt"
cat "$OUT/env.txt"

t0=$(date +%s.%N)
stamp() { awk -v t0="$t0" -v t="$(date +%s.%N)" 'BEGIN { printf "%5.1f", t - t0 }'; }
# The loads, one after another, after 4 s of an idle GPU.
loads() {
  sleep 4
  for load in "ffma --sms 132 --seconds 7" "stream --kernel copy --seconds 7" "gemm --seconds 7" \
              "ffma --sms 33 --seconds 5" "duty --on-ms 50 --period-ms 100 --seconds 5"; do
    echo "$(stamp) start diescope workload $load"
    # shellcheck disable=SC2086
    diescope workload $load > /dev/null 2>&1 || { rc=$?; echo "$(stamp) exit $rc from $load"; }
    echo "$(stamp) end"
    sleep 1
  done
  if command -v ncu > /dev/null; then
    echo "$(stamp) start ncu --clock-control none --metrics sm__cycles_elapsed.avg diescope workload ffma --sms 66 --seconds 7"
    timeout 40 ncu --clock-control none --metrics sm__cycles_elapsed.avg diescope workload ffma --sms 66 --seconds 7 \
      > "$WORK/ncu.txt" 2>&1 || true
    echo "$(stamp) end; ncu's last lines:"
    tail -3 "$WORK/ncu.txt" | sed 's/^/  /'
    grep -m3 "==ERROR==\|==WARNING==" "$WORK/ncu.txt" | sed 's/^/  /' || true
  fi
}

cpu_ns() { awk '{ print $1 }' "/proc/$1/schedstat" 2> /dev/null || echo 0; }
children() { { ps -o pid= --ppid "$1" 2> /dev/null || true; } | tr -d ' ' | head -1; }

if command -v tmux > /dev/null && [ "${CAPTURE:-}" != pty ]; then
  capture=tmux
  tmux -L diescope-top new-session -d -s top -x 120 -y 40 "exec diescope top ${TOP_ARGS:-}"
  top_pid=$(tmux -L diescope-top list-panes -t top -F '#{pane_pid}')
  ( for _ in $(seq 1 $((SECONDS_TOTAL / 2))); do
      sleep 2
      echo "=== t=$(stamp)"
      tmux -L diescope-top capture-pane -p -t top
    done ) > "$OUT/frames.txt" &
  capture_pid=$!
else
  capture=pty
  python3 bench/top/pty_capture.py --cols 120 --rows 40 --every 2 --seconds "$SECONDS_TOTAL" \
    --frames "$OUT/frames.txt" --pid-file "$WORK/top.pid" -- diescope top "${top_args[@]}" > "$WORK/pty.txt" 2>&1 &
  capture_pid=$!
  for _ in $(seq 1 100); do [ -s "$WORK/top.pid" ] && break; sleep 0.1; done
  top_pid=$(cat "$WORK/top.pid")
fi
loads > "$OUT/loads.txt" 2>&1 &
loads_pid=$!

# CPU: top and its sampler child from 3 s in (after start-up) to 38 s (before ncu); top alone to the end.
sleep 3
w0=$(date +%s%N); top0=$(cpu_ns "$top_pid"); child=$(children "$top_pid"); child0=$(cpu_ns "${child:-0}")
sleep 35
w1=$(date +%s%N); top1=$(cpu_ns "$top_pid"); child1=$(cpu_ns "${child:-0}"); child_now=$(children "$top_pid")
rss_kb=$(awk '/VmRSS/ { print $2 }' "/proc/$top_pid/status" 2> /dev/null || echo 0)
wait "$loads_pid" || true
w2=$(date +%s%N); top2=$(cpu_ns "$top_pid")
if [ "$capture" = tmux ]; then
  wait "$capture_pid" || true
  tmux -L diescope-top send-keys -t top q
  sleep 2
  { echo "capture: tmux"; tmux -L diescope-top list-panes -t top -F 'pane dead: #{pane_dead}' 2> /dev/null || echo "session ended with top"; } > "$OUT/exit.txt"
  tmux -L diescope-top kill-server 2> /dev/null || true
else
  wait "$capture_pid" || true
  { echo "capture: pty"; cat "$WORK/pty.txt"; } > "$OUT/exit.txt"
fi
awk -v w0="$w0" -v w1="$w1" -v w2="$w2" -v t0="$top0" -v t1="$top1" -v t2="$top2" -v c0="$child0" -v c1="$child1" \
    -v child="${child:-none}" -v child_now="${child_now:-none}" -v rss="$rss_kb" 'BEGIN {
  printf "window_s %.1f (from 3 s after start, before ncu)\n", (w1 - w0) / 1e9
  printf "top_cpu_pct_of_a_core %.3f\n", 100 * (t1 - t0) / (w1 - w0)
  printf "sampler_child %s (still %s at the end of the window)\n", child, child_now
  printf "sampler_cpu_pct_of_a_core %.3f\n", 100 * (c1 - c0) / (w1 - w0)
  printf "top_cpu_pct_whole_run %.3f over %.1f s (ncu included)\n", 100 * (t2 - t0) / (w2 - w0), (w2 - w0) / 1e9
  printf "top_rss_mib %.1f\n", rss / 1024
}' > "$OUT/cpu.txt"
cat "$OUT/cpu.txt" "$OUT/loads.txt" "$OUT/exit.txt"
