#!/usr/bin/env bash
# bench/ncu/unit_means_vs_ncu.sh and its helper on the CPU: the argument checks, the metrics list, and
# the table's maths on a canned report and a canned Nsight Compute CSV (expected values worked out
# below by hand; docs/method.md#comparing-with-nsight-compute).
# With DIESCOPE, also on the report diescope writes for the bundled ResNet-50 recording (a real
# report.json: its chip units, in its order, and no NVML engine).
#   unit_means_vs_ncu_test.sh REPO_ROOT [DIESCOPE]
set -euo pipefail
root=${1:?usage: unit_means_vs_ncu_test.sh REPO_ROOT [DIESCOPE]}
diescope=${2:-}
script=$root/bench/ncu/unit_means_vs_ncu.sh
helper=$root/bench/ncu/unit_means_vs_ncu.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
check() { # check WHAT EXPECTED ACTUAL
  if [ "$2" != "$3" ]; then echo "FAIL $1: expected [$2], got [$3]"; fails=$((fails + 1)); else echo "ok   $1"; fi
}
contains() { # contains WHAT NEEDLE FILE
  if grep -qF -- "$2" "$3"; then echo "ok   $1"; else echo "FAIL $1: no [$2] in"; cat "$3"; fails=$((fails + 1)); fi
}

# Argument checks: each refusal exits 2 and names the cause, before anything runs.
rc=0; bash "$script" "$tmp/out" bogus 2> "$tmp/err" || rc=$?
check "unknown model exits 2" 2 "$rc"; contains "unknown model named" "unknown model 'bogus'" "$tmp/err"
rc=0; STEPS=2 NCU_STEPS=5 bash "$script" "$tmp/out" gpt 2> "$tmp/err" || rc=$?
check "NCU_STEPS > STEPS exits 2" 2 "$rc"; contains "NCU_STEPS named" "NCU_STEPS=5 is more than STEPS=2" "$tmp/err"
rc=0; STEPS=x bash "$script" "$tmp/out" gpt 2> "$tmp/err" || rc=$?
check "bad STEPS exits 2" 2 "$rc"; contains "bad STEPS named" "'x' is not a positive whole number" "$tmp/err"
rc=0; REPLAY=range bash "$script" "$tmp/out" gpt 2> "$tmp/err" || rc=$?
check "bad REPLAY exits 2" 2 "$rc"
rc=0; RUN_FROM=$tmp/none bash "$script" "$tmp/out" gpt 2> "$tmp/err" || rc=$?
check "missing RUN_FROM exits 2" 2 "$rc"; contains "RUN_FROM named" "holds no gpu0.dsrec.report/report.json" "$tmp/err"

# A canned run: a window of 10 steps over 100 us, so 10 us of wall time per step. Three units: FP32
# read through the realtime form of the whole-pipe counter, an FP32 made of the mean of two halves,
# and DRAM; an NVML engine, which has no counter and is left out.
mkdir -p "$tmp/run/gpu0.dsrec.report"
P=.avg.pct_of_peak_sustained_elapsed
cat > "$tmp/run/gpu0.dsrec.report/report.json" <<JSON
{"results": {"unit_recipes": {
   "fp32": {"combine": "counter", "counters": ["TPC.TriageCompute.sm__inst_executed_pipe_fma_realtime$P"]},
   "halves": {"combine": "mean", "counters": ["sm__inst_executed_pipe_fmaheavy_realtime$P", "sm__inst_executed_pipe_fmalite_realtime$P"]},
   "dram": {"combine": "counter", "counters": ["dram__bytes.sum.pct_of_peak_sustained_elapsed"]},
   "nvenc": {"combine": "counter", "counters": ["nvmlDeviceGetEncoderUtilization"]}},
   "units": [{"key": "fp32", "source": "chip"}, {"key": "halves", "source": "chip"},
             {"key": "dram", "source": "chip"}, {"key": "nvenc", "source": "nvml_engine"}]},
 "window": {"found": true, "how": "markers", "results": {"span_s": 0.0001, "chip_covered_s": 0.0001,
   "rates_per_s": {"dram_bytes": 2.5e11},
   "units": [{"key": "fp32", "label": "FP32", "source": "chip", "mean_pct": 12.0},
             {"key": "halves", "label": "FP32 halves", "source": "chip", "mean_pct": 10.0},
             {"key": "dram", "label": "DRAM", "source": "chip", "mean_pct": 25.0},
             {"key": "nvenc", "label": "NVENC", "source": "nvml_engine", "mean_pct": 0.0}]}},
 "hardware": {"sm_clock_mhz": {"mean": 1755.0}}}
JSON
echo '{"workload": "gpt_bf16", "steps": 10}' > "$tmp/run/stdout.txt"

# The metrics list: plain forms, then time, clock, cycles, bytes; the realtime forms only when given
# ncu's list, and only those it lists.
check "metrics list without ncu's list" \
  "sm__inst_executed_pipe_fma$P,sm__inst_executed_pipe_fmaheavy$P,sm__inst_executed_pipe_fmalite$P,dram__bytes.sum.pct_of_peak_sustained_elapsed,gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__cycles_elapsed.avg,dram__bytes.sum" \
  "$(python3 "$helper" metrics "$tmp/run/gpu0.dsrec.report/report.json")"
printf 'Device GH100\nsm__inst_executed_pipe_fma_realtime  Counter  # of warp instructions\n' > "$tmp/available.txt"
check "metrics list" \
  "sm__inst_executed_pipe_fma$P,sm__inst_executed_pipe_fma_realtime$P,sm__inst_executed_pipe_fmaheavy$P,sm__inst_executed_pipe_fmalite$P,dram__bytes.sum.pct_of_peak_sustained_elapsed,gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__cycles_elapsed.avg,dram__bytes.sum" \
  "$(python3 "$helper" metrics "$tmp/run/gpu0.dsrec.report/report.json" "$tmp/available.txt")"

# ncu profiled 2 steps: three kernels of 4, 6 and 2 us (units as ncu may scale them, thousands
# separators as it prints them), over 2 steps = 20 us of wall time.
#   FP32 plain:    (50*4 + 10*6 + 0*2) %*us / 20 us = 260/20 = 13.00; realtime (48*4 + 12*6) = 264 -> 13.20
#   FP32 halves:   heavy (40*4 + 20*6) = 280 -> 14.00, lite (20*4 + 10*2) = 100 -> 5.00, mean 9.50
#   DRAM:          (20*4 + 60*6 + 5*2) = 450 -> 22.50
#   kernel time:   12 us / 2 steps = 0.006 ms; clock 1980 MHz in every kernel; DRAM (1 + 3 + 0.6) MB / 2 = 2.3 MB
#   elapsed SM cycles: (9900 + 11880 + 5940) / 1.98e9 = 14 us over 2 steps = 0.007 ms
#   diescope DRAM: 2.5e11 B/s * 100 us / 10 steps = 2.5 MB
{
  echo '==PROF== Connected to process 1'
  echo '"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"'
  row() { echo "\"$1\",\"k$1\",\"$2\",\"$3\",\"$4\""; }
  row 0 gpu__time_duration.sum nsecond "4,000"; row 0 sm__inst_executed_pipe_fma$P % 50
  row 0 sm__inst_executed_pipe_fma_realtime$P % 48; row 0 sm__inst_executed_pipe_fmaheavy$P % 40
  row 0 sm__inst_executed_pipe_fmalite$P % 20; row 0 dram__bytes.sum.pct_of_peak_sustained_elapsed % 20
  row 0 dram__bytes.sum byte "1,000,000"; row 0 sm__cycles_elapsed.avg cycle "9,900"; row 0 sm__cycles_elapsed.avg.per_second cycle/ns 1.98
  row 1 gpu__time_duration.sum msecond 0.006; row 1 sm__inst_executed_pipe_fma$P % 10
  row 1 sm__inst_executed_pipe_fma_realtime$P % 12; row 1 sm__inst_executed_pipe_fmaheavy$P % 20
  row 1 sm__inst_executed_pipe_fmalite$P % 0; row 1 dram__bytes.sum.pct_of_peak_sustained_elapsed % 60
  row 1 dram__bytes.sum Mbyte 3; row 1 sm__cycles_elapsed.avg cycle 11880; row 1 sm__cycles_elapsed.avg.per_second cycle/second "1,980,000,000"
  row 2 gpu__time_duration.sum ns "2,000"; row 2 sm__inst_executed_pipe_fma$P % 0
  row 2 sm__inst_executed_pipe_fma_realtime$P % 0; row 2 sm__inst_executed_pipe_fmaheavy$P % 0
  row 2 sm__inst_executed_pipe_fmalite$P % 10; row 2 dram__bytes.sum.pct_of_peak_sustained_elapsed % 5
  row 2 dram__bytes.sum byte 600000; row 2 sm__cycles_elapsed.avg cycle 5940; row 2 sm__cycles_elapsed.avg.per_second ghz 1.98
  row 2 smsp__unknown_unit.sum warp 7
  echo '==PROF== Disconnected from process 1'
} > "$tmp/ncu.csv"

# The whole script on the canned run and CSV (fake binaries: nothing runs on a GPU).
mkdir -p "$tmp/build/bin"
for b in diescope diescope-cupti; do printf '#!/bin/sh\nexit 0\n' > "$tmp/build/bin/$b"; chmod +x "$tmp/build/bin/$b"; done
rc=0
BUILD=$tmp/build WORK=$tmp/work RUN_FROM=$tmp/run NCU_FROM=$tmp/ncu.csv NCU_STEPS=2 \
  bash "$script" "$tmp/out" gpt canned > "$tmp/table.md" 2> "$tmp/err" || rc=$?
check "script exit" 0 "$rc"
[ "$rc" = 0 ] || cat "$tmp/err"
contains "FP32 row" "| FP32 | 12.00 | 13.00 | -1.00 | 13.20 |" "$tmp/table.md"
contains "mean-of-two row" "| FP32 halves | 10.00 | 9.50 | 0.50 | n/a |" "$tmp/table.md"
contains "DRAM row" "| DRAM | 25.00 | 22.50 | 2.50 | n/a |" "$tmp/table.md"
contains "time per step" "| 0.010 | 0.006 |" "$tmp/table.md"
contains "clocks" "| 1755 | 1980 |" "$tmp/table.md"
contains "script's clock table at the window's clock" "SM-clock units from busy cycles at 1755 MHz" "$tmp/table.md"
contains "elapsed cycles" "| SM elapsed cycles / SM clock, ms (ncu) | | 0.007 |" "$tmp/table.md"
contains "DRAM bytes" "| DRAM bytes, MB | 2.5 | 2.3 |" "$tmp/table.md"
if grep -q NVENC "$tmp/table.md"; then echo "FAIL an NVML engine has no ncu row"; fails=$((fails + 1)); fi
check "tables.md is the printed table" "$(grep -v "^raw outputs kept" "$tmp/table.md")" "$(cat "$tmp/out/tables.md")"
contains "csv row" "canned (interval 10 ms; ncu kernel replay; cache none),FP32,12.00,13.00,-1.00,13.20" "$tmp/out/unit-means.csv"

contains "an unknown unit is named" "unit 'warp' of smsp__unknown_unit.sum is not known" "$tmp/err"

# A unit subset: only its plain counters and kernel time (and DRAM's byte count), only its rows.
rep=$tmp/run/gpu0.dsrec.report/report.json
check "metrics of DRAM alone" "dram__bytes.sum.pct_of_peak_sustained_elapsed,gpu__time_duration.sum,dram__bytes.sum" \
  "$(python3 "$helper" metrics "$rep" "$tmp/available.txt" --units dram)"
check "metrics of FP32 alone (no realtime form)" "sm__inst_executed_pipe_fma$P,gpu__time_duration.sum" \
  "$(python3 "$helper" metrics "$rep" "$tmp/available.txt" --units fp32)"
python3 "$helper" table --report "$rep" --steps 10 --ncu "$tmp/ncu.csv" --ncu-steps 2 --units dram > "$tmp/dram.md" 2> /dev/null
contains "DRAM alone row" "| DRAM | 25.00 | 22.50 | 2.50 | n/a |" "$tmp/dram.md"
if grep -q "FP32" "$tmp/dram.md"; then echo "FAIL the DRAM subset printed FP32"; fails=$((fails + 1)); fi
rc=0; python3 "$helper" metrics "$rep" --units nvenc 2> "$tmp/err" || rc=$?
check "a unit without counters is refused" 1 "$rc"; contains "its chip units named" "its chip units are fp32, halves, dram" "$tmp/err"

# Busy cycles at one SM clock (--sm-clock-mhz): two kernels of 10 us each over 2 steps (20 us of wall
# time), kernel A at 1980 MHz (19800 elapsed cycles) with FP32 at 4%, kernel B at 1650 MHz (16500) at 16%.
#   time-weighted:            (4*10 + 16*10) / 20 = 10.00
#   busy (percent x cycles):  4*19800 + 16*16500 = 79200 + 264000 = 343200
#   at 1980 MHz:              343200 / 1980 MHz = 173.33 %*us, / 20 us = 8.67; difference 12.00 - 8.67 = 3.33
#   at the window's 1755 MHz: 343200 / 1755 = 195.56 %*us, / 20 us = 9.78
#   clock of the busy cycles: 343200 / (4*10 + 16*10 %*us) = 1716 MHz
#   clock giving diescope's 12.00: 343200 / (20 us x 12) = 1430 MHz
# DRAM is not on the SM clock and has no row.
{
  echo '"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"'
  row() { echo "\"$1\",\"k$1\",\"$2\",\"$3\",\"$4\""; }
  row 0 gpu__time_duration.sum us 10; row 0 sm__inst_executed_pipe_fma$P % 4
  row 0 dram__bytes.sum.pct_of_peak_sustained_elapsed % 20
  row 0 sm__cycles_elapsed.avg cycle 19800; row 0 sm__cycles_elapsed.avg.per_second cycle/ns 1.98
  row 1 gpu__time_duration.sum us 10; row 1 sm__inst_executed_pipe_fma$P % 16
  row 1 dram__bytes.sum.pct_of_peak_sustained_elapsed % 20
  row 1 sm__cycles_elapsed.avg cycle 16500; row 1 sm__cycles_elapsed.avg.per_second cycle/ns 1.65
} > "$tmp/clock.csv"
python3 "$helper" table --report "$rep" --steps 10 --ncu "$tmp/clock.csv" --ncu-steps 2 --units fp32,dram \
  --sm-clock-mhz 1980 --name clk --csv "$tmp/clock-out.csv" > "$tmp/clock.md"
contains "clock table at 1980 MHz" "| FP32 | 12.00 | 10.00 | 8.67 | 3.33 | 1716 | 1430 |" "$tmp/clock.md"
contains "clock table csv" "clk,\"FP32, ncu busy cycles at 1980 MHz\",12.00,8.67,3.33," "$tmp/clock-out.csv"
check "only the SM-clock unit (not DRAM) in the clock table" 1 \
  "$(sed -n '/busy cycles at/,$p' "$tmp/clock.md" | grep -c '^| [A-Z]')"
python3 "$helper" table --report "$rep" --steps 10 --ncu "$tmp/clock.csv" --ncu-steps 2 --units fp32 \
  --sm-clock-mhz window > "$tmp/clock-window.md"
contains "clock table at the window's clock" "| FP32 | 12.00 | 10.00 | 9.78 | 2.22 | 1716 | 1430 |" "$tmp/clock-window.md"
grep -v sm__cycles_elapsed "$tmp/clock.csv" > "$tmp/nocycles.csv"
rc=0; python3 "$helper" table --report "$rep" --steps 10 --ncu "$tmp/nocycles.csv" --ncu-steps 2 --units fp32 \
  --sm-clock-mhz 1980 > /dev/null 2> "$tmp/err" || rc=$?
check "clock table without cycles exits non-zero" 1 "$rc"
contains "missing cycles named" "--sm-clock-mhz needs sm__cycles_elapsed.avg" "$tmp/err"
rc=0; python3 "$helper" table --report "$rep" --steps 10 --ncu "$tmp/clock.csv" --ncu-steps 2 --units fp32 \
  --sm-clock-mhz fast > /dev/null 2> "$tmp/err" || rc=$?
check "a bad clock exits non-zero" 1 "$rc"; contains "bad clock named" "give a clock in MHz or \`window\`" "$tmp/err"

# A report without a window is refused with the fix.
python3 - "$tmp/run/gpu0.dsrec.report/report.json" > "$tmp/nowin.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); r["window"] = {"found": False, "how": "no markers"}; print(json.dumps(r))
PY
rc=0; python3 "$helper" table --report "$tmp/nowin.json" --steps 10 --ncu "$tmp/ncu.csv" --ncu-steps 2 2> "$tmp/err" || rc=$?
check "no window exits non-zero" 1 "$rc"; contains "no window named" "no steady window (no markers)" "$tmp/err"
# An ncu output without CSV rows (ncu profiled nothing) is refused.
echo '==PROF== No kernels were profiled.' > "$tmp/empty.csv"
rc=0; python3 "$helper" table --report "$tmp/run/gpu0.dsrec.report/report.json" --steps 10 --ncu "$tmp/empty.csv" \
  --ncu-steps 2 2> "$tmp/err" || rc=$?
check "empty ncu output exits non-zero" 1 "$rc"; contains "empty ncu named" "ncu profiled no kernel" "$tmp/err"

# SM_CLOCK_MHZ: the script's clock table at a given clock instead of the window's (the canned run's
# FP32 busy cycles 50*9900 + 10*11880 + 0 = 613800 over 20 us of wall time at 1500 MHz: 613800 / 1500 /
# 20 = 20.46; diescope's 12.00 - 20.46 = -8.46; the last column, 613800 / (20 x 12) = 2557.5, is a float tie).
rc=0
BUILD=$tmp/build WORK=$tmp/work RUN_FROM=$tmp/run NCU_FROM=$tmp/ncu.csv NCU_STEPS=2 SM_CLOCK_MHZ=1500 \
  bash "$script" "$tmp/out-clk" gpt canned > "$tmp/table-clk.md" 2> /dev/null || rc=$?
check "script with SM_CLOCK_MHZ exit" 0 "$rc"
contains "SM_CLOCK_MHZ's table" "| FP32 | 12.00 | 13.00 | 20.46 | -8.46 | 1980 |" "$tmp/table-clk.md"

# The SM clock probes' summary (bench/ncu/effective_sm_clock.py --summarise), worked by hand: two
# probes alone of 3,960,000 cycles in 2 ms each (1980 MHz); a window from 1,000 ns to 6,000,000 ns and
# four window probes, of which two lie wholly inside (one starts before it, one ends after it):
# 3,960,000 cycles in 2.2 ms (1800 MHz) and in 2.08 ms (1903.85 MHz): together 7,920,000 cycles in
# 4.28 ms = 1850.47 MHz; median of two is the upper one; 4.28 ms of the 5.999 ms window = 0.7135.
probe=$root/bench/ncu/effective_sm_clock.py
cat > "$tmp/probes.json" <<'JSON'
{"alone": [[3960000, 2000000, 0], [3960000, 2000000, 2000000]],
 "window": [[3960000, 2000000, 900], [3960000, 2200000, 1000], [3960000, 2080000, 3200000], [3960000, 2000000, 5300000]],
 "window_ns": [1000, 6000000]}
JSON
python3 "$probe" --summarise "$tmp/probes.json" > "$tmp/probes.out"
check "probe summary" "1980.00 2 1850.47 2 1800.00 1903.85 1903.85 0.7135" "$(python3 -c 'import json,sys
s=json.load(open(sys.argv[1]))["sm_clock_probes"]
print("%.2f %d %.2f %d %.2f %.2f %.2f %.4f" % (s["alone_mhz"], s["alone_probes"], s["window_mhz"], s["window_probes"],
      s["window_min_mhz"], s["window_median_mhz"], s["window_max_mhz"], s["covered_share"]))' "$tmp/probes.out")"
rc=0; python3 "$probe" --lib "$tmp/none.so" -- workloads/pytorch/gpt_bf16.py 2> "$tmp/err" || rc=$?
check "probe without its library exits non-zero" 1 "$rc"; contains "missing library named" "is not a file; build it with nvcc" "$tmp/err"
rc=0; python3 "$probe" --summarise "$tmp/none.json" 2> "$tmp/err" || rc=$?
check "probe summary of a missing file exits non-zero" 1 "$rc"; contains "missing raw named" "give a file written by --raw" "$tmp/err"

# bench/ncu/mixed_workloads.sh refuses a bad step, a bad budget and a probe without its library
# before it runs anything.
mixed=$root/bench/ncu/mixed_workloads.sh
rc=0; bash "$mixed" "$tmp/mixed" trian 2> "$tmp/err" || rc=$?
check "mixed: unknown step exits 2" 2 "$rc"; contains "mixed: unknown step named" "unknown step 'trian'" "$tmp/err"
rc=0; BUDGET_S=1m bash "$mixed" "$tmp/mixed" train 2> "$tmp/err" || rc=$?
check "mixed: bad BUDGET_S exits 2" 2 "$rc"; contains "mixed: bad budget named" "BUDGET_S=1m" "$tmp/err"
rc=0; BUILD=$tmp/build bash "$mixed" "$tmp/mixed" probe-gpt 2> "$tmp/err" || rc=$?
check "mixed: probe without library exits 2" 2 "$rc"; contains "mixed: library named" "no $tmp/build/libsmclockprobe.so" "$tmp/err"
if [ -e "$tmp/mixed" ]; then echo "FAIL mixed: a refused run created its OUT_DIR"; fails=$((fails + 1)); fi

if [ -n "$diescope" ]; then
  "$diescope" report "$root/data/recordings/h200/resnet50.dsrec" --format json --output "$tmp/real" > /dev/null
  real=$tmp/real/report.json
  check "metrics of a real report: its chip units' plain counters" \
    "dram__bytes.sum.pct_of_peak_sustained_elapsed,sm__inst_executed_pipe_fma$P,sm__pipe_fp64_cycles_active$P,l1tex__m_xbar2l1tex_read_sectors$P,lts__t_bytes$P,l1tex__data_pipe_lsu_wavefronts_mem_lgds$P,sm__pipe_tensor_cycles_active$P,gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__cycles_elapsed.avg,dram__bytes.sum" \
    "$(python3 "$helper" metrics "$real")"
  # One kernel of 14 ms per step at 10% on every counter; the window: 8.0092 s over 285 steps.
  {
    echo '"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"'
    for m in $(python3 "$helper" metrics "$real" | tr , ' '); do
      case $m in
        gpu__time_duration.sum) v=14000000; u=ns ;; sm__cycles_elapsed.avg.per_second) v=1980000000; u=cycle/s ;;
        sm__cycles_elapsed.avg) v=27720000; u=cycle ;; dram__bytes.sum) v=1; u=Gbyte ;; *) v=10; u=% ;;
      esac
      echo "\"0\",\"k\",\"$m\",\"$u\",\"$v\""
    done
  } > "$tmp/real.csv"
  python3 "$helper" table --report "$real" --steps 285 --ncu "$tmp/real.csv" --ncu-steps 1 > "$tmp/real.md"
  # 10% x 14 ms over 8.009238802 s / 285 = 28.102 ms: 4.98; diescope's window means as the report has them
  # (FP32 8.0135 - 4.9817 = 3.03, DRAM 40.9672 - 4.9817 = 35.99).
  check "rows of a real report, in its order" "FP32 Tensor FP64 Load/store L1 fill L2 DRAM" \
    "$(awk -F' [|] ' '/^[|] [A-Z]/ && $3 ~ /^[0-9.]+$/ {printf "%s%s", sep, substr($1, 3); sep=" "}' "$tmp/real.md")"
  contains "real FP32 row" "| FP32 | 8.01 | 4.98 | 3.03 |" "$tmp/real.md"
  contains "real DRAM row" "| DRAM | 40.97 | 4.98 | 35.99 |" "$tmp/real.md"
  contains "real clocks" "| 1980 | 1980 |" "$tmp/real.md"
fi

[ "$fails" = 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "all checks passed"
