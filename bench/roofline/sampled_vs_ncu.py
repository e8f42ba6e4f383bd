#!/usr/bin/env python3
"""The three backends on range_regions --long, per launch: what sampled_backend.sh left in OUT_DIR.

    sampled_vs_ncu.py OUT_DIR > rows.csv

OUT_DIR holds ncu.csv (--aggregate sum over --reps 2: divided by its launches), range.csv (one row
per region over --reps 2: divided by its launches) and sampled.csv (two-point, -O iterations=5: per
iteration already); ncu-sgemm.csv, range-sgemm.csv and sampled-sgemm.csv, where step 6 (SGEMM=1)
wrote them, add the fp32 GEMM's rows. Prints CSV rows `workload,region,measure,range,ncu,range/ncu,sampled,sampled/ncu`
for the duration and the DRAM bytes, and each region's analytic work beside the FLOPs ncu counted.
"""
import csv
import os
import sys

MEASURES = [("duration [s]", "duration [s]"), ("bytes dram [B]", "bytes dram [B]")]
WORK = {"ffma": "work fp32 [FLOP]", "triad": "work fp32 [FLOP]", "gemm": "work tensor bf16 [FLOP]",
        "sgemm": "work fp32 [FLOP]"}


def per_launch(path, divide):
    out = {}
    if not os.path.exists(path):
        return out
    for r in csv.DictReader(open(path)):
        n = int(r["launches"]) if divide else 1
        out[r["region"]] = {k: (float(v) / n if v not in ("", None) else None) for k, v in r.items()
                            if k in ("duration [s]", "bytes dram [B]", *WORK.values())}
    return out


def fmt(v):
    return "" if v is None else f"{v:.6g}"


def ratio(a, b):
    return "" if a is None or b in (None, 0) else f"{a / b:.5f}"


def main():
    d = sys.argv[1]
    ncu, rng, smp = {}, {}, {}
    for suffix in ("", "-sgemm"):
        ncu.update(per_launch(os.path.join(d, f"ncu{suffix}.csv"), True))
        rng.update(per_launch(os.path.join(d, f"range{suffix}.csv"), True))
        smp.update(per_launch(os.path.join(d, f"sampled{suffix}.csv"), False))
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["workload", "region", "measure", "range", "ncu", "range/ncu", "sampled", "sampled/ncu"])
    for region in [r for r in WORK if r in ncu or r in smp]:
        rows = list(MEASURES) + [(WORK[region], WORK[region])]
        for name, col in rows:
            a, b, c = rng.get(region, {}).get(col), ncu.get(region, {}).get(col), smp.get(region, {}).get(col)
            out.writerow(["long, per launch", region, name, fmt(a), fmt(b), ratio(a, b), fmt(c), ratio(c, b)])


if __name__ == "__main__":
    main()
