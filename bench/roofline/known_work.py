#!/usr/bin/env python3
"""Each bundled workload's FLOPs and bytes from `diescope roofline profile` beside the work it counts.

    known_work.py PROFILE_DIR > known-work.csv

PROFILE_DIR holds roofline-launches.csv and each target's <name>.ncu.log (the workload's own JSON
lines are in it). For each workload, the last launch of its main kernel is compared with the work
one such launch does by the workload's own count (and the distance to the roof of the kernel's
longest launch is given beside it):
  ffma   2 x ffma_per_thread_per_launch x threads            against work fp32
  triad  bytes_per_launch                                     against bytes dram
  gemm   flops_per_call (2 m n k)                             against work tensor bf16
  dfma   work (DFMA warp instructions) / launch_count x 32 x 2  against work fp64
"""
import csv
import json
import os
import sys

MAIN = {"ffma": ("ffma_kernel", "work fp32 [FLOP]"), "triad": ("stream_triad_kernel", "bytes dram [B]"),
        "gemm": ("nvjet", "work tensor bf16 [FLOP]"), "dfma": ("dfma_kernel", "work fp64 [FLOP]")}


def counted(name, lines):
    for d in lines:
        if name == "ffma" and d.get("workload") == "ffma":
            return 2 * d["work"]["ffma_per_thread_per_launch"] * d["work"]["threads"], "2 x FFMA per thread x threads"
        if name == "triad" and d.get("workload") == "stream":
            return d["work"]["bytes_per_launch"], "3 x elements x 4 bytes"
        if name == "gemm" and d.get("workload") == "gemm":
            return d["work"]["flops_per_call"], "2 m n k"
        if name == "dfma" and d.get("calibrate") == "step":
            return d["work"] / d["launch_count"] * 32 * 2, "DFMA warp instructions x 32 x 2 per launch"
    return None, ""


def main():
    d = sys.argv[1]
    rows = list(csv.DictReader(open(os.path.join(d, "roofline-launches.csv"))))
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["workload", "kernel", "launch", "measure", "ncu", "counted", "ratio", "counted as",
                  "performance [FLOP/s]", "roof from", "of roof [%]", "launches",
                  "longest launch: duration [s]", "longest launch: of roof [%]"])
    for name, (kernel, column) in MAIN.items():
        lines = []
        for line in open(os.path.join(d, name + ".ncu.log"), errors="replace"):
            if line.startswith("{"):
                try:
                    lines.append(json.loads(line))
                except json.JSONDecodeError:
                    pass
        mine = [r for r in rows if r["executable"] == name and kernel in r["kernel"]]
        want, how = counted(name, lines)
        if not mine or want is None:
            out.writerow([name, kernel, "", column, "", "", "", "not found", "", "", "", "", "", ""])
            continue
        r = mine[-1]
        got = float(r[column])
        longest = max(mine, key=lambda x: float(x["duration [s]"]))
        out.writerow([name, r["kernel"][:60], r["launch [id]"], column, f"{got:.6g}", f"{want:.6g}",
                      f"{got / want:.5f}", how, f'{float(r["performance [FLOP/s]"]):.4g}', r["roof from"],
                      f'{float(r["of roof [%]"]):.1f}', len(mine), longest["duration [s]"],
                      f'{float(longest["of roof [%]"]):.1f}'])


if __name__ == "__main__":
    main()
