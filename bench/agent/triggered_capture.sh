#!/usr/bin/env bash
# Triggered captures on a GPU (docs/agent.md#triggered-captures): a small model trains at full speed,
# then is starved by a slow input loader, then runs at full speed again
# (bench/agent/starved_loader.py). The agent runs at its default duty (2 s of every 60 s) with two
# window rules, a plain gap rule and an idle rule, and no one asks it for anything: the capture it
# takes by itself, and the verdict in its report, are what this measures. Beside it, the agent's CPU
# time and memory from /proc with rules off (run A, the same workload at full speed) and on (run B).
#
#   bench/agent/triggered_capture.sh OUT_DIR     BUILD=build/release (diescope, diescope-cupti)
#   Env: FULL_S (30), STARVE_S (60), AFTER_S (10), OFF_S (40: run A's agent), AGENT_DELAY_S (8: the agent
#        starts this long after the workload's first line), STARVE_MS (250), CAPTURE_S (15), SKIP_OFF (0;
#        1: run B only).
#
# Writes into OUT_DIR: env.txt, rules.json, train-{off,on}.txt (steps per second and phase),
# proc-{off,on}.csv (the agent's CPU ticks and RSS once a second), footprint.txt (rules off and on),
# windows-on.txt (each record's window figures), agent-on.log, jobs.json (the job records, with the
# capture linked), and capture/ (capture.json, the report's capture and idle_explained blocks). The
# capture's recording and report stay in WORK.
set -euo pipefail
out_dir=${1:?usage: bench/agent/triggered_capture.sh OUT_DIR   (BUILD=build folder, default build/release)}
cd "$(dirname "$0")/../.."
. bench/common.sh
bench_bin diescope diescope-cupti
python3 -c "import torch" 2>/dev/null || { echo "triggered_capture: PyTorch is not installed" >&2; exit 2; }
bench_out "$out_dir"
bench_work triggered-capture
W=$WORK
FULL_S=${FULL_S:-30}; STARVE_S=${STARVE_S:-60}; AFTER_S=${AFTER_S:-10}; OFF_S=${OFF_S:-40}
AGENT_DELAY_S=${AGENT_DELAY_S:-8}; STARVE_MS=${STARVE_MS:-250}; CAPTURE_S=${CAPTURE_S:-15}
{
  bench_gpu_env
  python3 -c "import torch; print('torch', torch.__version__)"
  nproc
  echo "full_s $FULL_S starve_s $STARVE_S after_s $AFTER_S off_s $OFF_S agent_delay_s $AGENT_DELAY_S starve_ms $STARVE_MS capture_s $CAPTURE_S"
} > "$OUT/env.txt" 2>&1

cat > "$OUT/rules.json" <<EOF
{
  // The bench's rules: both act on one window (for_s 0), so the default duty's window inside the
  // loader phase is enough; at most one capture per GPU in 50 s.
  "captures": {"folder": "$W/captures", "quota_mb": 500, "min_interval_s": 50},
  "rules": [
    {"name": "gap", "when": "gap_over", "points": 40, "for_s": 0, "capture_s": $CAPTURE_S},
    {"name": "starved", "when": "gap_over", "of": "idle", "points": 50, "for_s": 0, "capture_s": $CAPTURE_S}
  ]
}
EOF

# proc_sample PID FILE: once a second, seconds since the agent started, utime+stime and cutime+cstime
# (clock ticks: the agent's own, and its reaped sampler children's), VmRSS and VmHWM (kB).
proc_sample() {
  local pid=$1 file=$2 t0
  t0=$(date +%s.%N)
  echo "t_s,self_ticks,children_ticks,rss_kb,hwm_kb" > "$file"
  while kill -0 "$pid" 2>/dev/null; do
    local stat rss hwm
    stat=$(cut -d' ' -f14-17 "/proc/$pid/stat" 2>/dev/null) || break
    rss=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null) || break
    hwm=$(awk '/^VmHWM/ {print $2}' "/proc/$pid/status" 2>/dev/null) || break
    read -r u s cu cs <<< "$stat"
    echo "$(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN {printf "%.2f", a - b}'),$((u + s)),$((cu + cs)),$rss,$hwm" >> "$file"
    sleep 1
  done
}

# run_case NAME AGENT_SECONDS WORKLOAD_ARGS... AGENT_ARGS after "--"
run_case() {
  local name=$1 agent_s=$2; shift 2
  local wargs=() aargs=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do wargs+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  aargs=("$@")
  python3 bench/agent/starved_loader.py --starve-ms "$STARVE_MS" "${wargs[@]}" > "$OUT/train-$name.txt" 2> "$W/train-$name.err" &
  local train=$!
  for _ in $(seq 1 300); do grep -q '^start' "$OUT/train-$name.txt" 2>/dev/null && break; sleep 0.2; done
  sleep "$AGENT_DELAY_S"
  diescope agent --db "$W/agent-$name.db" --no-listen --ndjson "${aargs[@]}" \
    > "$W/agent-$name.ndjson" 2> "$W/agent-$name.log" &
  local agent=$!
  proc_sample "$agent" "$OUT/proc-$name.csv" &
  local sampler=$!
  sleep "$agent_s"
  kill -TERM "$agent"
  wait "$agent" || echo "agent $name exited $?" >> "$W/agent-$name.log"
  wait "$sampler" 2>/dev/null || true
  wait "$train" || echo "training $name exited $?" >> "$W/train-$name.err"
}

# Run A: rules off, the workload at full speed throughout (SKIP_OFF=1 leaves it out).
[ "${SKIP_OFF:-0}" = 1 ] || run_case off "$OFF_S" --full-s $((OFF_S + AGENT_DELAY_S + 8)) --starve-s 0 --after-s 0 --
# Run B: rules on; the agent runs until the workload's last phase.
on_s=$(python3 -c "print(int($FULL_S + $STARVE_S + $AFTER_S - $AGENT_DELAY_S - 6))")
run_case on "$on_s" --full-s "$FULL_S" --starve-s "$STARVE_S" --after-s "$AFTER_S" -- --rules "$OUT/rules.json"
cp "$W/agent-on.log" "$OUT/agent-on.log"

python3 - "$OUT" "$W" <<'PY'
import csv, glob, json, os, sys
out, work = sys.argv[1], sys.argv[2]
tck = os.sysconf("SC_CLK_TCK")
lines = []
for name in ("off", "on"):
    if not os.path.exists(f"{out}/proc-{name}.csv"):
        continue
    rows = list(csv.DictReader(open(f"{out}/proc-{name}.csv")))
    if len(rows) < 2:
        lines.append(f"{name}: too few samples"); continue
    a, b = rows[0], rows[-1]
    span = float(b["t_s"]) - float(a["t_s"])
    own = (int(b["self_ticks"]) - int(a["self_ticks"])) / tck
    kids = (int(b["children_ticks"]) - int(a["children_ticks"])) / tck
    rss = max(int(r["rss_kb"]) for r in rows) / 1024
    hwm = int(b["hwm_kb"]) / 1024
    lines.append(f"rules {name:3s}: {span:6.1f} s sampled; agent CPU {own:6.2f} s ({100*own/span:5.2f}% of a core); "
                 f"reaped sampler children {kids:6.2f} s; RSS max {rss:6.1f} MiB, VmHWM {hwm:6.1f} MiB")
open(f"{out}/footprint.txt", "w").write("\n".join(lines) + "\n")
with open(f"{out}/windows-on.txt", "w") as f:
    f.write("period_start_s window_s gpu_util die_util gap idle_points counters_on_s\n")
    recs = []
    for l in open(f"{work}/agent-on.ndjson"):
        try:
            recs.append(json.loads(l))
        except ValueError:
            pass
    t0 = None
    for r in recs:
        if "period" not in r: continue
        p = r["period"]; t0 = t0 or p["start_ns"]
        w = r.get("window") or {}
        ws = (w["end_ns"] - w["start_ns"]) / 1e9 if w.get("start_ns") else float("nan")
        h = r.get("headline", {})
        f.write(f"{(p['start_ns']-t0)/1e9:7.1f} {ws:5.2f} {r['gpu_util']['pct']} {r['chip']['die_util_pct']} "
                f"{h.get('gap_pct')} {h.get('stranded_idle_pct')} {r['counters_on_s']:.2f}\n")
os.makedirs(f"{out}/capture", exist_ok=True)
caps = sorted(glob.glob(f"{work}/captures/*/capture.json"))
with open(f"{out}/capture/captures.txt", "w") as f:
    f.write(f"{len(caps)} capture(s)\n")
    for c in caps:
        f.write(os.path.basename(os.path.dirname(c)) + "\n")
for c in caps:
    d = os.path.dirname(c)
    name = os.path.basename(d)
    os.system(f"cp '{c}' '{out}/capture/{name}.capture.json'")
    rj = f"{d}/report.json"
    if os.path.exists(rj):
        r = json.load(open(rj))
        keep = {"capture": r.get("capture"), "headline": r["results"].get("headline"),
                "idle_explained": r["results"].get("idle_explained"),
                "chip_coverage_pct": r["results"].get("chip_coverage_pct")}
        json.dump(keep, open(f"{out}/capture/{name}.report-excerpt.json", "w"), indent=2)
PY
diescope jobs --db "$W/agent-on.db" --format json > "$OUT/jobs.json" 2> "$W/jobs.err" || cat "$W/jobs.err"
ls -la "$W"/captures/*/ >> "$OUT/capture/captures.txt" 2>&1 || true
cat "$OUT/footprint.txt"
