#!/usr/bin/env bash
# A window the workload prints afterwards, and run --duty, on a GPU (docs/method.md#a-window-printed-afterwards,
# docs/method.md#duty-cycles-in-run):
#  1. `run --window markers` on a PyTorch bf16 matmul benchmark that prints no markers, only, after its
#     timed repetitions and an idle second, 'diescope: measure window START STOP' (time.time());
#  2. the same with 'diescope: measure last SECONDS' printed as the timed part ends;
#  3. `bench --rounds 2` on the first form, so bench keeps rounds whose windows were printed;
#  4. `run --duty 2000/4000 --window markers` on the FFMA workload (12 s): counters on 2 s of every 4 s.
# Writes OUT_DIR/figures.txt (every figure the README quotes, from the reports) and OUT_DIR/runs.txt
# (commands, exit codes, headlines, warnings).
#
#   bench/run/printed_window_and_duty.sh OUT_DIR     BUILD=build folder with diescope, diescope-cupti, diescope-workload
set -euo pipefail
out_dir=${1:?usage: bench/run/printed_window_and_duty.sh OUT_DIR   (BUILD=build folder)}
cd "$(dirname "$0")/../.."
. bench/common.sh
bench_bin diescope diescope-cupti diescope-workload
bench_out "$out_dir"
bench_work printed-window
bench_gpu_env > "$OUT/env.txt"
mm=workloads/pytorch/matmul_bench.py

run_one() {  # NAME ARGS...: one command, its headline and warnings into runs.txt
  local name=$1 rc=0
  shift
  echo "\$ $*" >> "$OUT/runs.txt"
  "$@" > "$WORK/$name.stdout" 2> "$WORK/$name.stderr" < /dev/null || rc=$?
  {
    echo "exit $rc"
    grep -v '^{' "$WORK/$name.stdout" | grep -v '^diescope: measure' || true
    grep -E 'warning|error|fix' "$WORK/$name.stderr" || true
    grep '^{' "$WORK/$name.stdout" || true
    echo
  } >> "$OUT/runs.txt"
}

: > "$OUT/runs.txt"
run_one times diescope run --window markers --output "$WORK/times" -- python3 $mm --seconds 5 --form times
run_one last diescope run --window markers --output "$WORK/last" -- python3 $mm --seconds 5 --form last
run_one bench diescope bench --rounds 2 --output "$WORK/bench" -- python3 $mm --seconds 3 --form times
run_one duty diescope run --duty 2000/4000 --window markers --output "$WORK/duty" -- \
  diescope workload ffma --seconds 12

python3 - "$WORK" > "$OUT/figures.txt" <<'PY'
import glob, json, sys
work = sys.argv[1]

def report(folder):
    return json.load(open(glob.glob(f"{folder}/gpu0.dsrec.report/report.json")[0]))

def bench_line(folder):
    for line in open(f"{work}/{folder}.stdout"):
        if line.startswith("{"):
            return json.loads(line)

def f(x, digits=2):
    return "n/a" if x is None else f"{x:.{digits}f}"

def span(name, s):
    units = {u["key"]: u.get("mean_pct") for u in s["units"]}
    gate = s["chip_coverage_gate"]
    return (f"  {name}: {f(s.get('span_s'), 3)} s, DIE-Util {f(s.get('die_util_pct'))}%, "
            f"GPU-Util {f(s.get('gpu_util_pct'))}%, limiting {s.get('limiting_unit')}, tensor {f(units.get('tensor'))}%, "
            f"fp32 {f(units.get('fp32'))}%, chip coverage {f(s.get('chip_coverage_pct'), 1)}% of {gate.get('of')}, "
            f"scheduled {f(s.get('chip_scheduled_s'), 3)} s, partial {gate.get('partial')} {gate.get('wording', '')}, "
            f"samples {s.get('samples')}")

for form in ("times", "last"):
    r = report(f"{work}/{form}")
    b = bench_line(form)
    w = r["window"]
    print(f"## run --window markers, matmul_bench.py --form {form}")
    print(f"  the program's own timing: {b['repetitions']} repetitions in {b['seconds']} s, {b['tflops']} TFLOP/s, "
          f"start {b['start']} stop {b['stop']}")
    print(f"  window: found {w['found']}, how {w.get('how')}, start_ns {w['results']['start_ns']}, "
          f"end_ns {w['results']['end_ns']}")
    length = (w['results']['end_ns'] - w['results']['start_ns']) / 1e9
    print(f"  window length {length:.6f} s against the program's {b['seconds']} s: difference {length - b['seconds']:+.6f} s")
    print(span("run", r["results"]))
    print(span("window", w["results"]))
    for n in r["notes"]:
        if n["topic"] == "window":
            print(f"  note: {n['text']}")
    print()

bj = json.load(open(f"{work}/bench/bench.json"))
print("## bench --rounds 2, matmul_bench.py --form times")
for rnd in bj["rounds"]:
    for g in rnd["gpus"]:
        print(f"  round {rnd.get('number')}: kept {g['kept']}, left out because {g.get('left_out_because')}, "
              f"window {g.get('window')}, headline {g.get('headline')}")
print()

r = report(f"{work}/duty")
print("## run --duty 2000/4000 --window markers, diescope workload ffma --seconds 12")
print(f"  collection.duty {r['collection']['duty']}")
print(span("run", r["results"]))
print(span("window", r["window"]["results"]))
counters = [l.split() for l in open(f"{work}/duty/gpu0.dsrec") if l.startswith("counters ")]
start = r["results"]["start_ns"]
print("  counters events (s from the command's start): " +
      ", ".join(f"{c[2]} {(int(c[1]) - start) / 1e9:+.3f}" for c in counters))
PY
cat "$OUT/figures.txt"
