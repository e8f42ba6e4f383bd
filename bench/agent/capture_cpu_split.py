#!/usr/bin/env python3
"""The agent's CPU and RSS before, during and after a capture, from triggered_capture.sh's proc CSV.

  bench/agent/capture_cpu_split.py PROC_CSV START_S END_S

PROC_CSV is proc-on.csv (one line a second: seconds since the agent started, its utime+stime in
clock ticks, its reaped children's, VmRSS and VmHWM in kB); START_S and END_S bound the capture in
that file's seconds. Prints one line per span: CPU seconds, percent of one core, RSS at its end.
"""
import csv
import os
import sys


def main():
    path, start, end = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
    tck = os.sysconf("SC_CLK_TCK")
    rows = [{k: float(v) for k, v in r.items()} for r in csv.DictReader(open(path))]

    def at(t):  # the last row at or before t
        best = rows[0]
        for r in rows:
            if r["t_s"] <= t:
                best = r
        return best

    spans = [("before the capture", rows[1]["t_s"], start), ("during the capture", start, end),
             ("its report (1 s after)", end, end + 1.01), ("after", end + 1.01, rows[-1]["t_s"])]
    for name, a, b in spans:
        ra, rb = at(a), at(b)
        dt = rb["t_s"] - ra["t_s"]
        cpu = (rb["self_ticks"] - ra["self_ticks"]) / tck
        pct = 100 * cpu / dt if dt > 0 else float("nan")
        print(f"{name:24s} {ra['t_s']:6.1f}-{rb['t_s']:6.1f} s: agent CPU {cpu:5.2f} s ({pct:5.2f}% of a core), "
              f"RSS at end {rb['rss_kb'] / 1024:5.1f} MiB")


if __name__ == "__main__":
    main()
