#!/usr/bin/env python3
"""The comparison table of ncu_cache_control.sh's OUT_DIR.

    ncu_cache_control.py OUT_DIR > cache-control.csv

Rows: the triad under ncu flushed and kept (kept / flushed), and ResNet-50's regions under ncu kept
(the profiled step, launches added) against the range profiler's step 3 (range / ncu kept), on the
measures both tables hold.
"""
import csv
import os
import sys

from resnet50_bytes import step_rows  # beside this script

MEASURES = ["launches", "caches", "bytes dram [B]", "bytes l2 [B]", "work fp32 [FLOP]", "work tensor tf32 [FLOP]",
            "duration [s]"]


def rows(path):
    return list(csv.DictReader(open(path)))


def ratio(a, b):
    try:
        a, b = float(a), float(b)
    except ValueError:
        return ""
    return f"{a / b:.5f}" if b else ""


def main():
    d = sys.argv[1]
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(["workload", "region", "measure", "a", "b", "a/b"])
    flushed, kept = rows(os.path.join(d, "triad-flushed.csv")), rows(os.path.join(d, "triad-kept.csv"))
    for f, k in zip(flushed, kept):
        for m in MEASURES:
            w.writerow(["triad: a ncu kept, b ncu flushed", f["region"], m, k[m], f[m], ratio(k[m], f[m])])
    ncu = {r["region"]: r for r in rows(os.path.join(d, "resnet-ncu-kept.csv"))}
    for region, rng in step_rows(os.path.join(d, "resnet-range.csv")).items():  # step 3: the step ncu profiles
        if region not in ncu:
            continue
        for m in MEASURES:
            w.writerow(["ResNet-50 step 3: a range, b ncu kept", region, m, rng[m], ncu[region][m],
                        ratio(rng[m], ncu[region][m])])


if __name__ == "__main__":
    main()
