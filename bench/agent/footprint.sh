#!/usr/bin/env bash
# The agent's footprint at its default setting (poll 1 s, counters on 2000 ms of every 60000 ms), in
# replay mode: resident memory, CPU time per hour (from /proc/<pid>/stat) and /metrics latency
# (p50/p99 over many requests, one connection each). Runs on any CPU machine (no GPU); writes
# OUT_DIR/footprint.txt.
#
#   bench/agent/footprint.sh OUT_DIR [SECONDS] [REQUESTS]     BUILD=build/release (a build with diescope)
#
# Replay stands in for the GPU: it reads a looping recording instead of NVML, and no sampler child
# runs. On a GPU host the agent also pays for the NVML reads at each poll, and the sampler child
# (a separate process, on for 2 s a minute) is not counted here.
set -euo pipefail
out_dir=${1:?usage: bench/agent/footprint.sh OUT_DIR [SECONDS] [REQUESTS]   (BUILD=build folder, default build/release)}
seconds=${2:-300}
requests=${3:-5000}
mkdir -p "$out_dir"
out="$(cd "$out_dir" && pwd)/footprint.txt"
cd "$(dirname "$0")/../.."
build=${BUILD:-build/release}
bin="$build/bin/diescope"
recording=data/recordings/h200-probe-shape.dsrec
[ -x "$bin" ] || { echo "footprint: no $bin; build the diescope target first" >&2; exit 2; }

work=$(mktemp -d)
pid=""
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
"$bin" agent --replay "$recording" --replay-loop --db "$work/agent.db" --listen 127.0.0.1:0 \
  2> "$work/agent.err" > /dev/null &
pid=$!
port=""
for _ in $(seq 50); do
  port=$(sed -n 's#.*serving /metrics on http://127.0.0.1:\([0-9]*\)/metrics#\1#p' "$work/agent.err")
  [ -n "$port" ] && break
  sleep 0.1
done
[ -n "$port" ] || { cat "$work/agent.err" >&2; echo "footprint: the agent did not start" >&2; exit 1; }

clk_tck=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }   # utime + stime
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$pid/status"; }

# Phase 1: the agent alone at its default setting.
start_ticks=$(cpu_ticks); start_ns=$(date +%s%N)
rss_max=0; rss_sum=0; rss_n=0
end=$(( $(date +%s) + seconds ))
while [ "$(date +%s)" -lt "$end" ]; do
  r=$(rss_kb); rss_sum=$((rss_sum + r)); rss_n=$((rss_n + 1)); [ "$r" -gt "$rss_max" ] && rss_max=$r
  sleep 5
done
end_ticks=$(cpu_ticks); end_ns=$(date +%s%N)
records=$(sqlite3 "$work/agent.db" 'SELECT count(*) FROM records')

# Phase 2: /metrics latency, one new connection per request, one request at a time.
python3 - "$port" "$requests" > "$work/latency.txt" <<'PY'
import http.client, sys, time
port, n = int(sys.argv[1]), int(sys.argv[2])
times = []
for _ in range(n):
    t0 = time.perf_counter()
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    c.request("GET", "/metrics")
    r = c.getresponse(); body = r.read(); c.close()
    assert r.status == 200 and b"diescope_die_util_percent" in body
    times.append(time.perf_counter() - t0)
times.sort()
q = lambda p: times[min(len(times) - 1, int(p * len(times)))] * 1e3
print(f"{n} {q(0.50):.3f} {q(0.99):.3f} {times[-1]*1e3:.3f} {len(body)}")
PY
rss_after=$(rss_kb); [ "$rss_after" -gt "$rss_max" ] && rss_max=$rss_after
read -r n p50 p99 pmax bytes < "$work/latency.txt"
kill -TERM "$pid"; wait "$pid" || true

wall_s=$(awk -v a="$start_ns" -v b="$end_ns" 'BEGIN {printf "%.1f", (b - a) / 1e9}')
cpu_s=$(awk -v a="$start_ticks" -v b="$end_ticks" -v t="$clk_tck" 'BEGIN {printf "%.2f", (b - a) / t}')
core_pct=$(awk -v c="$cpu_s" -v w="$wall_s" 'BEGIN {printf "%.3f", 100 * c / w}')
cpu_per_hour=$(awk -v c="$cpu_s" -v w="$wall_s" 'BEGIN {printf "%.1f", 3600 * c / w}')
rss_mean=$(awk -v s="$rss_sum" -v n="$rss_n" 'BEGIN {printf "%.1f", s / n / 1024}')
rss_max_mb=$(awk -v m="$rss_max" 'BEGIN {printf "%.1f", m / 1024}')
verdict() { awk -v v="$1" -v g="$2" 'BEGIN {print (v < g) ? "meets" : "MISSES"}'; }

{
  echo "diescope agent footprint (BUILD=$build bench/agent/footprint.sh OUT_DIR $seconds $requests)"
  echo "date:     $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit:   $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "machine:  $(uname -srm); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $(nproc) cores; no GPU"
  echo "setting:  replay of $recording, looping; poll 1000 ms; counters on 2000 ms of every 60000 ms;"
  echo "          SQLite store (WAL, synchronous=FULL); /metrics on 127.0.0.1"
  echo "phase 1:  ${wall_s} s of the agent alone, RSS read every 5 s; $records record(s) written"
  echo "phase 2:  $n GET /metrics, one connection each, one at a time (python3 http.client); body $bytes bytes"
  echo
  echo "resident memory:  max ${rss_max_mb} MB, mean ${rss_mean} MB (phase 1)        goal < 30 MB: $(verdict "$rss_max_mb" 30)"
  echo "CPU:              ${cpu_s} s in ${wall_s} s = ${core_pct}% of one core = ${cpu_per_hour} CPU-s per hour   goal < 0.5%: $(verdict "$core_pct" 0.5)"
  echo "/metrics latency: p50 ${p50} ms, p99 ${p99} ms, max ${pmax} ms (client side, incl. connect)   goal p99 < 5 ms: $(verdict "$p99" 5)"
  echo
  echo "Not counted: on a GPU host the agent also reads NVML at each poll, and the sampler child (a separate"
  echo "process, running only inside each 2 s window) has its own footprint."
} > "$out"
cat "$out"
