#!/usr/bin/env python3
"""Nsight Compute's --csv output cut to one small table.

    ncu_table.py NAME=NCU_OUTPUT ...

NCU_OUTPUT is what `ncu --csv --metrics ...` printed: the profiled program's own lines, ncu's
==PROF== lines and the CSV rows (one per kernel launch and metric). Prints one CSV: name (the label
given), launch (ncu's ID), kernel, metric, unit, value; the other lines are left out.
"""
import csv
import sys


def main():
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["name", "launch", "kernel", "metric", "unit", "value"])
    for arg in sys.argv[1:]:
        name, _, path = arg.partition("=")
        rows = [line for line in open(path, errors="replace") if line.startswith('"')]
        for row in csv.DictReader(rows):
            out.writerow([name, row["ID"], row["Kernel Name"], row["Metric Name"], row["Metric Unit"],
                          row["Metric Value"]])


if __name__ == "__main__":
    main()
