#!/usr/bin/env python3
"""A roofline.csv cut to the columns a results README quotes (the full table has about 70).

    table_columns.py roofline.csv > small.csv
"""
import csv
import sys

KEEP = ["executable", "region", "kernel", "launches", "duration [s]", "sm clock [Hz]", "precision",
        "work fp32 [FLOP]", "work fp64 [FLOP]", "work tensor bf16 [FLOP]", "work tensor tf32 [FLOP]",
        "bytes dram [B]", "bytes l2 [B]", "intensity dram [FLOP/B]", "performance [FLOP/s]",
        "roof [FLOP/s]", "roof from", "of roof [%]"]


def main():
    rows = list(csv.DictReader(open(sys.argv[1])))
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(KEEP)
    for r in rows:
        out.writerow([r[k][:70] if k == "kernel" else r[k] for k in KEEP])


if __name__ == "__main__":
    main()
