#!/usr/bin/env python3
"""A GPM steady window's mean, two ways (docs/method.md#gpm-as-a-second-chip-source), beside PM
sampling's, from the folders bench/run/gpm_edges.sh keeps (runs/NAME-{pm,gpm}/):

  overlap  every used GPM sample that overlaps the window, weighted by its overlap (the rule before
           the refresh lead);
  lead     only samples wholly inside the window that start at least LEAD_MS (default 150) after it,
           whole.

Each run folder needs report.json and samples.csv (`diescope report RECORDING --output DIR` writes
both). Prints one CSV line per workload: the unit, PM's window mean, GPM's by each rule, and the
differences.

  gpm_window.py RUNS_DIR NAME[:UNIT] ...      e.g. ffma66:fp32 dfma:fp64 stream_copy:dram gemm_bf16:tensor
"""
import csv
import json
import os
import sys

LEAD_NS = int(float(os.environ.get("LEAD_MS", "150")) * 1e6)


def window_of(report):
    w = report.get("window") or {}
    return w.get("start_ns"), w.get("end_ns"), w.get("results") or {}


def unit_mean(results, key):
    for u in results.get("units", []):
        if u.get("key") == key:
            return u.get("mean_pct")
    return None


def gpm_means(folder, key):
    report = json.load(open(os.path.join(folder, "report.json")))
    lo, hi, _ = window_of(report)
    rows = [r for r in csv.DictReader(open(os.path.join(folder, "samples.csv"))) if r["use"] == "used"]
    ov_w = ov_s = le_w = le_s = 0.0
    for r in rows:
        s, e, v = int(r["start_ns"]), int(r["end_ns"]), float(r["unit." + key])
        o = min(e, hi) - max(s, lo)
        if o > 0:
            ov_w += o
            ov_s += o * v
        if s >= lo + LEAD_NS and e <= hi:
            le_w += e - s
            le_s += (e - s) * v
    return (ov_s / ov_w if ov_w else None), (le_s / le_w if le_w else None)


def main():
    runs = sys.argv[1]
    print("workload,unit,pm_window,gpm_overlap,gpm_lead,overlap_minus_pm,lead_minus_pm")
    for arg in sys.argv[2:]:
        name, _, key = arg.partition(":")
        pm = json.load(open(os.path.join(runs, f"{name}-pm", "report.json")))
        pm_mean = unit_mean(window_of(pm)[2], key)
        ov, le = gpm_means(os.path.join(runs, f"{name}-gpm"), key)
        f = lambda v: "" if v is None else f"{v:.2f}"
        d = lambda a, b: "" if a is None or b is None else f"{a - b:+.2f}"
        print(f"{name},{key},{f(pm_mean)},{f(ov)},{f(le)},{d(ov, pm_mean)},{d(le, pm_mean)}")


if __name__ == "__main__":
    main()
