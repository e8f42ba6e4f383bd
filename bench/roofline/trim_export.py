#!/usr/bin/env python3
"""An `ncu --import R.ncu-rep --csv --page raw --print-units base` export cut to the columns
`diescope roofline` reads (and the rows asked for), for fixtures and results folders.

    trim_export.py EXPORT [--rows I,J,...] [--columns-from METRICS_FILE] > TRIMMED.csv

Keeps the launch columns (ID, Kernel Name, Block Size, Grid Size), the NVTX columns, the GPU's
name and every metric listed in METRICS_FILE (one a line: `diescope roofline`'s own list is in
docs/roofline.md#metrics); by default every column whose name starts with a metric prefix the table
reads. Lines before the header (ncu's notes) are dropped. Rows are kept by 0-based index.
"""
import argparse
import csv
import sys

KEEP = {"ID", "Kernel Name", "Block Size", "Grid Size", "device__attribute_display_name",
        "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg",
        "Id:Domain:Start/Stop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("export")
    ap.add_argument("--rows", default="")
    ap.add_argument("--columns-from", required=True)
    args = ap.parse_args()
    metrics = {line.strip() for line in open(args.columns_from) if line.strip()}
    lines = open(args.export, newline="").read().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    rows = list(csv.reader(lines[start:]))
    header = rows[0]
    cols = [i for i, h in enumerate(header) if h in KEEP or h in metrics]
    wanted = {int(x) for x in args.rows.split(",") if x} if args.rows else None
    out = csv.writer(sys.stdout, quoting=csv.QUOTE_ALL, lineterminator="\n")
    for n, row in enumerate(rows):
        if n >= 2 and wanted is not None and (n - 2) not in wanted:
            continue
        out.writerow([row[i] for i in cols])


if __name__ == "__main__":
    main()
