#!/usr/bin/env python3
"""The held-out checks of bench/footprint/footprint.py as one table: per interval and window, what
the workload counted itself beside what diescope read over its window.

    heldout_table.py OUT_DIR WORK_DIR      (writes OUT_DIR/heldout_table.tsv)

FFMA: the FMA pipe percent the kernel's own count implies (`expected_fma_pipe_pct`) beside FP32.
STREAM and the L2-resident copy: the kernel's own GB/s beside DRAM bytes per second (the
`dram_bytes` count over each sample's interval) and the L2 and DRAM percents.
"""
import csv
import json
import os
import sys

out_dir, work = sys.argv[1], sys.argv[2]
means = list(csv.DictReader(open(os.path.join(out_dir, "heldout_means.tsv")), delimiter="\t"))
rows = []
for interval in sorted({r["interval_ms"] for r in means}, key=float, reverse=True):
    own = [json.loads(l) for l in open(os.path.join(work, f"heldout-{interval}ms.out")) if l.startswith("{")]
    windows = [r for r in means if r["interval_ms"] == interval]
    for w, o in zip(windows, own):
        res = o["result"]
        if o["workload"] == "ffma":
            rows.append([interval, w["window"], w["samples"], "FMA pipe % (own count)", f"{res['expected_fma_pipe_pct']:.2f}",
                         "FP32 %", w["fp32"]])
        else:
            gbs = float(w["dram_bytes"]) / (float(interval) * 1e-3) / 1e9
            rows.append([interval, w["window"], w["samples"], "GB/s (own count)", f"{res['gb_per_s']:.1f}",
                         "DRAM GB/s | DRAM % | L2 %", f"{gbs:.1f} | {w['dram']} | {w['l2']}"])
with open(os.path.join(out_dir, "heldout_table.tsv"), "w") as f:
    f.write("interval_ms\twindow\tsamples\town_measure\town\tdiescope_measure\tdiescope\n")
    for r in rows:
        f.write("\t".join(str(x) for x in r) + "\n")
