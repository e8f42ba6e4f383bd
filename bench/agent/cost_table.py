#!/usr/bin/env python3
"""Slowdown of each agent setting from bench/agent/cost_rounds.sh's raw rounds.

    python3 bench/agent/cost_table.py RAW_FOLDER [RAW_FOLDER...]

A round's throughput is the training steps finished between the first progress line at or after the
round's start and the last one at or before its end, over the wall time between those two lines. Each
setting's slowdown in round r is 1 - throughput(setting, r) / throughput(off, r): paired with the
"off" round of the same set, so slow drift of the machine cancels. The 95% interval of the mean
slowdown is Student's t with rounds - 1 degrees of freedom. Last, the throughput in 5 s bins over the
whole run, each bin labelled with the round it lies in ("-" between rounds), to show how much the
workload moves by itself. Several folders (runs of the same design) pool their rounds into one
interval; their rounds are numbered FOLDER.ROUND.
"""
import json
import math
import pathlib
import statistics
import sys

# Student's t, two-sided 95% (the 0.975 quantile), for 1 to 10 degrees of freedom; standard table
# values, so the script needs nothing beyond Python.
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228,
        11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110, 18: 2.101, 19: 2.093, 20: 2.086}


def progress(path):
    points = []
    for line in path.read_text().splitlines():
        if line.startswith("{") and '"progress"' in line:
            p = json.loads(line)["progress"]
            points.append((p["wall_s"], p["steps"]))
    return points


def throughput(points, start, end):
    inside = [p for p in points if start <= p[0] <= end]
    if len(inside) < 2:
        raise SystemExit(f"fewer than 2 progress lines between {start} and {end}")
    (t0, s0), (t1, s1) = inside[0], inside[-1]
    return (s1 - s0) / (t1 - t0), t1 - t0


def main():
    folders = [pathlib.Path(a) for a in sys.argv[1:]]
    if not folders:
        raise SystemExit("usage: cost_table.py RAW_FOLDER [RAW_FOLDER...]")
    rounds = {}
    for k, raw in enumerate(folders, start=1):
        points = progress(raw / "train.log")
        for line in (raw / "rounds.txt").read_text().split("\n"):
            if not line.strip():
                continue
            r, setting, start, end = line.split()
            steps_per_s, span = throughput(points, float(start), float(end))
            key = (k, int(r)) if len(folders) > 1 else (0, int(r))
            rounds.setdefault(key, {})[setting] = (steps_per_s, span)
    print("round  setting  steps/s  measured_s  slowdown_pct")
    slowdowns = {}
    for key in sorted(rounds):
        name = f"{key[0]}.{key[1]}" if key[0] else str(key[1])
        off = rounds[key]["off"][0]
        for setting, (rate, span) in sorted(rounds[key].items()):
            slow = 100.0 * (1.0 - rate / off) if setting != "off" else 0.0
            if setting != "off":
                slowdowns.setdefault(setting, []).append(slow)
            print(f"{name:>5s}  {setting:7s}  {rate:7.4f}  {span:10.1f}  {slow:12.3f}")
    print()
    print("setting  rounds  mean_slowdown_pct  sd  t95_lo  t95_hi")
    for setting, values in sorted(slowdowns.items()):
        n = len(values)
        mean = statistics.fmean(values)
        sd = statistics.stdev(values) if n > 1 else math.nan
        half = T975[n - 1] * sd / math.sqrt(n) if n > 1 else math.nan
        print(f"{setting:7s}  {n:6d}  {mean:17.3f}  {sd:.3f}  {mean - half:.3f}  {mean + half:.3f}")
    for raw in folders:
        print()
        if len(folders) > 1:
            print(f"# {raw}")
        print_bins(progress(raw / "train.log"), raw / "rounds.txt")


def print_bins(points, rounds_path, width_s=5.0):
    spans = [line.split() for line in rounds_path.read_text().splitlines() if line.strip()]

    def label(t):
        for r, setting, start, end in spans:
            if float(start) <= t <= float(end):
                return f"{r} {setting}"
        return "-"

    print(f"t_s     steps/s  round (bins of {width_s:g} s from the first progress line)")
    t0 = points[0][0]
    i = 0
    while True:
        j = i
        while j < len(points) and points[j][0] - points[i][0] < width_s:
            j += 1
        if j >= len(points):
            break
        rate = (points[j][1] - points[i][1]) / (points[j][0] - points[i][0])
        print(f"{points[i][0] - t0:6.1f}  {rate:7.2f}  {label(points[i][0])}")
        i = j


if __name__ == "__main__":
    main()
